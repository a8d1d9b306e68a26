package worker_test

import (
	"context"
	"log"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// Shipment and Return are the payloads of two kinds of job of the
// "warehouse" queue: each names its kind.
type Shipment struct {
	Order string `json:"order"`
}

func (Shipment) Kind() string { return "shipment.create" }

type Return struct {
	Order string `json:"order"`
}

func (Return) Kind() string { return "return.accept" }

// One queue serves two kinds of job, each with its typed handler; a
// Producer[T] gives every job its T's kind, and Register refuses a typed
// handler under another kind than its T's.
func ExampleKinds() {
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()

	reg := worker.NewRegistry()
	err = reg.Register("warehouse", worker.Kinds{
		Shipment{}.Kind(): worker.JSONHandler(func(ctx context.Context, job *worker.Job, s Shipment) error {
			log.Printf("ship order %s", s.Order)
			return nil
		}),
		Return{}.Kind(): worker.JSONHandler(func(ctx context.Context, job *worker.Job, r Return) error {
			log.Printf("accept the return of order %s", r.Order)
			return nil
		}),
	}, worker.QueueOptions{})
	if err != nil {
		log.Fatal(err)
	}

	client, err := worker.NewClient(rdb, worker.Config{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := worker.NewProducer[Shipment](client, "warehouse").Enqueue(ctx, Shipment{Order: "o-1"}); err != nil {
		log.Fatal(err)
	}
	if _, err := worker.NewProducer[Return](client, "warehouse").Enqueue(ctx, Return{Order: "o-0"}); err != nil {
		log.Fatal(err)
	}
}
