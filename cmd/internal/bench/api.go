package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// api enqueues n jobs through the HTTP API's batch endpoint: an API server
// on a local port in this process, on the bench's Redis, and --clients
// HTTP clients sending --batch jobs per request (JSON payloads of
// --payload bytes). It reports requests and jobs per second and the
// latency of a request as the client sees it (encoding, HTTP, decoding,
// validation and the Redis call).
func (b *bench) api(ctx context.Context) (string, error) {
	o := b.opts
	producer, err := admin.NewClient(b.counted, b.config())
	if err != nil {
		return "", err
	}
	secret := randomHex(16)
	h, err := api.New(api.Options{
		Backend: func() admin.Operator { return producer },
		Tokens:  []api.Token{{Name: "bench", Secret: secret, Role: api.RoleProducer}},
		Logger:  slog.New(slog.NewTextHandler(b.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	client, err := api.NewClient("http://"+ln.Addr().String(), secret, &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: o.clients},
		Timeout:   time.Minute,
	})
	if err != nil {
		return "", err
	}

	// A JSON string of --payload bytes, the requests' bodies built ahead.
	payload := []byte(`"` + strings.Repeat("x", max(o.payload-2, 0)) + `"`)
	var requests [][]worker.JobSpec
	for done := 0; done < o.n; done += o.batch {
		specs := make([]worker.JobSpec, min(o.batch, o.n-done))
		for i := range specs {
			specs[i] = worker.JobSpec{Queue: queue, Payload: payload}
		}
		requests = append(requests, specs)
	}
	// One small request first, so that connections and the script are warm.
	if _, err := client.Enqueue(ctx, []worker.JobSpec{{Queue: queue, Payload: payload}}); err != nil {
		return "", fmt.Errorf("enqueue through the API: %w", err)
	}

	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, len(requests))
		created   int
		firstErr  error
	)
	next := make(chan []worker.JobSpec)
	var wg sync.WaitGroup
	calls := b.counted.n.Load()
	start := time.Now()
	for range o.clients {
		wg.Go(func() {
			for specs := range next {
				t0 := time.Now()
				res, err := client.Enqueue(ctx, specs)
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				for _, r := range res {
					if r.Err == nil {
						created++
					}
				}
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, specs := range requests {
		next <- specs
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	redisCmds := b.counted.n.Load() - calls
	if firstErr != nil {
		return "", fmt.Errorf("enqueue through the API: %w", firstErr)
	}
	if created != o.n {
		return "", fmt.Errorf("%w: %d of %d jobs created", errIncomplete, created, o.n)
	}
	s, err := producer.Stats(ctx, queue)
	if err != nil {
		return "", err
	}
	if s.Ready != int64(o.n)+1 {
		return "", errors.New("the queue does not hold every job enqueued")
	}
	slices.Sort(latencies)
	return fmt.Sprintf("mode=api n=%d batch=%d clients=%d requests=%d requests_per_s=%.0f jobs_per_s=%.0f latency_p50_ms=%s latency_p99_ms=%s latency_max_ms=%s redis_cmds_per_request=%.2f",
		o.n, o.batch, o.clients, len(requests),
		float64(len(requests))/elapsed.Seconds(), float64(o.n)/elapsed.Seconds(),
		ms(percentile(latencies, 50)), ms(percentile(latencies, 99)), ms(latencies[len(latencies)-1]),
		float64(redisCmds)/float64(len(requests))), nil
}
