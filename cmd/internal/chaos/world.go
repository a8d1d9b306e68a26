package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/tcpproxy"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The suite's queue; each scenario has a key prefix of its own.
const (
	queueName = "chaos"
	daemons   = 3
)

// Topology is the Redis a scenario runs on.
type Topology int

// The topologies.
const (
	// OnSingle is one redis-server with AOF; each daemon reaches it through
	// a proxy of its own, the producer directly.
	OnSingle Topology = iota
	// OnCluster is three masters with a replica each (AOF everysec,
	// cluster-node-timeout 2000 ms); daemons and producer use every node.
	OnCluster
)

// world is what one scenario runs on: Redis, the daemons, the receiver
// and the producer's client, all under the scenario's directory.
type world struct {
	base   context.Context // the run's: episodes and the drain use it
	name   string          // the scenario's
	fsync  string          // OnSingle: appendfsync
	prefix string
	ledger *Ledger
	logf   func(format string, args ...any)

	redis      *Redis            // OnSingle
	proxies    []*tcpproxy.Proxy // OnSingle: proxies[i] is daemons[i]'s way to Redis
	cluster    *Cluster          // OnCluster
	slot       int               // OnCluster: the hash slot of the partition the fault acts on
	slots      []int             // OnCluster: each partition's hash slot
	parts      int               // the queue's partitions (1: not split)
	keyCap     int               // a scenario with job keys: each key's cap
	durability worker.Durability // what the producer asks of its enqueues
	daemons    []*Daemon
	receiver   *Receiver
	rdb        rueidis.Client
	client     *worker.Client
	op         *admin.Client // the tally's reads: stats, the dead set
}

// newWorld starts sc's Redis, the receiver and three daemons, and connects
// the producer's client.
func newWorld(ctx context.Context, sc *Scenario, bin, dir string, l *Ledger, logf func(string, ...any)) (w *world, err error) {
	w = &world{base: ctx, name: sc.Name, fsync: sc.fsync(), prefix: "chaos-" + sc.Name, ledger: l, logf: logf,
		parts: max(sc.Partitions, 1), durability: sc.Durability, keyCap: sc.KeyCap}
	l.SetQueue(w.parts, sc.Durability.Replicas > 0)
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	var addrs []string // what the producer connects to
	switch sc.Topology {
	case OnSingle:
		w.redis, err = startRedis(ctx, filepath.Join(dir, "redis"), false,
			append([]string{"--appendonly", "yes", "--appendfsync", w.fsync}, sc.RedisArgs...)...)
		if err != nil {
			return w, err
		}
		addrs = []string{w.redis.Addr}
	case OnCluster:
		w.cluster, err = startCluster(ctx, filepath.Join(dir, "cluster"), 3, 1,
			append([]string{"--appendonly", "yes", "--appendfsync", "everysec"}, sc.RedisArgs...)...)
		if err != nil {
			return w, err
		}
		addrs = w.cluster.Addrs()
		for i := range w.parts {
			slot, err := w.cluster.Slot(ctx, rediskeys.PartitionKeys(w.prefix, queueName, w.parts, i).Jobs)
			if err != nil {
				return w, err
			}
			w.slots = append(w.slots, slot)
		}
		if sc.Target < 0 || sc.Target >= w.parts {
			return w, fmt.Errorf("target partition %d of a queue of %d", sc.Target, w.parts)
		}
		w.slot = w.slots[sc.Target]
	}
	if w.receiver, err = startReceiver(ctx, l); err != nil {
		return w, err
	}
	w.receiver.keyCap = sc.KeyCap
	for i := range daemons {
		redisAddrs := addrs
		if w.redis != nil {
			p, err := tcpproxy.Start(ctx, w.redis.Addr)
			if err != nil {
				return w, err
			}
			w.proxies = append(w.proxies, p)
			redisAddrs = []string{p.Addr}
		}
		httpAddr, err := freeAddr()
		if err != nil {
			return w, err
		}
		w.daemons = append(w.daemons, &Daemon{
			Name: "d" + strconv.Itoa(i), bin: bin, dir: dir, httpAddr: httpAddr,
			redisAddrs: redisAddrs, prefix: w.prefix, queue: queueName, url: w.receiver.URL,
			partitions: w.parts, keyCap: w.keyCap,
		})
	}
	w.rdb, err = rueidis.NewClient(rueidis.ClientOption{
		InitAddress:      addrs,
		DisableCache:     true,
		Dialer:           net.Dialer{Timeout: time.Second},
		ConnWriteTimeout: 3 * time.Second,
	})
	if err != nil {
		return w, fmt.Errorf("connect the producer to %v: %w", addrs, err)
	}
	if w.client, err = worker.NewClient(w.rdb, worker.Config{Prefix: w.prefix}); err != nil {
		return w, err
	}
	if w.op, err = admin.NewClient(w.rdb, worker.Config{Prefix: w.prefix}); err != nil {
		return w, err
	}
	for _, d := range w.daemons {
		if err := d.Start(); err != nil {
			return w, err
		}
	}
	for _, d := range w.daemons {
		if err := d.WaitReady(ctx); err != nil {
			return w, err
		}
	}
	return w, nil
}

