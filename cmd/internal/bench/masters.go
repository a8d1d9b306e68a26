package bench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// master is one master of the Redis a run measures; a single Redis is its
// own one master. Its INFO is read on a connection of its own, so that the
// figures are that node's and the reads are not counted as Courier's.
type master struct {
	addr       string
	conn       rueidis.Client
	ranges     [][2]int64 // the slots it serves; none for a single Redis
	partitions []int      // the bench queue's partitions whose slot it serves
}

func (m *master) serves(slot int64) bool {
	return slices.ContainsFunc(m.ranges, func(r [2]int64) bool { return r[0] <= slot && slot <= r[1] })
}

// findMasters lists the masters of rdb. A Cluster's come from CLUSTER
// SLOTS, in the order of the first slot each serves, each with a
// connection of its own (closed by the returned func); a single Redis is
// its one master, addr, read through rdb.
func findMasters(ctx context.Context, rdb rueidis.Client, addr string) ([]*master, func(), error) {
	if rdb.Mode() != rueidis.ClientModeCluster {
		return []*master{{addr: addr, conn: rdb}}, func() {}, nil
	}
	entries, err := rdb.Do(ctx, rdb.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return nil, nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	byAddr := map[string]*master{}
	var ms []*master
	for _, e := range entries {
		// [first slot, last slot, [host, port, id, …], replicas…]
		fields, err := e.ToArray()
		if err != nil || len(fields) < 3 {
			return nil, nil, fmt.Errorf("CLUSTER SLOTS: unexpected entry %v", e)
		}
		from, err1 := fields[0].AsInt64()
		to, err2 := fields[1].AsInt64()
		node, err3 := fields[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(node) < 2 {
			return nil, nil, fmt.Errorf("CLUSTER SLOTS: unexpected entry %v", e)
		}
		host, err1 := node[0].ToString()
		port, err2 := node[1].AsInt64()
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("CLUSTER SLOTS: unexpected node %v", node)
		}
		a := net.JoinHostPort(host, strconv.FormatInt(port, 10))
		m := byAddr[a]
		if m == nil {
			m = &master{addr: a}
			byAddr[a] = m
			ms = append(ms, m)
		}
		m.ranges = append(m.ranges, [2]int64{from, to})
	}
	for _, m := range ms {
		slices.SortFunc(m.ranges, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	}
	slices.SortFunc(ms, func(a, b *master) int { return cmp.Compare(a.ranges[0][0], b.ranges[0][0]) })
	closeAll := func() {
		for _, m := range ms {
			if m.conn != nil {
				m.conn.Close()
			}
		}
	}
	for _, m := range ms {
		m.conn, err = rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{m.addr}, ForceSingleClient: true, DisableCache: true})
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connect to master %s: %w", m.addr, err)
		}
	}
	return ms, closeAll, nil
}

// placePartitions records which master serves each of the bench queue's
// partitions: the one serving the slot of the partition's keys, as Redis
// computes it (CLUSTER KEYSLOT).
func placePartitions(ctx context.Context, rdb rueidis.Client, ms []*master, prefix string, partitions int) error {
	if len(ms) == 1 && len(ms[0].ranges) == 0 {
		for i := range partitions {
			ms[0].partitions = append(ms[0].partitions, i)
		}
		return nil
	}
	for i := range partitions {
		key := rediskeys.PartitionKeys(prefix, queue, partitions, i).Jobs
		slot, err := rdb.Do(ctx, rdb.B().ClusterKeyslot().Key(key).Build()).AsInt64()
		if err != nil {
			return fmt.Errorf("CLUSTER KEYSLOT %s: %w", key, err)
		}
		at := slices.IndexFunc(ms, func(m *master) bool { return m.serves(slot) })
		if at < 0 {
			return fmt.Errorf("no master serves slot %d of %s", slot, key)
		}
		ms[at].partitions = append(ms[at].partitions, i)
	}
	return nil
}

// partitionJobs returns how many job records each of the bench queue's
// partitions holds: the length of its jobs hash.
func partitionJobs(ctx context.Context, rdb rueidis.Client, prefix string, partitions int) ([]int64, error) {
	cmds := make(rueidis.Commands, partitions)
	for i := range partitions {
		cmds[i] = rdb.B().Hlen().Key(rediskeys.PartitionKeys(prefix, queue, partitions, i).Jobs).Build()
	}
	out := make([]int64, partitions)
	for i, r := range rdb.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("count the jobs of partition %d: %w", i, err)
		}
		out[i] = n
	}
	return out, nil
}

// phases are the snapshots of every master around a throughput run, and
// the jobs each partition gained during it.
type phases struct {
	before, afterEnqueue, after []serverStats
	jobs                        []int64 // by partition
}

// masterJobs is how many of the run's jobs went through master i: those
// stored in the partitions it serves.
func (p phases) masterJobs(m *master) int64 {
	var n int64
	for _, i := range m.partitions {
		n += p.jobs[i]
	}
	return n
}

// calls is the number of commands clients sent master i during the run,
// less the bench's own count of the jobs of its partitions (one HLEN
// each).
func (p phases) calls(i int, m *master) int64 {
	return clientCalls(p.before[i], p.after[i]) - int64(len(m.partitions))
}

// totals are the Redis figures of a run summed over the masters that serve
// a partition of the bench queue: with one partition, the node that serves
// the queue, as before partitions existed.
func (p phases) totals(ms []*master) (calls int64, cpuSec, enqueueCPUSec float64, bytes int64) {
	for i, m := range ms {
		if len(m.partitions) == 0 {
			continue
		}
		calls += p.calls(i, m)
		cpuSec += p.after[i].cpuSec - p.before[i].cpuSec
		enqueueCPUSec += p.afterEnqueue[i].cpuSec - p.before[i].cpuSec
		bytes += p.afterEnqueue[i].memory - p.before[i].memory
	}
	return calls, cpuSec, enqueueCPUSec, bytes
}

// perMaster formats each master's figures, master1 the one serving the
// lowest slots: its address, the bench queue's partitions it serves, the
// jobs stored in them (and their share of the run's), the calls clients
// sent it and its CPU over enqueue and processing; per job, when it had
// jobs. share_max_dev_pct is the largest difference of a master's share
// from an even one (1/masters), in percent of it.
func (p phases) perMaster(ms []*master) string {
	var all int64
	for _, n := range p.jobs {
		all += n
	}
	var b strings.Builder
	maxDev := 0.0
	for i, m := range ms {
		jobs := p.masterJobs(m)
		calls := p.calls(i, m)
		cpuUS := (p.after[i].cpuSec - p.before[i].cpuSec) * 1e6
		share := 0.0
		if all > 0 {
			share = float64(jobs) / float64(all)
		}
		maxDev = max(maxDev, math.Abs(share*float64(len(ms))-1)*100)
		k := fmt.Sprintf("master%d", i+1)
		fmt.Fprintf(&b, " %s=%s %s_partitions=%d %s_jobs=%d %s_share=%.4f %s_redis_calls=%d %s_redis_cpu_us=%.0f",
			k, m.addr, k, len(m.partitions), k, jobs, k, share, k, calls, k, cpuUS)
		if jobs > 0 {
			fmt.Fprintf(&b, " %s_redis_calls_per_job=%.4f %s_redis_cpu_us_per_job=%.2f",
				k, float64(calls)/float64(jobs), k, cpuUS/float64(jobs))
		}
	}
	fmt.Fprintf(&b, " share_max_dev_pct=%.1f", maxDev)
	return b.String()
}
