package worker_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// TestLeaderHandOverOnStop stops the leading Daemon, as SIGTERM does, while
// another waits, round after round, and measures how long the queue goes
// without a leader. The leader lease is 10s: a follower that leads within
// a fraction of it was woken by the unlock message, not by the lock's TTL.
// The figures are logged (go test -v); the test asserts only that the
// follower leads, alone, long before the lease.
func TestLeaderHandOverOnStop(t *testing.T) {
	t.Parallel()
	const rounds = 6
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.LeaderLease = 10 * time.Second
		reg := register(t, nil, "q", worker.HandlerFunc(succeed), worker.QueueOptions{})
		key := store.QueueKeys(prefix, "q").Leader
		connect := testkit.Single
		if len(rdb.Nodes()) > 1 {
			connect = testkit.Cluster
		}
		leading := func(d *daemon) func() bool { return func() bool { return d.Leading("q") } }
		every := testkit.Poll{Every: time.Millisecond}

		leader := startDaemon(t, connect(t), reg, cfg)
		every.Eventually(t, 10*time.Second, "the first leader", leading(leader))
		var gaps []time.Duration
		for range rounds {
			// Each Daemon has a connection of its own, as a process has.
			testkit.Eventually(t, 10*time.Second, "no one to wait on the unlock channel", func() bool {
				return testkit.Subscribers(t, rdb, lock.Channel(key)) == 0
			})
			follower := startDaemon(t, connect(t), reg, cfg)
			testkit.Eventually(t, 10*time.Second, "the follower to wait on the unlock channel", func() bool {
				return testkit.Subscribers(t, rdb, lock.Channel(key)) == 1
			})
			start := time.Now()
			leader.Cancel() // as SIGTERM does
			every.Eventually(t, cfg.LeaderLease, "the follower to lead", leading(follower))
			gap := time.Since(start)
			gaps = append(gaps, gap)
			if gap > cfg.LeaderLease/2 {
				t.Errorf("the follower led %v after the leader stopped, want at once (woken by the unlock message), long before the %v lease", gap, cfg.LeaderLease)
			}
			if got, want := testkit.HGetAll(t, rdb, key), map[string]string{follower.ID() + ":leader": "1"}; !maps.Equal(got, want) {
				t.Errorf("leader lock = %v, want %v: the follower's one hold", got, want)
			}
			if err := leader.Stop(t, 15*time.Second); err != nil {
				t.Errorf("Daemon.Run: %v", err)
			}
			if leader.Leading("q") {
				t.Error("the stopped Daemon still leads")
			}
			leader = follower
		}
		slices.Sort(gaps)
		t.Logf("%s: hand-over on stop over %d rounds: median %v, max %v (all: %v)", t.Name(), rounds, gaps[len(gaps)/2], gaps[len(gaps)-1], gaps)
	})
}

// TestLeaderHandOverAfterLocalExpiry: the leading Daemon's connection
// stalls until its leadership ends here (no renewal confirmed for the
// lease minus the margin) while Redis keeps the lock, as renewals whose
// replies are lost keep it. When the connection recovers the Daemon leads
// again; Redis must count that term's one hold, and when the Daemon stops,
// as at SIGTERM, a waiting follower must lead at once.
func TestLeaderHandOverAfterLocalExpiry(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	prefix := testkit.Prefix(t)
	proxy, viaProxy := testkit.StartProxyClient(t, testkit.SingleAddr(t))
	cfg := testConfig(t, prefix)
	cfg.LeaderLease = 3 * time.Second // renewals every 1s, margin 300ms
	reg := register(t, nil, "q", worker.HandlerFunc(succeed), worker.QueueOptions{})
	key := store.QueueKeys(prefix, "q").Leader
	every := testkit.Poll{Every: time.Millisecond}

	a := startDaemon(t, viaProxy, reg, cfg)
	every.Eventually(t, 10*time.Second, "a to lead", func() bool { return a.Leading("q") })
	proxy.Stall()
	stop := testkit.KeepTTL(t, rdb, key, cfg.LeaderLease)
	// The hold ends here 2.7 s into the stall; the Daemon says it no longer
	// leads once the leader's duties have returned, and a duty whose call
	// is in flight on the stalled connection returns when the client gives
	// that connection up (about 5 s into the stall). Under the race
	// detector on a loaded machine that took more than 6 s (2 leases).
	every.Eventually(t, 3*cfg.LeaderLease, "a to step down", func() bool { return !a.Leading("q") })
	counted, ok := testkit.HGet(t, rdb, key, a.ID()+":leader")
	stop()
	proxy.Resume()
	if !ok || counted != "1" {
		t.Fatalf("when a stepped down, Redis counted %q (present %v), want 1", counted, ok)
	}
	every.Eventually(t, 10*time.Second, "a to lead again", func() bool { return a.Leading("q") })
	if got, want := testkit.HGetAll(t, rdb, key), map[string]string{a.ID() + ":leader": "1"}; !maps.Equal(got, want) {
		t.Errorf("a leads again: leader lock = %v, want %v (one hold, none stale under it)", got, want)
	}

	b := startDaemon(t, testkit.Single(t), reg, cfg)
	testkit.Eventually(t, 10*time.Second, "b to wait on the unlock channel", func() bool {
		return testkit.Subscribers(t, rdb, lock.Channel(key)) == 1
	})
	start := time.Now()
	a.Cancel() // as SIGTERM does
	every.Eventually(t, 2*cfg.LeaderLease, "b to lead", func() bool { return b.Leading("q") })
	took := time.Since(start)
	t.Logf("a stopped: b led %v later (leader lease %v)", took, cfg.LeaderLease)
	if took > cfg.LeaderLease/3 {
		t.Errorf("b led %v after a stopped, want at once (woken by the unlock message), long before the %v lease", took, cfg.LeaderLease)
	}
	if got, want := testkit.HGetAll(t, rdb, key), map[string]string{b.ID() + ":leader": "1"}; !maps.Equal(got, want) {
		t.Errorf("b leads: leader lock = %v, want %v", got, want)
	}
}
