package chaos

import (
	"fmt"
	"math"
	"os/exec"
	"slices"
	"testing"

	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// clusterNodes is CLUSTER NODES of a Cluster of three masters with a
// replica each, as redis-cli --cluster create makes it, in the middle of
// a slot's migration.
const clusterNodes = `a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460 [4772->-b2]
b2 127.0.0.1:7002@17002 master - 0 1700000000000 2 connected 5461-10922
c3 127.0.0.1:7003@17003 master - 0 1700000000000 3 connected 10923-16383
d4 127.0.0.1:7004@17004 slave c3 0 1700000000000 3 connected
e5 127.0.0.1:7005@17005 slave a1 0 1700000000000 1 connected
f6 127.0.0.1:7006@17006 slave,fail b2 1700000000000 1700000000000 2 disconnected
`

func TestParseClusterNodesPairsMastersWithTheirReplicas(t *testing.T) {
	t.Parallel()
	got, err := parseClusterNodes(clusterNodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []shard{
		{master: "127.0.0.1:7001", replicas: []string{"127.0.0.1:7005"}, slots: [][2]int{{0, 5460}}},
		{master: "127.0.0.1:7002", replicas: []string{"127.0.0.1:7006"}, slots: [][2]int{{5461, 10922}}},
		{master: "127.0.0.1:7003", replicas: []string{"127.0.0.1:7004"}, slots: [][2]int{{10923, 16383}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shards\n got %v\nwant %v", got, want)
	}
	if !got[0].serves(4772) || got[0].serves(5461) || !got[2].serves(16383) {
		t.Errorf("serves: wrong ranges in %v", got)
	}
	if _, err := parseClusterNodes("a1 127.0.0.1:7001@17001 master - 0 0 1 connected x-y"); err == nil {
		t.Error("bad slots parsed")
	}
}

func TestParseWorkReadsScriptCallsAndCPU(t *testing.T) {
	t.Parallel()
	info := "# CPU\r\nused_cpu_sys:1.25\r\nused_cpu_user:2.5\r\nused_cpu_sys_children:9\r\n\r\n# Commandstats\r\n" +
		"cmdstat_eval:calls=3,usec=172,usec_per_call=57.33\r\ncmdstat_evalsha:calls=140,usec=15651,usec_per_call=111.41\r\n" +
		"cmdstat_get:calls=1000,usec=1\r\n"
	if w := parseWork(info); w.calls != 143 || math.Abs(w.cpu-3.75) > 1e-9 {
		t.Errorf("work = %+v, want 143 calls and 3.75 s", w)
	}
}

func TestWorkMeterAddsAcrossARestart(t *testing.T) {
	t.Parallel()
	m := &workMeter{last: map[string]work{}, total: map[string]work{}}
	m.add("a", work{calls: 100, cpu: 10}) // the baseline: not counted
	m.add("a", work{calls: 150, cpu: 11})
	m.add("a", work{calls: 20, cpu: 0.5}) // killed, started again
	m.add("a", work{calls: 30, cpu: 0.75})
	if got := m.total["a"]; got.calls != 80 || got.cpu != 1.75 {
		t.Errorf("total = %+v, want 80 calls and 1.75 s", got)
	}
}

func TestSharesSplitTheJobsByTheMasterOfTheirPartition(t *testing.T) {
	t.Parallel()
	shards, err := parseClusterNodes(clusterNodes)
	if err != nil {
		t.Fatal(err)
	}
	m := &workMeter{last: map[string]work{}, total: map[string]work{
		"127.0.0.1:7001": {calls: 100, cpu: 1}, "127.0.0.1:7005": {cpu: 1}, // the pair counts as one
		"127.0.0.1:7002": {calls: 100, cpu: 1},
		"127.0.0.1:7003": {calls: 200, cpu: 2},
	}}
	slots := []int{4772, 7513, 10246, 12976, 15707, 2047} // the six partitions of "chaos"
	var ids []string
	for i := range 600 {
		ids = append(ids, fmt.Sprintf("j%06d", i+1))
	}
	got := m.shares(shards, slots, ids)
	wantParts := [][]int{{0, 5}, {1, 2}, {3, 4}}
	n := 0
	for i, s := range got {
		if !slices.Equal(s.Partitions, wantParts[i]) {
			t.Errorf("master %s serves partitions %v, want %v", s.Master, s.Partitions, wantParts[i])
		}
		want := 0
		for _, id := range ids {
			if slices.Contains(wantParts[i], rediskeys.PartitionOf(id, 6)) {
				want++
			}
		}
		if s.Delivered != want || math.Abs(s.Jobs-float64(want)/600) > 1e-9 {
			t.Errorf("master %s: %d jobs (share %v), want %d", s.Master, s.Delivered, s.Jobs, want)
		}
		n += s.Delivered
	}
	if n != len(ids) {
		t.Errorf("the shares count %d jobs of %d", n, len(ids))
	}
	if got[0].Calls != 0.25 || got[2].Calls != 0.5 || got[0].CPU != 0.4 || got[0].CPUSeconds != 2 {
		t.Errorf("calls and CPU: %+v", got)
	}
}

// TestShardsPairsEachMasterWithItsReplica reads the shards of a real
// Cluster just made, when a node's CLUSTER NODES may not show the
// replicas yet.
func TestShardsPairsEachMasterWithItsReplica(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs redis-server processes; run without -short")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("needs redis-server on PATH: %v", err)
	}
	c, err := startCluster(t.Context(), t.TempDir(), 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	shards, err := c.shards(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	slots := 0
	for _, s := range shards {
		if len(s.replicas) != 1 {
			t.Errorf("master %s has replicas %v, want one", s.master, s.replicas)
		}
		for _, a := range append([]string{s.master}, s.replicas...) {
			seen[a] = true
		}
		for _, r := range s.slots {
			slots += r[1] - r[0] + 1
		}
	}
	if len(shards) != 3 || len(seen) != 6 || slots != 16384 {
		t.Errorf("shards %+v: want 3 masters with a replica each, every node once, every slot served", shards)
	}
}
