package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestRunCluster runs throughput on a Cluster of three masters of the
// test's own: with the queue in three partitions each master stores and
// processes a share of the jobs and reports its own figures (in --json,
// as numbers); with one partition a single master has them all, and the
// totals are its own. No run leaves a key on any master.
func TestRunCluster(t *testing.T) { //nolint:tparallel // the runs share the cluster, and each checks that no bench key is left on it
	t.Parallel()
	c := testkit.StartPrivateCluster(t, 3, 0)
	seeds := strings.Join(c.Addrs(), ",")
	const n = 3000
	for _, tt := range []struct {
		partitions   int
		withJobs     int     // masters that get jobs
		maxDevPctMin float64 // share_max_dev_pct is at least this
	}{
		{partitions: 3, withJobs: 3},
		{partitions: 1, withJobs: 1, maxDevPctMin: 199.9},
	} {
		t.Run(fmt.Sprintf("partitions=%d", tt.partitions), func(t *testing.T) {
			args := []string{"--cluster", seeds, "--mode", "throughput", "--n", fmt.Sprint(n), "--partitions", fmt.Sprint(tt.partitions), "--json"}
			got, stdout := runJSON(t, args)
			num := func(key string) float64 {
				t.Helper()
				v, ok := got[key].(float64)
				if !ok {
					t.Fatalf("%s = %#v, not a number, in %s", key, got[key], stdout.String())
				}
				return v
			}
			if num("masters") != 3 || num("partitions") != float64(tt.partitions) || num("redis_cpu_us_per_job") <= 0 {
				t.Fatalf("figures %s", stdout.String())
			}
			var jobs, partitions float64
			withJobs := 0
			for k := 1; k <= 3; k++ {
				m := fmt.Sprintf("master%d", k)
				if addr, _ := got[m].(string); !strings.HasPrefix(addr, "127.0.0.1:") {
					t.Errorf("%s = %#v; want its address", m, got[m])
				}
				jobs += num(m + "_jobs")
				partitions += num(m + "_partitions")
				if num(m+"_jobs") > 0 {
					withJobs++
					if num(m+"_redis_cpu_us_per_job") <= 0 || num(m+"_redis_calls_per_job") <= 0 || num(m+"_share") <= 0 {
						t.Errorf("%s has jobs but no figures per job: %s", m, stdout.String())
					}
				}
			}
			if jobs != n || partitions != float64(tt.partitions) || withJobs != tt.withJobs || num("share_max_dev_pct") < tt.maxDevPctMin {
				t.Errorf("jobs %v of %d, partitions %v, %d masters with jobs (want %d), share_max_dev_pct %v: %s",
					jobs, n, partitions, withJobs, tt.withJobs, num("share_max_dev_pct"), stdout.String())
			}
			for _, node := range c.Nodes {
				noKeysLeft(t, nodeClient(t, node.Addr), args)
			}
		})
	}
}

// nodeClient is a client of one cluster node alone, for commands such as
// KEYS that read only the node they are sent to.
func nodeClient(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRunKeysCluster runs --mode keys small on a Cluster of three masters
// of the test's own, the queues in three partitions: the targets are
// printed as numbers, no cap is passed, no slot is held after the stop
// and no key is left on any master.
func TestRunKeysCluster(t *testing.T) {
	t.Parallel()
	c := testkit.StartPrivateCluster(t, 3, 0)
	args := append([]string{"--cluster", strings.Join(c.Addrs(), ","), "--partitions", "3", "--json"}, keysTiny...)
	got, stdout := runJSON(t, args)
	for _, k := range append(keysTargets, "masters", "partitions") {
		if _, ok := got[k].(float64); !ok {
			t.Errorf("%s = %#v, not a number, in %s", k, got[k], stdout.String())
		}
	}
	if got["cap_violations"] != 0.0 || got["leaked_slots"] != 0.0 || got["masters"] != 3.0 || got["partitions"] != 3.0 {
		t.Errorf("figures %s; want cap_violations 0, leaked_slots 0, 3 masters, 3 partitions", stdout.String())
	}
	for _, node := range c.Nodes {
		noKeysLeft(t, nodeClient(t, node.Addr), args)
	}
}

// runJSON runs the bench with args (--json among them), logs its output and
// returns it decoded, and as printed.
func runJSON(t *testing.T, args []string) (map[string]any, *bytes.Buffer) {
	t.Helper()
	var stdout bytes.Buffer
	if err := Run(t.Context(), args, &stdout, t.Output()); err != nil {
		t.Fatalf("bench %v: %v", args, err)
	}
	t.Log(stdout.String())
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	return got, &stdout
}
