package store_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// queue is the queue most tests use; every test has its own key prefix.
const queue = "q"

// forEachBackend runs f as parallel subtests against a single Redis and a
// Redis Cluster, each with a Store under its own key prefix.
func forEachBackend(t *testing.T, f func(t *testing.T, s *store.Store, c rueidis.Client)) {
	t.Helper()
	backends := []struct {
		name    string
		connect func(testing.TB) rueidis.Client
	}{
		{"single", testkit.Single},
		{"cluster", testkit.Cluster},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := b.connect(t)
			f(t, store.New(c, testkit.Prefix(t), nil), c)
		})
	}
}

// job returns a job to enqueue now with the given id and payload.
func job(id, payload string) store.NewJob {
	return store.NewJob{ID: id, Payload: []byte(payload)}
}

// enqueue adds jobs to queue and fails unless every one was added.
func enqueue(t *testing.T, s *store.Store, jobs ...store.NewJob) {
	t.Helper()
	enqueueTo(t, s, queue, jobs...)
}

func enqueueTo(t *testing.T, s *store.Store, q string, jobs ...store.NewJob) {
	t.Helper()
	added, err := s.Enqueue(t.Context(), q, jobs)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	for i, ok := range added {
		if !ok {
			t.Fatalf("Enqueue: job %q was not added", jobs[i].ID)
		}
	}
	if len(added) != len(jobs) {
		t.Fatalf("Enqueue returned %d flags for %d jobs", len(added), len(jobs))
	}
}

// claim claims up to n jobs of queue and fails on an error or a bad record.
func claim(t *testing.T, s *store.Store, n int, lease time.Duration) store.Claimed {
	t.Helper()
	return claimFrom(t, s, queue, n, lease)
}

func claimFrom(t *testing.T, s *store.Store, q string, n int, lease time.Duration) store.Claimed {
	t.Helper()
	c, err := s.Claim(t.Context(), q, n, lease)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if len(c.Bad) > 0 {
		t.Fatalf("Claim: bad records %v", c.Bad)
	}
	return c
}

// claimOne claims exactly one job and returns it.
func claimOne(t *testing.T, s *store.Store, lease time.Duration) store.Record {
	t.Helper()
	c := claim(t, s, 1, lease)
	if len(c.Jobs) != 1 {
		t.Fatalf("Claim(1) returned %d jobs, want 1", len(c.Jobs))
	}
	return c.Jobs[0]
}

func ids(recs []store.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func tokens(recs []store.Record) []store.Token {
	out := make([]store.Token, len(recs))
	for i, r := range recs {
		out[i] = r.Token()
	}
	return out
}

// get reads job id of queue and fails when it cannot.
func get(t *testing.T, s *store.Store, id string) store.Snapshot {
	t.Helper()
	snap, err := s.Get(t.Context(), queue, id)
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return snap
}

// mustScore returns the score of member in key and fails when it is absent.
func mustScore(t *testing.T, c rueidis.Client, key, member string) int64 {
	t.Helper()
	v, ok := testkit.ZScore(t, c, key, member)
	if !ok {
		t.Fatalf("%s is not in %s", member, key)
	}
	return v
}

// inRange fails unless lo <= got <= hi.
func inRange(t *testing.T, what string, got, lo, hi int64) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %d, want in [%d, %d]", what, got, lo, hi)
	}
}

func do(t *testing.T, c rueidis.Client, cmd rueidis.Completed) {
	t.Helper()
	if err := c.Do(t.Context(), cmd).Error(); err != nil {
		t.Fatalf("%v: %v", cmd.Commands(), err)
	}
}

// pin is the entry lua/record.lua keeps in the active zset and the claims
// hash so that they stay in their fast encodings.
const pin = "courier pin: keeps this key in its skiplist or hash table encoding; not a job"

// queueState is everything Redis holds for one queue, for "nothing
// changed" assertions.
type queueState struct {
	Jobs, Claims      map[string]string // Claims without the token sequence
	State             map[string]string // the job state entries (lua/record.lua)
	Seq               string            // claims[""]: the last token handed out
	Due, Active, Dead map[string]float64
	Cancelled         map[string]float64 // the cancelled set (lua/cancel.lua)
	Rate              map[string]float64 // the rate window: "<cumulative>:<jobs>" → claim time, µs
}

