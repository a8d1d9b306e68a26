package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
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
	from := fs.String("from", "", "asynq's Redis, redis://[user:password@]host:port/db (this or --from-cluster is required; may be Courier's own server)")
	fromCluster := fs.String("from-cluster", "", "asynq's Redis Cluster (asynq.RedisClusterClientOpt), [redis[s]://[user:password@]]host:port[,host:port...]")
	queues := fs.String("queues", "", "asynq queues to move, a,b,c (default: every queue of asynq's asynq:queues set)")
	mapping := fs.String("map", "", "Courier queue of an asynq queue, asynq=courier[,asynq=courier...] (default: the same name)")
	apply := fs.Bool("apply", false, "move the tasks; without it the command is a dry run that changes nothing")
	batch := fs.Int("batch", asynqimport.DefaultBatch, "tasks per round (1 to 1000): each round is one script on Courier's Redis and one on asynq's")
	return func(ctx context.Context, std streams) error {
		if (*from == "") == (*fromCluster == "") {
			return usagef("one of --from (asynq's Redis, redis://host:port/db) or --from-cluster (asynq's Redis Cluster, host:port,host:port) is required")
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
		var opt rueidis.ClientOption
		var err error
		if *fromCluster != "" {
			if opt, err = clusterSource(*fromCluster); err != nil {
				return usagef("--from-cluster %q: %v", *fromCluster, err)
			}
		} else if opt, err = rueidis.ParseURL(*from); err != nil {
			return usagef("--from %q: %v", *from, err)
		}
		opt.DisableCache = true
		src, err := rueidis.NewClient(opt)
		if err != nil {
			return fmt.Errorf("connect to asynq's Redis at %s: %w", strings.Join(opt.InitAddress, ","), err)
		}
		defer src.Close()
		if *fromCluster != "" && src.Mode() != rueidis.ClientModeCluster {
			return fmt.Errorf("asynq's Redis at %s is not a Redis Cluster: name it with --from", strings.Join(opt.InitAddress, ","))
		}
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

// clusterSource parses --from-cluster: [redis[s]://[user:password@]]
// host:port[,host:port...], the nodes to discover asynq's Redis Cluster
// from. A Cluster has only database 0, so no path is taken.
func clusterSource(v string) (rueidis.ClientOption, error) {
	scheme, rest := "redis://", v
	if i := strings.Index(v, "://"); i >= 0 {
		scheme, rest = v[:i+3], v[i+3:]
	}
	cred := ""
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		cred, rest = rest[:i+1], rest[i+1:]
	}
	if strings.ContainsAny(rest, "/?") {
		return rueidis.ClientOption{}, errors.New("takes host:port[,host:port...] and no database or options (a Cluster has only database 0)")
	}
	var addrs []string
	for a := range strings.SplitSeq(rest, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return rueidis.ClientOption{}, fmt.Errorf("node %q: %w", a, err)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return rueidis.ClientOption{}, errors.New("names no node: host:port[,host:port...]")
	}
	opt, err := rueidis.ParseURL(scheme + cred + addrs[0])
	if err != nil {
		return opt, err
	}
	opt.InitAddress = addrs
	if opt.TLSConfig != nil {
		opt.TLSConfig.ServerName = "" // each node's own name, from its address
	}
	return opt, nil
}