// close stops everything the world started. The scenario is over, so the
// daemons are killed rather than drained.
func (w *world) close() {
	for _, d := range w.daemons {
		d.Kill()
	}
	if w.rdb != nil {
		w.rdb.Close()
	}
	if w.receiver != nil {
		w.receiver.Close()
	}
	for _, p := range w.proxies {
		p.Close()
	}
	if w.redis != nil {
		w.redis.Kill()
	}
	if w.cluster != nil {
		w.cluster.Kill()
	}
}

// drain waits, once the load is over, until every acknowledged job was
// delivered, or Redis holds nothing more to run (twice in a row, a poll
// apart), or timeout passes.
func (w *world) drain(ctx context.Context, timeout time.Duration) {
	idle := 0
	_ = until(ctx, timeout, 250*time.Millisecond, "drain", func(ctx context.Context) (bool, error) {
		if len(w.ledger.Missing()) == 0 {
			return true, nil
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		st, err := w.op.Stats(cctx, queueName)
		if err != nil {
			idle = 0
			return false, err
		}
		if st.Ready+st.Scheduled+st.Active == 0 {
			idle++
		} else {
			idle = 0
		}
		return idle >= 2, nil
	})
}

// lookUpLost reads the dead set, and the state in Redis of each id still
// missing (at most lookupMax of them), for the tally.
func (w *world) lookUpLost(ctx context.Context) (dead map[string]bool, states map[string]string, err error) {
	dead = map[string]bool{}
	cursor := ""
	for {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		page, err := w.op.Jobs(cctx, admin.JobListParams{Queue: queueName, State: worker.StateDead, Cursor: cursor, Limit: 1000})
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("read the dead set: %w", err)
		}
		for _, j := range page.Jobs {
			dead[j.ID] = true
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	states = map[string]string{}
	for i, id := range w.ledger.Missing() {
		if i == lookupMax {
			break
		}
		if dead[id] {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		job, err := w.client.Get(cctx, queueName, id)
		cancel()
		switch {
		case err == nil:
			states[id] = string(job.State)
		case errors.Is(err, worker.ErrNotFound):
			states[id] = "absent"
		default: // Redis does not answer: the rest stay unknown
			return dead, states, nil
		}
	}
	return dead, states, nil
}

// lookupMax bounds how many missing ids are looked up one by one.
const lookupMax = 2000

// partitionsOn returns the partitions whose slots master serves now.
func (w *world) partitionsOn(ctx context.Context, master *Redis) []int {
	var out []int
	for i, slot := range w.slots {
		if m, err := w.cluster.MasterOf(ctx, slot); err == nil && m == master {
			out = append(out, i)
		}
	}
	return out
}

// leakedSlots waits until no job of the queue runs (at most timeout), then
// sums the slots its keys hold in every partition (rediskeys.Queue's
// KeyState "r:" fields): 0 unless a slot leaked. A queue that never went
// idle is an error: its running jobs hold slots.
func (w *world) leakedSlots(ctx context.Context, timeout time.Duration) (int, error) {
	if err := until(ctx, timeout, 250*time.Millisecond, "no job running", func(ctx context.Context) (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		st, err := w.op.Stats(cctx, queueName)
		return err == nil && st.Active == 0, err
	}); err != nil {
		return 0, fmt.Errorf("count the key slots: %w", err)
	}
	held := 0
	for i := range w.parts {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		st, err := w.rdb.Do(cctx, w.rdb.B().Hgetall().Key(rediskeys.PartitionKeys(w.prefix, queueName, w.parts, i).KeyState).Build()).AsStrMap()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("read the key slots of partition %d: %w", i, err)
		}
		for f, v := range st {
			if strings.HasPrefix(f, "r:") {
				n, _ := strconv.Atoi(v)
				held += n
			}
		}
	}
	return held, nil
}
