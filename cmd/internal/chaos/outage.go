package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Daemons restarted while Redis cannot serve them (issue 29, item 12):
// each one must come up, wait (its /readyz says why), and be ready soon
// after Redis answers again, however long it waited.
const (
	// outageHold is how long Redis stays down once the daemons were
	// restarted: long enough for their waits to back off to the cap (0.5 s
	// between attempts), so the time to ready measured is the slow case.
	outageHold = 3 * time.Second
	// readyWithin bounds the time from Redis answering again until every
	// restarted daemon is ready.
	readyWithin = 2 * time.Second
	// waitSeenWithin bounds the time a restarted daemon takes to answer
	// /readyz 503 "waiting for Redis": the process starts, binds its
	// listeners, and meets Redis's absence.
	waitSeenWithin = 3 * time.Second
)

// restartDuringOutage kills Redis (SIGKILL, AOF always), kills and starts
// every daemon while it is down, keeps it down outageHold more, then
// starts it again and measures how soon each daemon is ready.
func restartDuringOutage(ctx context.Context, w *world, p Plan) error {
	return w.episodes(ctx, p.Episodes, 3*time.Second, func(ctx context.Context, _ int) error {
		start := time.Now()
		w.redis.Kill()
		if err := w.restartDaemons(); err != nil {
			return err
		}
		seen := w.seeWaiting(ctx)
		pause(ctx, outageHold-time.Since(start))
		err := w.redis.Restart(ctx)
		back := time.Now()
		f := Fault{Kind: "restart of every daemon during kill -9 of", Target: "redis (appendfsync " + w.fsync + ")",
			Start: start, End: back, Back: back, Note: seen}
		if err != nil {
			w.fault(f)
			return err
		}
		f.Ready, err = w.readyAfter(ctx, back)
		w.fault(f)
		return err
	})
}

// restartDuringFailover kills the master of the target partition's slot
// (SIGKILL), kills and starts every daemon before its replica is promoted
// (the daemons meet refused connections, then CLUSTERDOWN), and measures,
// from the promotion the suite saw, how soon each daemon is ready and the
// partitions' processing resumed. The old master rejoins as a replica
// rejoinAfter later.
func restartDuringFailover(ctx context.Context, w *world, p Plan) error {
	return w.episodes(ctx, p.Episodes, 3*time.Second, func(ctx context.Context, i int) error {
		master, err := w.cluster.MasterOf(ctx, w.slot)
		if err != nil {
			return err
		}
		cut := w.partitionsOn(ctx, master)
		if _, err := w.seed(ctx, i, cut); err != nil {
			return err
		}
		start := time.Now()
		master.Kill()
		if err := w.restartDaemons(); err != nil {
			return err
		}
		seen := w.seeWaiting(ctx)
		promoted, err := w.cluster.waitPromoted(ctx, w.slot, master)
		back := time.Now()
		f := Fault{Kind: "restart of every daemon during kill -9 of master", Target: master.Addr, Start: start, End: start,
			Partitions: cut, Note: seen}
		if err != nil {
			w.fault(f)
			return err
		}
		f.Back = back
		f.Note = fmt.Sprintf("%s promoted after %s; %s", promoted.Addr, roundDur(back.Sub(start)), seen)
		f.Ready, err = w.readyAfter(ctx, back)
		w.fault(f)
		if err != nil {
			return err
		}
		pause(ctx, rejoinAfter)
		return w.cluster.Rejoin(ctx, master)
	})
}

// restartDaemons kills every daemon (SIGKILL, as a crash or an impatient
// supervisor does) and starts it again at once.
func (w *world) restartDaemons() error {
	for _, d := range w.daemons {
		d.Kill()
		if err := d.Start(); err != nil {
			return err
		}
	}
	return nil
}

// seeWaiting waits, up to waitSeenWithin, until every daemon answers
// /readyz 503 with a reason that says it waits for Redis, and says what it
// saw for the episode's note. A daemon that exited instead, or did not say
// it waits, breaks the promise.
func (w *world) seeWaiting(ctx context.Context) string {
	reasons := make([]string, len(w.daemons))
	_ = until(ctx, waitSeenWithin, 20*time.Millisecond, "daemons waiting", func(ctx context.Context) (bool, error) {
		all := true
		for i, d := range w.daemons {
			if reasons[i] != "" {
				continue
			}
			code, reason, err := d.Readyz(ctx)
			if err == nil && code == http.StatusServiceUnavailable && strings.HasPrefix(reason, "waiting for Redis") {
				reasons[i] = reason
				continue
			}
			all = false
		}
		return all, nil
	})
	n, sample := 0, ""
	for i, r := range reasons {
		if r == "" {
			w.ledger.Break(fmt.Sprintf("%s did not say it waits for Redis within %s of its start", w.daemons[i].ID(), waitSeenWithin))
			continue
		}
		n++
		sample = r
	}
	return fmt.Sprintf("%d of %d restarted daemons said %q", n, len(w.daemons), clip(sample, 120))
}

// readyAfter waits until every daemon is ready and returns each one's time
// from back until its /readyz answered 200 (polled every 50 ms).
func (w *world) readyAfter(ctx context.Context, back time.Time) ([]time.Duration, error) {
	ready := make([]time.Duration, len(w.daemons))
	errs := make([]error, len(w.daemons))
	var wg sync.WaitGroup
	for i, d := range w.daemons {
		wg.Go(func() {
			errs[i] = d.WaitReady(ctx)
			ready[i] = time.Since(back)
		})
	}
	wg.Wait()
	return ready, errors.Join(errs...)
}

// waitPromoted waits until a running master other than killed serves slot
// and returns it.
func (c *Cluster) waitPromoted(ctx context.Context, slot int, killed *Redis) (promoted *Redis, err error) {
	err = until(ctx, clusterTimeout, 50*time.Millisecond, "a replica takes slot "+strconv.Itoa(slot)+" over",
		func(ctx context.Context) (bool, error) {
			m, err := c.MasterOf(ctx, slot)
			if err == nil && m != killed {
				promoted = m
				return true, nil
			}
			return false, err
		})
	return promoted, err
}

// clip shortens s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
