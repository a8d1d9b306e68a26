package ui_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// BenchmarkQueuePage is a queue's page of 50 jobs, server time, on real
// Redis: a queue of 1,000,000 jobs (half ready, half scheduled), and the
// dead tab of a queue of 10,000 dead jobs filtered by error text, which
// pages through the dead set rather than reading it whole: "common"
// matches one job in ten, "rare" one in 10,000 (a page then looks at up
// to 10,000 dead jobs and may come back short, with a cursor).
func BenchmarkQueuePage(b *testing.B) {
	rdb := testkit.Single(b)
	prefix := testkit.Prefix(b)
	client, err := admin.NewClient(rdb, worker.Config{Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	specs := make([]worker.JobSpec, 1000)
	for range 1000 {
		for i := range specs {
			specs[i] = worker.JobSpec{Queue: "big", Payload: []byte(`{"order":42,"customer":"c-1"}`)}
			if i%2 == 0 {
				specs[i].Delay = time.Hour
			}
		}
		if _, err := client.Enqueue(ctx, specs); err != nil {
			b.Fatal(err)
		}
	}
	killAll(b, prefix, client, "graveyard", 10_000)

	h := fakeUI(b, client)
	c := loginCookie(b, h)
	for _, bm := range []struct{ name, path, want string }{
		{"ready", "/ui/queues/big", `data-job-id=`},
		{"scheduled", "/ui/queues/big?state=scheduled", `data-job-id=`},
		{"dead", "/ui/queues/graveyard?state=dead", `data-job-id=`},
		{"dead common", "/ui/queues/graveyard?state=dead&error=timeout", `data-job-id=`},
		{"dead rare", "/ui/queues/graveyard?state=dead&error=disk+full", `data-job-id=`},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, bm.path, nil)
				req.AddCookie(c)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), bm.want) {
					b.Fatalf("%s: %d %.300s", bm.path, rec.Code, rec.Body)
				}
				if n := strings.Count(rec.Body.String(), "<tr data-job-id="); n > 50 {
					b.Fatalf("%s: %d jobs on a page", bm.path, n)
				}
			}
		})
	}
}

// killAll makes n jobs of queue dead through a daemon whose handler fails
// each for good: "timeout" one job in ten, "disk full" one in 10,000,
// "refused" the others.
func killAll(b *testing.B, prefix string, client *admin.Client, queue string, n int) {
	b.Helper()
	ctx := b.Context()
	specs := make([]worker.JobSpec, 1000)
	for off := 0; off < n; off += len(specs) {
		for i := range specs {
			specs[i] = worker.JobSpec{Queue: queue, ID: fmt.Sprintf("job-%06d", off+i)}
		}
		if _, err := client.Enqueue(ctx, specs); err != nil {
			b.Fatal(err)
		}
	}
	reg := worker.NewRegistry()
	err := reg.Register(queue, worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		var k int
		_, _ = fmt.Sscanf(j.ID, "job-%d", &k)
		switch {
		case k%10_000 == 7:
			return worker.Permanent(errors.New("write: disk full"))
		case k%10 == 3:
			return worker.Permanent(errors.New("upstream timeout after 30s"))
		}
		return worker.Permanent(errors.New("connection refused"))
	}), worker.QueueOptions{Concurrency: 64})
	if err != nil {
		b.Fatal(err)
	}
	d, err := worker.NewDaemon(testkit.Single(b), reg, worker.Config{Prefix: prefix, Logger: slog.New(slog.DiscardHandler), DeadMaxJobs: n})
	if err != nil {
		b.Fatal(err)
	}
	dctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(dctx)
	}()
	testkit.Eventually(b, 2*time.Minute, "every job dead", func() bool {
		s, err := client.Stats(ctx, queue)
		return err == nil && s.Dead == int64(n)
	})
	cancel()
	<-done
}
