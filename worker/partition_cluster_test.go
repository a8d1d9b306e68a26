package worker_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// commandStat reads, from a node's INFO commandstats, the calls of one
// command (e.g. "evalsha"), and its INFO cpu's used_cpu_sys + user (s).
func nodeFigures(t *testing.T, n *testkit.Private) (evalsha int64, cpu float64) {
	t.Helper()
	stats := n.MustDo(t, "INFO", "commandstats")
	for line := range strings.SplitSeq(stats, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:calls="); ok {
			evalsha, _ = strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		}
	}
	for line := range strings.SplitSeq(n.MustDo(t, "INFO", "cpu"), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			cpu += f
		}
	}
	return evalsha, cpu
}

// TestPartitionsSpreadOverMasters runs a queue of 6 partitions on a
// Cluster of 3 masters with a replica each: each master holds a third of
// the jobs (±10%) and runs about a third of the script calls (±40%: a
// claim takes what is free when its partition's turn comes, so how many
// calls 3,000 jobs need varies with timing far more than where the jobs
// are; CI under -race saw 40.5% / 30.7% / 28.8%). The check is that no
// master idles while another does the work; the Redis CPU of each is
// logged (the machine is shared: not asserted).
func TestPartitionsSpreadOverMasters(t *testing.T) {
	t.Parallel()
	pc := testkit.StartPrivateCluster(t, 3, 1)
	rdb := pc.Client(t)
	prefix := testkit.Prefix(t)
	const q, parts, jobs = "spread", 6, 3000
	cfg := testConfig(t, prefix)
	c := newClient(t, rdb, cfg)
	rec := newRecorder()
	reg := register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Concurrency: 32, Partitions: parts})
	if err := c.Pause(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, rdb, reg, cfg)
	waitPartitions(t, c, q, parts)
	if err := c.Pause(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	masters := pc.Nodes[:pc.Masters]
	enqueueAll(t, c, specs(q, "s", jobs))
	held := map[string]int64{}
	sizes := partitionSizes(t, rdb, prefix, q, parts)
	for i := range parts {
		node := pc.NodeOf(t, rediskeys.PartitionKeys(prefix, q, parts, i).Jobs)
		held[node.Addr] += sizes[i]
	}
	before := make([][2]float64, len(masters))
	for i, m := range masters {
		e, cpu := nodeFigures(t, m)
		before[i] = [2]float64{float64(e), cpu}
	}
	if err := c.Resume(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, "every job to run", func() bool {
		return rec.Count() >= jobs && stats(t, c, q) == admin.QueueStats{}
	})
	var calls, total []float64
	var sumCalls float64
	for i, m := range masters {
		e, cpu := nodeFigures(t, m)
		calls = append(calls, float64(e)-before[i][0])
		total = append(total, cpu-before[i][1])
		sumCalls += calls[i]
	}
	var report []string
	for i, m := range masters {
		share := float64(held[m.Addr]) / jobs
		callShare := calls[i] / sumCalls
		report = append(report, fmt.Sprintf("%s: %d jobs (%.1f%%), %.0f script calls (%.1f%%), %.0f µs CPU/job",
			m.Addr, held[m.Addr], 100*share, calls[i], 100*callShare, total[i]*1e6/max(float64(held[m.Addr]), 1)))
		if share < 0.3 || share > 0.367 {
			t.Errorf("master %s holds %.1f%% of the jobs; want a third ±10%%", m.Addr, 100*share)
		}
		if callShare < 0.2 || callShare > 0.467 {
			t.Errorf("master %s ran %.1f%% of the script calls; want a third ±40%%", m.Addr, 100*callShare)
		}
	}
	t.Logf("spread over the masters:\n%s", strings.Join(report, "\n"))
}