func state(t *testing.T, c rueidis.Client, k store.Keys) queueState {
	t.Helper()
	hash := func(key string) map[string]string {
		m, err := c.Do(t.Context(), c.B().Hgetall().Key(key).Build()).AsStrMap()
		if err != nil {
			t.Fatalf("HGETALL %s: %v", key, err)
		}
		return m
	}
	zset := func(key string) map[string]float64 {
		zs, err := c.Do(t.Context(), c.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()).AsZScores()
		if err != nil {
			t.Fatalf("ZRANGE %s: %v", key, err)
		}
		m := make(map[string]float64, len(zs))
		for _, z := range zs {
			m[z.Member] = z.Score
		}
		return m
	}
	// The token sequence and the encoding pin (lua/record.lua) are not jobs.
	claims := hash(k.Claims)
	seq := claims[""]
	delete(claims, "")
	delete(claims, pin)
	active := zset(k.Active)
	if score, ok := active[pin]; ok && !math.IsInf(score, 1) {
		t.Errorf("the pin in %s has score %v, want +inf", k.Active, score)
	}
	delete(active, pin)
	return queueState{Jobs: hash(k.Jobs), Claims: claims, State: hash(k.State), Seq: seq, Due: zset(k.Due), Active: active, Dead: zset(k.Dead), Cancelled: zset(k.Cancelled), Rate: zset(k.Rate)}
}

func (a queueState) equal(b queueState) bool {
	return maps.Equal(a.Jobs, b.Jobs) && maps.Equal(a.Claims, b.Claims) && maps.Equal(a.State, b.State) && a.Seq == b.Seq && maps.Equal(a.Due, b.Due) &&
		maps.Equal(a.Active, b.Active) && maps.Equal(a.Dead, b.Dead) && maps.Equal(a.Cancelled, b.Cancelled) && maps.Equal(a.Rate, b.Rate)
}

func (a queueState) String() string {
	return fmt.Sprintf("jobs=%v claims=%v state=%v seq=%s due=%v active=%v dead=%v cancelled=%v rate=%v", slices.Sorted(maps.Keys(a.Jobs)), a.Claims, a.State, a.Seq, a.Due, a.Active, a.Dead, a.Cancelled, a.Rate)
}

// unchanged fails when the queue's state differs from before.
func unchanged(t *testing.T, c rueidis.Client, k store.Keys, before queueState) {
	t.Helper()
	if after := state(t, c, k); !after.equal(before) {
		t.Errorf("queue changed:\nbefore %v\nafter  %v", before, after)
	}
}

// waitLeasesExpired waits until the Redis clock has passed the lease
// deadline of every id in the active set k.Active: the only waits for time to
// pass in these tests, with leases of tens of milliseconds.
func waitLeasesExpired(t *testing.T, c rueidis.Client, k store.Keys, ids ...string) {
	t.Helper()
	var last int64
	for _, id := range ids {
		last = max(last, mustScore(t, c, k.Active, id))
	}
	testkit.Eventually(t, 5*time.Second, "the leases to expire", func() bool { return testkit.RedisNow(t, c) > last })
}

// seed puts one job in each of due, active and dead, so that tests which
// check that nothing changed look at a queue with something in it.
func seed(t *testing.T, s *store.Store) {
	t.Helper()
	enqueue(t, s, job("seed-dead", "d"))
	if dead := claimOne(t, s, time.Hour); dead.ID != "seed-dead" {
		t.Fatalf("seed: claimed %s", dead.ID)
	} else if ok, err := s.Kill(t.Context(), queue, dead.Token(), "seeded"); err != nil || !ok {
		t.Fatalf("Kill = %v, %v", ok, err)
	}
	enqueue(t, s, job("seed-active", "a"))
	if active := claimOne(t, s, time.Hour); active.ID != "seed-active" {
		t.Fatalf("seed: claimed %s", active.ID)
	}
	enqueue(t, s, store.NewJob{ID: "seed-due", Delay: time.Hour, Payload: []byte("s")})
}

// leaderField makes the test the leader of queue, as a Redisson-layout
// leader hash holding one field, and returns the field the fenced carrier
// scripts check.
func leaderField(t *testing.T, s *store.Store, c rueidis.Client, queue string) string {
	t.Helper()
	const field = "test-client-uuid:leader"
	do(t, c, c.B().Hset().Key(s.Keys(queue).Leader).FieldValue().FieldValue(field, "1").Build())
	return field
}
