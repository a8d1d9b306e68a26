package admin

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// Client is the operator's handle on Courier, straight on Redis: it
// implements Operator, and the reads that the daemon, the web UI and the
// tools need beyond it (History, Periodic, Partitions, PartitionLeaders,
// CheckPrefix, QueuesKnown, QueueCount). It is safe for concurrent use;
// make one per process.
type Client struct {
	core *core.Client // the store and the queue layer
	rdb  rueidis.Client
	cfg  worker.Config
	// producer enqueues and reads jobs (Enqueue, Get). Forget replaces it
	// with a fresh one, which has learned nothing of the forgotten queue:
	// it records the queue's name again at its next enqueue, routed by
	// the queue's layout as it is then.
	producer atomic.Pointer[worker.Client]
}

var _ Operator = (*Client)(nil)

// NewClient returns a Client on the Redis client rdb (see
// rueidis.NewClient; Redis Cluster is detected by rueidis), with the
// application's Config: Prefix above all (an operator on another prefix
// sees none of the application's queues), and Registerer and
// TracerProvider for its calls and its enqueues. An invalid cfg is an
// error naming its fields, as worker.NewClient's. RefuseUnserved is
// ignored: the operator's Enqueue warns instead.
func NewClient(rdb rueidis.Client, cfg worker.Config) (*Client, error) {
	cfg.RefuseUnserved = false
	w, err := worker.NewClient(rdb, cfg) // checks rdb and cfg
	if err != nil {
		return nil, err
	}
	m, err := metrics.New(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("admin metrics: %w", err)
	}
	c := &Client{core: core.New(rdb, cmp.Or(cfg.Prefix, worker.PrefixDefault), m), rdb: rdb, cfg: cfg}
	c.producer.Store(w)
	return c, nil
}

// renewProducer replaces the Client's producer with a fresh one (see
// Client.producer).
func (c *Client) renewProducer() {
	if w, err := worker.NewClient(c.rdb, c.cfg); err == nil { // cannot fail: NewClient took rdb and cfg
		c.producer.Store(w)
	}
}

// Enqueue adds jobs, as worker.Client.EnqueueMany does: if any spec is
// invalid nothing is written and the error names the spec and field;
// otherwise each result says whether its job was added or, when not, why
// (ErrDuplicate, ErrUniqueKeyHeld), and its Warning whether no daemon has
// ever served the job's queue or kind (a typo, or consumers not deployed
// yet): one read per call, none while the Client remembers the queues
// (30s when served, 5s when not). A failed read leaves the warnings empty.
func (c *Client) Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error) {
	res, err := c.producer.Load().EnqueueMany(ctx, specs)
	if err != nil {
		return res, err
	}
	queues, kinds := make([]string, len(specs)), make([]string, len(specs))
	for i := range specs {
		queues[i], kinds[i] = specs[i].Queue, specs[i].Kind
	}
	if warnings, werr := c.core.Served.Warn(ctx, queues, kinds); werr == nil {
		for i, w := range warnings {
			res[i].Warning = w
		}
	}
	return res, nil
}

// Get reads a job, as worker.Client.Get does: an error wrapping
// worker.ErrNotFound when the queue has no job with that id.
func (c *Client) Get(ctx context.Context, queue, id string) (*worker.Job, error) {
	return c.producer.Load().Get(ctx, queue, id)
}
