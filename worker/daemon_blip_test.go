package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// privateClient connects to addr as user (password "pw"; "" is the default
// user), with short timeouts so calls to an unreachable server fail fast.
func privateClient(t *testing.T, addr, user string) rueidis.Client {
	t.Helper()
	password := "pw"
	if user == "" {
		password = ""
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:      []string{addr},
		Username:         user,
		Password:         password,
		DisableCache:     true,
		ConnWriteTimeout: time.Second,
		Dialer:           net.Dialer{Timeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestDaemonBlipDoesNotRerunFinishedJobs: Redis refuses every command of
// the daemon's user for 600 ms (an ACL change), less than the 1 s lease,
// while 20 jobs finish. Their acks are tried again after the blip and their
// leases renewed meanwhile: every job runs exactly once. Before, the acks
// were dropped after three tries within 0.3 s and every job ran again when
// its lease expired.
func TestDaemonBlipDoesNotRerunFinishedJobs(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	p.MustDo(t, "ACL", "SETUSER", "courier", "on", ">pw", "~*", "&*", "+@all")
	rdb := privateClient(t, p.Addr, "courier")

	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Lease = time.Second
	c := newClient(t, rdb, cfg)
	rec := newRecorder()
	started := make(chan struct{}, 20)
	h := rec.Handler(func(context.Context, *worker.Job) error {
		started <- struct{}{}
		time.Sleep(300 * time.Millisecond) //nolint:forbidigo // the job's work, on the real clock the blip uses
		return nil
	})
	startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{Concurrency: 20}), cfg)
	specs := make([]worker.JobSpec, 20)
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: "q", ID: fmt.Sprintf("j%02d", i)}
	}
	enqueueAll(t, c, specs)
	for range specs {
		receive(t, started, 10*time.Second, "a job to start")
	}
	// The jobs end 300 ms after they started: inside the blip.
	p.MustDo(t, "ACL", "SETUSER", "courier", "-@all")
	time.Sleep(600 * time.Millisecond) //nolint:forbidigo // the blip's length is the scenario
	p.MustDo(t, "ACL", "SETUSER", "courier", "+@all")

	admin := p.Client(t)
	keys := rediskeys.QueueKeys(cfg.Prefix, "q").All()
	testkit.Eventually(t, 10*time.Second, "every job acked", func() bool {
		n, err := admin.Do(t.Context(), admin.B().Hlen().Key(keys[0]).Build()).AsInt64()
		return err == nil && n == 0
	})
	// Three leases more: a job whose ack was lost would be recovered and run again.
	time.Sleep(3 * cfg.Lease) //nolint:forbidigo // nothing to wait for: a rerun would happen by then
	for _, s := range specs {
		if n := len(rec.Of(s.ID)); n != 1 {
			t.Errorf("job %s ran %d times, want once", s.ID, n)
		}
	}
}

// TestDaemonCutOffStopsJobsBeforeTheirLeaseEnds: the daemon's connection to
// Redis stalls (a partition, through a proxy) while a job runs. The job is
// cancelled with ErrLeaseLost before its lease can end in Redis, where a
// leader of another process would recover it and start it elsewhere.
func TestDaemonCutOffStopsJobsBeforeTheirLeaseEnds(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	px := testkit.StartProxy(t, p.Addr)
	rdb := privateClient(t, px.Addr, "")
	admin := p.Client(t)

	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Lease = 2 * time.Second
	c := newClient(t, rdb, cfg)
	type end struct {
		at    time.Time
		cause error
	}
	started, ended := make(chan struct{}, 1), make(chan end, 1)
	h := worker.HandlerFunc(func(ctx context.Context, _ *worker.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		ended <- end{time.Now(), context.Cause(ctx)}
		return ctx.Err()
	})
	startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
	id := enqueue(t, c, worker.JobSpec{Queue: "q"})
	receive(t, started, 10*time.Second, "the job to start")
	time.Sleep(cfg.Lease / 2) //nolint:forbidigo // let a renewal or two land before the partition
	px.Stall()
	deadline := activeDeadline(t, admin, rediskeys.QueueKeys(cfg.Prefix, "q").Active, id)
	e := receive(t, ended, 3*cfg.Lease, "the job to be cancelled")
	if !errors.Is(e.cause, worker.ErrLeaseLost) {
		t.Errorf("job cancelled with %v, want ErrLeaseLost", e.cause)
	}
	margin := deadline.Sub(e.at)
	t.Logf("job cancelled %v before its lease ended in Redis (lease %v)", margin, cfg.Lease)
	if margin <= 0 {
		t.Errorf("job cancelled %v after its lease ended in Redis, want before", -margin)
	}
	px.Resume()
}

