package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/rueidis"
	"golang.org/x/sync/errgroup"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/worker"
)

// daemon is what courier run and courier dev share: a configuration, a way
// to reach Redis, and the logger.
type daemon struct {
	cfg *config.Config
	log *slog.Logger
	// connect returns the Redis client; it may wait and retry until ctx ends.
	connect func(ctx context.Context) (rueidis.Client, error)
	// listening, if set, is told the HTTP address once it is bound.
	listening func(addr string)
	// waiting holds the error connect is waiting out (see waitingFor), for
	// /readyz; nil when it is not waiting.
	waiting atomic.Pointer[error]
}

// waitingFor records the error connect waits out; nil ends the wait.
func (d *daemon) waitingFor(reason error) {
	if reason == nil {
		d.waiting.Store(nil)
		return
	}
	d.waiting.Store(&reason)
}

// serve runs the daemon until ctx ends, then drains. The stop order:
//  1. ctx ends (SIGTERM / SIGINT): /readyz turns 503, the queues' leader
//     locks are released at once (followers take over within milliseconds)
//     and the pool stops claiming;
//  2. running jobs finish, up to shutdown.timeout; the rest are cancelled and
//     handed back due without spending an attempt; acks are flushed;
//  3. the HTTP servers stop (they served /metrics, probes and the API
//     during the drain);
//  4. the Redis client closes;
//  5. with tracing on, the spans still buffered are exported (at most
//     tracingFlushTimeout): the drain's last attempts and the API's last
//     enqueues are in them.
func (d *daemon) serve(ctx context.Context) error {
	reg, err := d.cfg.Registry(d.log)
	if err != nil {
		return err
	}
	tp, flushTraces, err := osTracing(ctx, d.cfg.Tracing, d.log)
	if err != nil {
		return err
	}
	defer flushTraces() // deferred first, so it runs last (step 5)
	var pool atomic.Pointer[worker.Daemon]
	ready := func(rctx context.Context) error {
		if ctx.Err() != nil {
			return errors.New("draining")
		}
		// Until the pool runs, the reason is what the start waits out:
		// Redis unreachable, LOADING, CLUSTERDOWN, a failover.
		p := pool.Load()
		if p == nil {
			if r := d.waiting.Load(); r != nil {
				return fmt.Errorf("waiting for Redis: %w", *r)
			}
			return errors.New("connecting to Redis")
		}
		if !p.Running() {
			if r := p.Waiting(); r != nil {
				return fmt.Errorf("waiting for Redis: %w", r)
			}
			return errors.New("worker pool not running")
		}
		if err := p.Ping(rctx); err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		return nil
	}
	metrics := newMetricsRegistry()
	admin, err := d.newAdminAPI(metrics)
	if err != nil {
		return err
	}
	listeners, err := d.listen(ready, metrics, admin)
	if err != nil {
		return err
	}
	if d.listening != nil {
		d.listening(listeners[0].Addr())
	}

	g, gctx := errgroup.WithContext(ctx)
	// HTTP outlives the drain, so probes and scrapes keep answering.
	httpCtx, stopHTTP := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHTTP()
	for _, srv := range listeners {
		g.Go(func() error { return srv.Run(httpCtx) })
	}
	g.Go(func() error {
		defer stopHTTP()
		rdb, err := d.connect(gctx)
		if err != nil {
			if gctx.Err() != nil {
				d.log.Info("stopped before Redis was reached")
				return nil
			}
			return err
		}
		defer rdb.Close()
		wcfg := d.cfg.Worker(d.log)
		wcfg.Registerer = metrics
		wcfg.Version = version
		wcfg.TracerProvider = tp // the API's enqueues and the daemon's attempts; nil when off
		if err := admin.connected(rdb, wcfg); err != nil {
			return err
		}
		defer admin.client.Store(nil) // before rdb.Close: API calls get 503, not errors
		w, err := worker.NewDaemon(rdb, reg, wcfg)
		if err != nil {
			return err
		}
		pool.Store(w)
		if err := w.Run(gctx); err != nil {
			if gctx.Err() != nil {
				d.log.Info("stopped while starting", "err", err)
				return nil
			}
			return err
		}
		if s, ok := w.Drained(); ok {
			d.log.Info("drained", "finished", s.Finished, "returned", s.Returned,
				"note", "returned jobs are due again with their attempt unspent")
		}
		return nil
	})
	return g.Wait()
}

// newMetricsRegistry returns the registry /metrics serves: the Go runtime,
// the process, and courier_build_info.
func newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "courier_build_info",
			Help:        "Always 1; the labels say which build of courier runs.",
			ConstLabels: prometheus.Labels{"version": worker.Version, "revision": revision, "goversion": runtime.Version()},
		}, func() float64 { return 1 }),
	)
	return reg
}
