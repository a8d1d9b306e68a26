package worker_test

import (
	"context"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// A worker process that starts whatever state Redis is in: Dial waits
// while Redis is down, loading or failing over (rueidis.NewClient would
// fail at once), and Run waits the same way for its first writes. Wrong
// credentials or a TLS certificate that does not verify still fail at
// once. A readiness probe reports Waiting's reason until Running.
func ExampleDial() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.Default()
	rdb, err := worker.Dial(ctx, rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}},
		worker.DialOptions{Logger: logger})
	if err != nil {
		log.Fatal(err) // refused credentials, a TLS failure, or ctx ended
	}
	defer rdb.Close()

	reg := worker.NewRegistry()
	if err := reg.Register("emails", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		return nil
	}), worker.QueueOptions{}); err != nil {
		log.Fatal(err)
	}
	d, err := worker.NewDaemon(rdb, reg, worker.Config{Logger: logger})
	if err != nil {
		log.Fatal(err)
	}
	if err := d.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
