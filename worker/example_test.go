package worker_test

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
)

// Welcome is the payload of the "welcome" queue's jobs.
type Welcome struct {
	Email string `json:"email"`
}

// This example runs a worker for one queue until SIGTERM, and enqueues a job
// from the same process.
func Example() {
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()

	reg := worker.NewRegistry()
	err = reg.Register("welcome", worker.JSONHandler(func(ctx context.Context, job *worker.Job, w Welcome) error {
		if w.Email == "" {
			return worker.Permanent(fmt.Errorf("job %s has no email", job.ID))
		}
		fmt.Println("sending welcome mail to", w.Email)
		return nil
	}), worker.QueueOptions{Concurrency: 20, MaxAttempts: 5})
	if err != nil {
		log.Fatal(err)
	}

	client, err := worker.NewClient(rdb, worker.Config{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Enqueue(context.Background(), worker.JobSpec{
		Queue:   "welcome",
		ID:      "welcome-user-42", // enqueueing it again is refused with ErrDuplicate
		Payload: []byte(`{"email":"ada@example.com"}`),
		Delay:   time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}

	d, err := worker.NewDaemon(rdb, reg, worker.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := d.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// A handler that cannot take a business lock asks to be run again later
// without spending an attempt.
func ExampleSnooze() {
	var tryLock func(ctx context.Context, key string) (bool, error) // your locking
	h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		ok, err := tryLock(ctx, "order:"+string(job.Payload))
		if err != nil {
			return err // a real failure: spend the attempt, retry with backoff
		}
		if !ok {
			return worker.Snooze(5 * time.Second)
		}
		return nil
	})
	_ = h
}

// Fixed retry steps: the last one repeats.
func ExampleFixedSteps() {
	steps := worker.FixedSteps{15 * time.Second, 3 * time.Minute, 10 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 6 * time.Hour, 15 * time.Hour}
	for _, attempt := range []int{1, 2, 8, 9, 20} {
		fmt.Printf("after failed attempt %d: wait %s\n", attempt, steps.Delay(attempt))
	}
	// Output:
	// after failed attempt 1: wait 15s
	// after failed attempt 2: wait 3m0s
	// after failed attempt 8: wait 15h0m0s
	// after failed attempt 9: wait 15h0m0s
	// after failed attempt 20: wait 15h0m0s
}
