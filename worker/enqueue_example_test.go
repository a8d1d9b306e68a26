package worker_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// Enqueue with the options a job may carry, and the errors a producer
// branches on. (Compiled, not run: it needs a Redis.)
func ExampleClient_Enqueue() {
	ctx := context.Background()
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()
	client, err := worker.NewClient(rdb, worker.Config{})
	if err != nil {
		log.Fatal(err)
	}

	id, err := client.Enqueue(ctx, worker.JobSpec{
		Queue:       "emails",
		Payload:     []byte(`{"to":"ada@example.com"}`),
		ID:          "welcome-42",     // dedup key; empty = generated, time-sortable
		Delay:       10 * time.Minute, // or RunAt; neither = now
		MaxAttempts: 5,                // 0 = the queue's
		Timeout:     time.Minute,      // 0 = the queue's
		Priority:    worker.PriorityHigh,
		UniqueKey:   "welcome:ada",  // refused while another job holds it
		UniqueFor:   24 * time.Hour, // ... and for a day after the enqueue
		Headers:     map[string]string{"tenant": "acme"},
	})
	var ve *worker.ValidationError
	switch {
	case errors.As(err, &ve): // nothing was written; ve.Field names the JobSpec field
		log.Printf("bad %s: %s", ve.Field, ve.Reason)
	case errors.Is(err, worker.ErrUniqueKeyHeld): // id is the holder's
		log.Printf("job %s does it already", id)
	case errors.Is(err, worker.ErrDuplicate): // a job with that id exists
		log.Printf("job %s exists", id)
	case errors.Is(err, worker.ErrRedisOOM): // Redis is full: nothing stored
		log.Print(err)
	case err != nil:
		log.Fatal(err)
	}
}
