package worker_test

import (
	"context"
	"log"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// Invoice is the payload of the "invoices" queue's jobs.
type Invoice struct {
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

// A Producer[T] and a JSONHandler[T] share the payload's type: the
// producer encodes what the handler decodes.
func ExampleProducer() {
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()
	client, err := worker.NewClient(rdb, worker.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	invoices := worker.NewProducer[Invoice](client, "invoices")
	if _, err := invoices.Enqueue(ctx, Invoice{Customer: "ada", Cents: 4200}); err != nil {
		log.Fatal(err)
	}
	// Other job settings go in a JobSpec; the producer sets Queue and Payload.
	_, err = invoices.EnqueueSpec(ctx, Invoice{Customer: "bob", Cents: 990}, worker.JobSpec{
		ID:       "invoice-2025-0042", // enqueueing it again is refused with ErrDuplicate
		Priority: worker.PriorityHigh,
	})
	if err != nil {
		log.Fatal(err)
	}

	// The daemon's side: the handler gets an Invoice.
	reg := worker.NewRegistry()
	err = reg.Register("invoices", worker.JSONHandler(func(ctx context.Context, job *worker.Job, inv Invoice) error {
		log.Printf("invoice %s: %d cents for %s", job.ID, inv.Cents, inv.Customer)
		return nil
	}), worker.QueueOptions{})
	if err != nil {
		log.Fatal(err)
	}
}
