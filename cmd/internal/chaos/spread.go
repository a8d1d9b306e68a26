package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The spread check: a partitioned queue's partitions live on hash slots
// spaced evenly over the Cluster, so its jobs, and the Redis work they
// cost, should split evenly over the masters. The suite reads each node's
// INFO while the scenario runs and, after the drain, what each master
// (with its replica: a failover moves the work inside that pair) did.

// Share is one master's part of a partitioned queue's work in a scenario.
// A master is named by the node that was master when the scenario began;
// its replica's figures are added to its own, so a failover inside the
// pair keeps the work where it was.
type Share struct {
	Master     string   `json:"master"`     // the master's address at the start
	Replicas   []string `json:"replicas"`   // its replicas' addresses at the start
	Partitions []int    `json:"partitions"` // the queue's partitions whose slots it served at the start
	Delivered  int      `json:"delivered"`  // jobs of those partitions delivered
	Jobs       float64  `json:"jobs"`       // its share of the delivered jobs, 0-1
	Calls      float64  `json:"calls"`      // its share of the script calls (EVALSHA, EVAL) the nodes ran
	CPU        float64  `json:"cpu"`        // its share of the CPU time the nodes used (reported, never judged)
	CPUSeconds float64  `json:"cpu_seconds"`
}

// shard is a master and its replicas, as CLUSTER NODES shows them.
type shard struct {
	master   string
	replicas []string
	slots    [][2]int // ranges served, inclusive
}

// serves reports whether s serves slot.
func (s shard) serves(slot int) bool {
	return slices.ContainsFunc(s.slots, func(r [2]int) bool { return slot >= r[0] && slot <= r[1] })
}

// shards reads the masters and their slots from a running node's CLUSTER
// NODES, and each replica's master from the replica's own INFO
// replication: just after a Cluster is made, a node's CLUSTER NODES may
// still show a replica as a master without slots.
func (c *Cluster) shards(ctx context.Context) ([]shard, error) {
	var last error
	var out []shard
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		nodes, err := n.DoString(ctx, "CLUSTER", "NODES")
		if err != nil {
			last = err
			continue
		}
		if out, err = parseClusterNodes(nodes); err != nil {
			return nil, err
		}
		break
	}
	if out == nil {
		return nil, fmt.Errorf("CLUSTER NODES: no node answered: %w", last)
	}
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		info, err := n.Info(ctx, "replication")
		if err != nil {
			return nil, err
		}
		if infoField(info, "role") != "slave" {
			continue
		}
		master := net.JoinHostPort(infoField(info, "master_host"), infoField(info, "master_port"))
		for i := range out {
			if out[i].master == master && !slices.Contains(out[i].replicas, n.Addr) {
				out[i].replicas = append(out[i].replicas, n.Addr)
			}
		}
	}
	return out, nil
}

// parseClusterNodes reads CLUSTER NODES: "<id> <ip:port@cport> <flags>
// <master-id> <ping> <pong> <epoch> <link> <slot>...", one node a line.
// Slots being migrated ("[...]") are left out.
func parseClusterNodes(out string) ([]shard, error) {
	type node struct {
		addr, master string
		isMaster     bool
		slots        [][2]int
	}
	byID := map[string]*node{}
	var ids []string
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q: too few fields", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		n := &node{addr: addr, master: f[3]}
		for flag := range strings.SplitSeq(f[2], ",") {
			if flag == "master" {
				n.isMaster = true
			}
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("CLUSTER NODES line %q: slots %q", line, r)
			}
			n.slots = append(n.slots, [2]int{a, b})
		}
		byID[f[0]] = n
		ids = append(ids, f[0])
	}
	var out2 []shard
	for _, id := range ids {
		n := byID[id]
		if !n.isMaster || len(n.slots) == 0 {
			continue
		}
		s := shard{master: n.addr, slots: n.slots}
		for _, rid := range ids {
			if r := byID[rid]; !r.isMaster && r.master == id {
				s.replicas = append(s.replicas, r.addr)
			}
		}
		out2 = append(out2, s)
	}
	slices.SortFunc(out2, func(a, b shard) int { return a.slots[0][0] - b.slots[0][0] })
	return out2, nil
}

// spreadSample is how often the sampler reads each node's INFO.
const spreadSample = 500 * time.Millisecond

// workMeter adds up what each node of a Cluster did while it runs: script
// calls and CPU seconds, from INFO commandstats and cpu. A node restarted
// meanwhile starts its counters again from zero; the meter adds them on,
// losing only what a killed node did since its last sample.
type workMeter struct {
	cluster *Cluster

	mu    sync.Mutex
	last  map[string]work // by node address: the counters last read
	total map[string]work // by node address: what it did since the start
}

