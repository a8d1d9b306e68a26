package script

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// queueKeys are the keys of one queue as package store builds them.
type queueKeys struct {
	jobs, due, active, dead, claims, state, rate, paused, wake string
	dueHigh, dueLow, opts, unique, uniqueExp, settings         string
	history, historyIndex, completed, results                  string
	cancelled                                                  string
	keySet                                                     []string // lua/keys.lua's seven keys
}

func keysOf(prefix, queue string) queueKeys {
	k := func(name string) string { return fmt.Sprintf("%s:{%s}:%s", prefix, queue, name) }
	return queueKeys{
		k("jobs"), k("due"), k("active"), k("dead"), k("claims"), k("state"), k("rate"), k("paused"), k("wake"),
		k("due:high"), k("due:low"), k("opts"), k("unique"), k("unique:exp"), k("settings"),
		k("history"), k("history:minutes"), k("completed"), k("results"), k("cancelled"),
		[]string{k("k:ids"), k("k:due"), k("k:ready"), k("k:wait"), k("k:state"), k("k:count"), k("k:conf")},
	}
}

// withKeys returns keys followed by the seven keys of job keys.
func (k queueKeys) withKeys(keys ...string) []string { return append(keys, k.keySet...) }

// enqueueRaw enqueues jobs due now with the enqueue script.
func enqueueRaw(t *testing.T, c Conn, k queueKeys, ids ...string) {
	t.Helper()
	args := []string{k.wake, strconv.Itoa(len(ids)), "0", ""}
	for _, id := range ids {
		args = append(args, id, "-1", "0", "0", "0", "payload of "+id)
	}
	if err := Enqueue.Exec(t.Context(), c, []string{k.jobs, k.due, k.state, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.settings}, args).Error(); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

// claimRaw runs the claim script for up to n jobs under a 60 s lease.
func claimRaw(c Conn, k queueKeys, t *testing.T, n int) rueidis.RedisResult {
	return Claim.Exec(t.Context(), c, []string{k.jobs, k.due, k.active, k.dead, k.claims, k.state, k.rate, k.paused, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex}, []string{strconv.Itoa(n), "60000"})
}

// TestExecWaitsOutAMigratingSlot moves a queue's slot to another master
// the way redis-cli --cluster reshard does, key by key. While some of the
// queue's keys have moved and some have not, Redis 7.0 answers a claim
// (and any call of several keys, some absent) with TRYAGAIN, which rueidis
// does not resend for a script that is not retryable. The script layer
// resends it: the claim waits, and once the slot has moved it runs, once.
// An ExecMulti of a call in the moving slot and one elsewhere resends only
// the refused call.
func TestExecWaitsOutAMigratingSlot(t *testing.T) {
	t.Parallel()
	cluster := testkit.StartPrivateCluster(t, 3, 0)
	c, reg := meteredConn(t, cluster.Client(t))
	prefix := testkit.Prefix(t)
	k := keysOf(prefix, "q")
	enqueueRaw(t, c, k, "j1", "j2", "j3")
	// A counter in the moving slot and one in another slot, each called
	// with a second key that does not exist.
	count := newScript("count", "redis.call('INCR', KEYS[1])\nreturn redis.call('EXISTS', KEYS[2])", Once)
	moving := Call{Keys: []string{prefix + ":{q}:count", prefix + ":{q}:none"}}
	still := Call{Keys: []string{prefix + ":{still}:count", prefix + ":{still}:none"}}

	source := cluster.NodeOf(t, k.jobs)
	slot := source.MustDo(t, "CLUSTER", "KEYSLOT", k.jobs)
	if other := source.MustDo(t, "CLUSTER", "KEYSLOT", still.Keys[0]); other == slot {
		t.Fatalf("both queues hash to slot %s", slot)
	}
	var target *testkit.Private
	for _, n := range cluster.Nodes {
		if n != source {
			target = n
			break
		}
	}
	sourceID, targetID := source.MustDo(t, "CLUSTER", "MYID"), target.MustDo(t, "CLUSTER", "MYID")
	host, port, _ := net.SplitHostPort(target.Addr)
	source.MustDo(t, "SET", moving.Keys[0], "0")
	target.MustDo(t, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID)
	source.MustDo(t, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID)
	// The jobs hash and the counter move; the due set stays behind.
	source.MustDo(t, "MIGRATE", host, port, "", "0", "5000", "KEYS", k.jobs, moving.Keys[0])

	claimed := make(chan rueidis.RedisResult, 1)
	start := time.Now()
	go func() { claimed <- claimRaw(c, k, t, 10) }()
	multi := make(chan []rueidis.RedisResult, 1)
	go func() { multi <- count.ExecMulti(t.Context(), c, moving, still) }()

	refused := func(op string) float64 {
		return testkit.Metric(t, reg, "courier_redis_refused_total", "op", op, "reason", metrics.RefusedTryAgain)
	}
	// Both wait, refused again and again, and neither returns.
	testkit.EventuallyState(t, 10*time.Second, func() (bool, string) {
		select {
		case res := <-claimed:
			t.Fatalf("the claim returned while its slot was split between two nodes: %v", res.Error())
		case res := <-multi:
			t.Fatalf("the ExecMulti returned while one call's slot was split: %v, %v", res[0].Error(), res[1].Error())
		default:
		}
		return refused("claim") >= 3 && refused("count") >= 3,
			fmt.Sprintf("TRYAGAIN refusals: claim %v, count %v; want 3 each", refused("claim"), refused("count"))
	})
	// The call in the other slot ran, once, and is not sent again.
	if n := raw(t, c, still.Keys[0]); n != "1" {
		t.Errorf("the call outside the moving slot ran %s times, want 1 (before the migration ends)", n)
	}

	// Finish the migration: the rest of the keys, then the slot.
	source.MustDo(t, "MIGRATE", host, port, "", "0", "5000", "KEYS", k.due)
	target.MustDo(t, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
	source.MustDo(t, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
	for _, n := range cluster.Nodes {
		if n != source && n != target {
			n.MustDo(t, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
		}
	}

	res := receive(t, claimed, 10*time.Second, "the claim to end")
	t.Logf("the claim waited %s for the migration, through %v TRYAGAIN replies", time.Since(start).Round(time.Millisecond), refused("claim"))
	vals, err := res.ToArray()
	if err != nil {
		t.Fatalf("claim after the migration: %v", err)
	}
	if jobs := (len(vals) - 4) / 5; jobs != 3 {
		t.Errorf("the claim took %d jobs, want 3", jobs)
	}
	// The last token handed out is this claim's: no other run took jobs.
	if seq, tok := target.MustDo(t, "HGET", k.claims, ""), claimToken(t, vals); seq != tok {
		t.Errorf("last claim token %s, want this claim's %s: the claim ran more than once", seq, tok)
	}
	out := receive(t, multi, 10*time.Second, "the ExecMulti to end")
	for i, r := range out {
		if err := r.Error(); err != nil {
			t.Errorf("ExecMulti call %d: %v", i, err)
		}
	}
	if n := target.MustDo(t, "GET", moving.Keys[0]); n != "1" {
		t.Errorf("the call in the moving slot ran %s times, want 1", n)
	}
	if n := raw(t, c, still.Keys[0]); n != "1" {
		t.Errorf("the call outside the moving slot ran %s times, want 1", n)
	}
}

// raw reads a string key through c.
func raw(t *testing.T, c Conn, key string) string {
	t.Helper()
	s, err := c.Do(t.Context(), c.B().Get().Key(key).Build()).ToString()
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return s
}

// receive waits up to within for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("waited %s for %s", within, what)
	}
	panic("unreachable")
}

// claimToken returns the token of the first job of a claim reply.
func claimToken(t *testing.T, vals []rueidis.RedisMessage) string {
	t.Helper()
	if len(vals) < 9 {
		t.Fatalf("claim reply of %d values holds no job", len(vals))
	}
	tok, err := vals[6].ToInt64() // after now, next, corrupt, weight, then the first job's id and run-at
	if err != nil {
		t.Fatalf("claim token: %v", err)
	}
	return strconv.FormatInt(tok, 10)
}
