// Command example-app is a service that both produces and runs jobs, the
// trial program of a new user: two typed handlers sharing one queue (job
// kinds), typed producers, a priority, a unique key, a periodic job, a
// cancel, progress and a result. It starts a Daemon beside its own code,
// enqueues, follows one job to its result, and drains on SIGTERM:
//
//	REDIS_ADDR=127.0.0.1:6379 go run ./cmd/example-app
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Resize asks for a thumbnail of an image; Digest for a summary email.
// Their Kind methods route them to their handlers in the one queue.
type Resize struct {
	Image string `json:"image"`
	Width int    `json:"width"`
}

func (Resize) Kind() string { return "image.resize" }

type Digest struct {
	To string `json:"to"`
}

func (Digest) Kind() string { return "email.digest" }

// resize reports its progress and returns the thumbnail's address.
func resize(ctx context.Context, job *worker.Job, r Resize) error {
	for pct := 25.0; pct <= 100; pct += 25 {
		select {
		case <-time.After(300 * time.Millisecond): // the work
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if err := job.ReportProgress(pct, "resizing "+r.Image); err != nil {
			return err
		}
	}
	return job.SetResult(fmt.Appendf(nil, `{"url":"https://cdn.example.com/%d/%s"}`, r.Width, r.Image))
}

func digest(_ context.Context, job *worker.Job, d Digest) error {
	log.Printf("digest sent to %s (job %s, attempt %d)", d.To, job.ID, job.Attempt)
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv("REDIS_ADDR"), worker.Config{Prefix: os.Getenv("COURIER_PREFIX")}); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string, cfg worker.Config) error {
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		return err
	}
	defer rdb.Close()

	reg := worker.NewRegistry()
	err = reg.Register("media", worker.Kinds{
		Resize{}.Kind(): worker.JSONHandler(resize),
		Digest{}.Kind(): worker.JSONHandler(digest),
	}, worker.QueueOptions{
		RetainCompleted: worker.Retention{Count: 10_000, Age: 24 * time.Hour}, // keep results
		Periodic: []worker.Periodic{worker.PeriodicJSON(
			worker.Periodic{Name: "daily-digest", Cron: "0 8 * * *", Kind: Digest{}.Kind()}, Digest{To: "team@example.com"})},
	})
	if err != nil {
		return err
	}
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		return err
	}
	if err := d.Start(ctx); err != nil {
		return err
	}
	defer d.Stop(context.Background()) //nolint:errcheck // Stop's error is logged by the daemon

	client, err := worker.NewClient(rdb, cfg)
	if err != nil {
		return err
	}
	resizes := worker.NewProducer[Resize](client, "media")
	id, err := resizes.EnqueueSpec(ctx, Resize{Image: "cat.png", Width: 640},
		worker.JobSpec{Priority: worker.PriorityHigh, UniqueKey: "cat.png@640"})
	if err != nil {
		return err
	}
	if _, err := worker.NewProducer[Digest](client, "media").Enqueue(ctx, Digest{To: "ada@example.com"}); err != nil {
		return err
	}
	// A job enqueued by mistake, cancelled before it runs.
	oops, err := resizes.EnqueueSpec(ctx, Resize{Image: "dog.png", Width: 1}, worker.JobSpec{Delay: time.Hour})
	if err != nil {
		return err
	}
	ops, err := admin.NewClient(rdb, cfg)
	if err != nil {
		return err
	}
	if err := ops.Cancel(ctx, "media", oops); err != nil {
		return err
	}

	for tick := time.Tick(200 * time.Millisecond); ; <-tick { // follow the resize to its result
		switch job, err := client.Get(ctx, "media", id); {
		case err != nil:
			return err
		case job.State == worker.StateCompleted:
			log.Printf("resize %s done: %s", id, job.Result)
			<-ctx.Done() // serve until SIGTERM; Stop drains
			return nil
		case job.Progress != nil:
			log.Printf("resize %s: %.0f%% %s", id, job.Progress.Percent, job.Progress.Message)
		}
	}
}