// activeDeadline returns the lease deadline Redis holds for a running job.
func activeDeadline(t *testing.T, c rueidis.Client, active, id string) time.Time {
	t.Helper()
	s, err := c.Do(t.Context(), c.B().Zscore().Key(active).Member(id).Build()).ToString()
	if err != nil {
		t.Fatalf("ZSCORE %s %s: %v", active, id, err)
	}
	ms, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(int64(ms))
}

// TestDaemonOneNodeDownSparesOtherQueues: on a Cluster, the node that serves
// queue "bad" refuses the daemon's user for longer than the lease, while a
// job of queue "good", on another node, runs longer than the lease. The
// good queue's leases are still renewed and its job is not cancelled; the
// bad queue's job is cancelled before its lease can end.
func TestDaemonOneNodeDownSparesOtherQueues(t *testing.T) {
	t.Parallel()
	cl := testkit.StartPrivateCluster(t, 3, 0)
	for _, n := range cl.Nodes {
		n.MustDo(t, "ACL", "SETUSER", "courier", "on", ">pw", "~*", "&*", "+@all")
	}
	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Lease = time.Second
	// Two queues served by different masters.
	good, bad := "good", ""
	goodNode := cl.NodeOf(t, rediskeys.QueueKeys(cfg.Prefix, good).Jobs)
	for i := range 100 {
		q := fmt.Sprintf("bad%d", i)
		if cl.NodeOf(t, rediskeys.QueueKeys(cfg.Prefix, q).Jobs) != goodNode {
			bad = q
			break
		}
	}
	badNode := cl.NodeOf(t, rediskeys.QueueKeys(cfg.Prefix, bad).Jobs)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: cl.Addrs(), Username: "courier", Password: "pw", DisableCache: true,
		ConnWriteTimeout: time.Second, Dialer: net.Dialer{Timeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)

	c := newClient(t, rdb, cfg)
	type end struct{ cause error }
	started := make(chan string, 2)
	ended := make(chan end, 2)
	h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		started <- job.ID
		select {
		case <-ctx.Done():
			ended <- end{context.Cause(ctx)}
			return ctx.Err()
		case <-time.After(4 * cfg.Lease):
			ended <- end{}
			return nil
		}
	})
	reg := register(t, nil, good, h, worker.QueueOptions{})
	register(t, reg, bad, h, worker.QueueOptions{})
	startDaemon(t, rdb, reg, cfg)
	enqueue(t, c, worker.JobSpec{Queue: good, ID: "g"})
	enqueue(t, c, worker.JobSpec{Queue: bad, ID: "b"})
	receive(t, started, 10*time.Second, "a job to start")
	receive(t, started, 10*time.Second, "a job to start")
	badNode.MustDo(t, "ACL", "SETUSER", "courier", "-@all")
	defer badNode.MustDo(t, "ACL", "SETUSER", "courier", "+@all")
	first := receive(t, ended, 4*cfg.Lease, "the bad queue's job to be cancelled")
	if !errors.Is(first.cause, worker.ErrLeaseLost) {
		t.Fatalf("first job to end: cause %v, want the bad queue's, ErrLeaseLost", first.cause)
	}
	second := receive(t, ended, 6*cfg.Lease, "the good queue's job to end")
	if second.cause != nil {
		t.Errorf("the good queue's job was cancelled (%v): its leases were not renewed because another queue failed", second.cause)
	}
}
