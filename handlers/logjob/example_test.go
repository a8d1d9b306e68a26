package logjob_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/seed-53d105c9/courier/handlers/logjob"
	"github.com/seed-53d105c9/courier/worker"
)

// The log handler logs one line per job and succeeds: point a queue at it
// to watch jobs flow. (The time is left out of the lines here so that the
// output is fixed.)
func ExampleNew() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	h, err := logjob.New(logger, logjob.Settings{Level: "info", PayloadBytes: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = h.Handle(context.Background(), &worker.Job{ID: "j1", Queue: "demo", Attempt: 1, Payload: []byte("hello, world")})

	_, err = logjob.New(logger, logjob.Settings{Level: "loud"})
	fmt.Println(err)
	// Output:
	// level=INFO msg=job queue=demo id=j1 attempt=1 payload=hello payload_truncated=true payload_size=12
	// level: must be one of debug, info, warn, error (got "loud")
}
