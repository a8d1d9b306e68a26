package worker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The tests in this file start a Daemon while its Redis cannot serve it
// (issue 29, item 12): the start waits, and the Daemon runs jobs once
// Redis answers again.

// waitStarted waits until d's pool runs, and fails the test at once if Run
// returned first (its error is put back for the test's cleanup).
func waitStarted(t *testing.T, d *daemon, within time.Duration) {
	t.Helper()
	testkit.EventuallyState(t, within, func() (bool, string) {
		if exited, err := d.Exited(); exited {
			t.Fatalf("Daemon.Run returned while it should wait for Redis: %v", err)
		}
		return d.Running(), fmt.Sprintf("the pool to run (waiting on: %v)", d.Waiting())
	})
}

// stillWaiting fails the test if Run returns or starts the pool within d.
func stillWaiting(t *testing.T, rd *daemon, d time.Duration) {
	t.Helper()
	if testkit.WaitUntil(t, d, func() bool { exited, _ := rd.Exited(); return exited || rd.Running() }) {
		_, err := rd.Exited()
		t.Fatalf("the Daemon did not wait for Redis: running %v, Run returned %v", rd.Running(), err)
	}
}

// TestDaemonStartWaitsForRedis: a Daemon started while its Redis is down
// (killed after the client was made) waits, says why, and runs jobs once
// Redis is back on the same address.
func TestDaemonStartWaitsForRedis(t *testing.T) {
	t.Parallel()
	redis := testkit.StartPrivate(t)
	rdb := redis.Client(t)
	cfg := testConfig(t, testkit.Prefix(t))
	rec := newRecorder()
	reg := register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{})
	redis.Kill()

	d := startDaemon(t, rdb, reg, cfg)
	stillWaiting(t, d, 1500*time.Millisecond)
	if !worker.IsRedisUnavailable(d.Waiting()) {
		t.Errorf("Waiting() = %v while Redis is down, want the error it waits out", d.Waiting())
	}
	redis.Restart(t)
	waitStarted(t, d, 10*time.Second)
	if err := d.Waiting(); err != nil {
		t.Errorf("Waiting() = %v once the pool runs, want nil", err)
	}
	c := newClient(t, rdb, cfg)
	id := enqueue(t, c, worker.JobSpec{Queue: "q"})
	rec.WaitCalls(t, id, 1, 10*time.Second)
	if err := d.Stop(t, 10*time.Second); err != nil {
		t.Errorf("Run = %v", err)
	}
}

// TestDaemonStartWaitsOutFailover: on a Cluster whose master of a
// partition was just killed, a Daemon started before the replica is
// promoted (the slot's connections refused), or while the cluster reports
// CLUSTERDOWN, waits and then runs the jobs of every partition.
func TestDaemonStartWaitsOutFailover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		down bool // start once the cluster reports cluster_state:fail
	}{
		{"master just killed", false},
		{"cluster down", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pc := testkit.StartPrivateCluster(t, 3, 1)
			pc.WaitSynced(t)
			rdb := pc.Client(t)
			cfg := testConfig(t, testkit.Prefix(t))
			const parts = 3
			// A queue whose partition 1 is on another master than the set
			// of queue names: with that master killed, the first write of
			// the start (the names) meets CLUSTERDOWN once the cluster is
			// down, and the partitions' writes refused connections before.
			q, key := "", ""
			for i := 0; q == ""; i++ {
				name := fmt.Sprintf("failover%d", i)
				k := rediskeys.PartitionKeys(cfg.Prefix, name, parts, 1).Jobs
				if pc.NodeOf(t, k) != pc.NodeOf(t, rediskeys.QueuesKey(cfg.Prefix)) {
					q, key = name, k
				}
			}
			rec := newRecorder()
			reg := register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Partitions: parts})
			killed := pc.KillMasterOf(t, key)
			if tt.down {
				pc.WaitClusterDown(t)
			}

			d := startDaemon(t, rdb, reg, cfg)
			// It says why it waits, though rueidis resends some of its
			// commands by itself until their context ends. While the
			// cluster is down, an attempt may time out (on a loaded
			// machine) before one is refused with CLUSTERDOWN, or the
			// client may go on asking the dead master until the replica
			// is promoted (a refused connection): the reasons are read
			// until CLUSTERDOWN comes or the start ends, and either of
			// those two reasons says why.
			var seen []string
			testkit.EventuallyState(t, 15*time.Second, func() (bool, string) {
				if r := d.Waiting(); worker.IsRedisUnavailable(r) && (len(seen) == 0 || seen[len(seen)-1] != r.Error()) {
					seen = append(seen, r.Error())
				}
				said := len(seen) > 0
				if tt.down {
					said = strings.Contains(strings.Join(seen, "\n"), "CLUSTERDOWN")
				}
				return said || d.Running(), "Waiting() to say why"
			})
			switch {
			case len(seen) == 0:
				t.Errorf("the start never said why it waited")
			case tt.down && !strings.Contains(strings.Join(seen, "\n"), "CLUSTERDOWN") && !strings.Contains(strings.Join(seen, "\n"), "connection refused"):
				t.Errorf("Waiting() said %q while the cluster was down, want CLUSTERDOWN or the dead master's refused connection", seen)
			default:
				t.Logf("waiting: %s", seen[0])
			}
			pc.WaitPromoted(t, key, killed)
			waitStarted(t, d, 15*time.Second)
			c := newClient(t, rdb, cfg)
			var ids []string
			for i, n := 0, 0; n < parts; i++ {
				id := fmt.Sprintf("j%d", i)
				if rediskeys.PartitionOf(id, parts) == n {
					ids = append(ids, enqueue(t, c, worker.JobSpec{Queue: q, ID: id}))
					n++
				}
			}
			for _, id := range ids {
				rec.WaitCalls(t, id, 1, 15*time.Second)
			}
			if err := d.Stop(t, 10*time.Second); err != nil {
				t.Errorf("Run = %v", err)
			}
		})
	}
}