// work is a node's counters.
type work struct {
	calls float64 // EVALSHA and EVAL
	cpu   float64 // used_cpu_sys + used_cpu_user, seconds
}

// startWorkMeter reads every node now and then every spreadSample until
// ctx ends; stop (which waits for the sampler) reads once more.
func startWorkMeter(ctx context.Context, c *Cluster) (m *workMeter, stop func()) {
	m = &workMeter{cluster: c, last: map[string]work{}, total: map[string]work{}}
	m.read(ctx)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pause(ctx, spreadSample) {
			m.read(ctx)
		}
	}()
	return m, func() {
		cancel()
		<-done
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer rcancel()
		m.read(rctx)
	}
}

// read samples every running node once.
func (m *workMeter) read(ctx context.Context) {
	for _, n := range m.cluster.Nodes {
		if !n.Running() {
			continue
		}
		info, err := n.DoString(ctx, "INFO", "cpu", "commandstats")
		if err != nil {
			continue
		}
		m.add(n.Addr, parseWork(info))
	}
}

// add books a reading of addr's counters: the first is the baseline; one
// lower than the last means the node started again from zero.
func (m *workMeter) add(addr string, now work) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, seen := m.last[addr]
	t := m.total[addr]
	switch {
	case !seen:
	case now.calls < prev.calls || now.cpu < prev.cpu:
		t.calls += now.calls
		t.cpu += now.cpu
	default:
		t.calls += now.calls - prev.calls
		t.cpu += now.cpu - prev.cpu
	}
	m.last[addr], m.total[addr] = now, t
}

// WriteTo writes what each node did as JSON, by address: script calls and
// CPU seconds, for a reader who wants to check a share by hand.
func (m *workMeter) WriteTo(w io.Writer) (int64, error) {
	type nodeWork struct {
		Calls float64 `json:"calls"`
		CPU   float64 `json:"cpu_seconds"`
	}
	m.mu.Lock()
	out := map[string]nodeWork{}
	for addr, t := range m.total {
		out[addr] = nodeWork{t.calls, t.cpu}
	}
	m.mu.Unlock()
	data, err := json.Marshal(out)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	return int64(n), err
}

// parseWork reads a node's counters from INFO cpu and commandstats.
func parseWork(info string) work {
	var w work
	for _, field := range []string{"used_cpu_sys", "used_cpu_user"} {
		v, _ := strconv.ParseFloat(infoField(info, field), 64)
		w.cpu += v
	}
	for _, cmd := range []string{"cmdstat_evalsha", "cmdstat_eval"} {
		// cmdstat_evalsha:calls=12,usec=...
		stats, _, _ := strings.Cut(infoField(info, cmd), ",")
		if v, ok := strings.CutPrefix(stats, "calls="); ok {
			n, _ := strconv.ParseFloat(v, 64)
			w.calls += n
		}
	}
	return w
}

// shares returns each shard's part of the work: the jobs delivered of the
// partitions it served (slots: each partition's hash slot), and what its
// nodes did.
func (m *workMeter) shares(shards []shard, slots []int, delivered []string) []Share {
	out := make([]Share, len(shards))
	calls := make([]float64, len(shards))
	var allCalls, allCPU float64
	m.mu.Lock()
	for i, s := range shards {
		out[i] = Share{Master: s.master, Replicas: s.replicas}
		for _, addr := range append([]string{s.master}, s.replicas...) {
			out[i].CPUSeconds += m.total[addr].cpu
			calls[i] += m.total[addr].calls
		}
		allCalls += calls[i]
		allCPU += out[i].CPUSeconds
		for p, slot := range slots {
			if s.serves(slot) {
				out[i].Partitions = append(out[i].Partitions, p)
			}
		}
	}
	m.mu.Unlock()
	for _, id := range delivered {
		p := rediskeys.PartitionOf(id, len(slots))
		for i := range out {
			if slices.Contains(out[i].Partitions, p) {
				out[i].Delivered++
				break
			}
		}
	}
	for i := range out {
		out[i].Jobs = ratio(float64(out[i].Delivered), float64(len(delivered)))
		out[i].Calls = ratio(calls[i], allCalls)
		out[i].CPU = ratio(out[i].CPUSeconds, allCPU)
	}
	return out
}

// ratio is a/b, 0 when b is.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
