package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/asynqimport"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// importClients are the Courier side of an import: the operator's client
// that writes the jobs and the producer's that checks them.
type importClients struct {
	admin    *admin.Client
	producer *worker.Client
}

// defineImport is courier import asynq: see package asynqimport and
// docs/migrating-from-asynq.md.
func defineImport(fs *flag.FlagSet, _ string) runFunc {
	cf := addConfigFlags(fs)
	from := fs.String("from", "", "asynq's Redis, redis://[user:password@]host:port/db (required; may be Courier's own server)")
	queues := fs.String("queues", "", "asynq queues to move, a,b,c (default: every queue of asynq's asynq:queues set)")
	mapping := fs.String("map", "", "Courier queue of an asynq queue, asynq=courier[,asynq=courier...] (default: the same name)")
	apply := fs.Bool("apply", false, "move the tasks; without it the command is a dry run that changes nothing")
	batch := fs.Int("batch", asynqimport.DefaultBatch, "tasks per round (1 to 1000): each round is one script on Courier's Redis and one on asynq's")
	return func(ctx context.Context, std streams) error {
		if *from == "" {
			return usagef("--from is required: asynq's Redis, redis://host:port/db")
		}
		if *batch < 1 || *batch > 1000 {
			return usagef("--batch must be 1 to 1000 (got %d)", *batch)
		}
		o := asynqimport.Options{Apply: *apply, Batch: *batch, Map: map[string]string{}}
		for q := range strings.SplitSeq(*queues, ",") {
			if q = strings.TrimSpace(q); q != "" {
				o.Queues = append(o.Queues, q)
			}
		}
		for m := range strings.SplitSeq(*mapping, ",") {
			if m = strings.TrimSpace(m); m == "" {
				continue
			}
			a, c, ok := strings.Cut(m, "=")
			if !ok || a == "" || c == "" {
				return usagef("--map takes asynq=courier pairs separated by commas (got %q)", m)
			}
			if err := worker.ValidateQueueName(c); err != nil {
				return usagef("--map %s: %v", m, err)
			}
			o.Map[a] = c
		}
		opt, err := rueidis.ParseURL(*from)
		if err != nil {
			return usagef("--from %q: %v", *from, err)
		}
		opt.DisableCache = true
		src, err := rueidis.NewClient(opt)
		if err != nil {
			return fmt.Errorf("connect to asynq's Redis at %s: %w", strings.Join(opt.InitAddress, ","), err)
		}
		defer src.Close()
		dst, closeDst, err := openWith(ctx, cf, func(rdb rueidis.Client, cfg worker.Config) (importClients, error) {
			a, err := admin.NewClient(rdb, cfg)
			if err != nil {
				return importClients{}, err
			}
			p, err := worker.NewClient(rdb, cfg)
			return importClients{admin: a, producer: p}, err
		})
		if err != nil {
			return err
		}
		defer closeDst()
		o.Validate = dst.producer.Validate
		sum, err := asynqimport.Run(ctx, src, dst.admin, o)
		if sum != nil {
			sum.Write(std.out)
		}
		return err
	}
}
