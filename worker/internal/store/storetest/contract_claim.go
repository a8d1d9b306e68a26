package storetest

import (
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// testEnqueue: a job is written once per id, with what it was given, due at
// its run-at; an id that exists is reported and left untouched.
func testEnqueue(k *kit) {
	t := k.t
	start := k.clock()
	added, err := k.b.Enqueue(k.ctx(), q, []store.NewJob{
		{ID: "a", MaxAttempts: 5, Timeout: 1500 * time.Millisecond, Payload: []byte("pa")},
		{ID: "later", Delay: long},
		{ID: "a", Payload: []byte("copy in the same call")},
		{ID: "at", At: start.Add(2 * long)},
	})
	if err != nil || !slices.Equal(added, []bool{true, true, false, true}) {
		t.Fatalf("Enqueue = %v, %v; want [true true false true]", added, err)
	}
	if added, err := k.b.Enqueue(k.ctx(), q, []store.NewJob{{ID: "a", Payload: []byte("again")}}); err != nil || !slices.Equal(added, []bool{false}) {
		t.Errorf("Enqueue of an existing id = %v, %v; want [false]", added, err)
	}
	if added, err := k.b.Enqueue(k.ctx(), q, nil); err != nil || len(added) != 0 {
		t.Errorf("Enqueue of no jobs = %v, %v; want nothing", added, err)
	}

	a := k.is("a", facts{Set: store.SetDue, MaxAttempts: 5, Timeout: 1500 * time.Millisecond, Payload: "pa"})
	within(t, "a's enqueue time", a.Record.EnqueuedAt, start, a.Now)
	sameTime(t, "a's run-at", a.Score, a.Record.EnqueuedAt)
	later := k.is("later", facts{Set: store.SetDue})
	sameTime(t, "later's run-at", later.Score, later.Record.EnqueuedAt.Add(long))
	at := k.is("at", facts{Set: store.SetDue})
	sameTime(t, "at's run-at", at.Score, start.Add(2*long))
	k.gone("missing")
}

// testClaim: claims take due jobs in run-at order (then by id), count the
// attempt, hand every job of a call one token never used before, and never
// take a job before its run-at.
func testClaim(k *kit) {
	t := k.t
	start := k.clock()
	k.enqueue(
		store.NewJob{ID: "c", At: start.Add(-2 * time.Second), Payload: []byte("pc")},
		store.NewJob{ID: "a", At: start.Add(-3 * time.Second)},
		store.NewJob{ID: "b", At: start.Add(-2 * time.Second)},
		store.NewJob{ID: "d", At: start.Add(-time.Second)},
		store.NewJob{ID: "future", At: start.Add(long)},
	)
	first := k.claim(3, long)
	if got := ids(first.Jobs); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("first claim took %v, want [a b c]", got)
	}
	runAt := map[string]time.Duration{"a": -3 * time.Second, "b": -2 * time.Second, "c": -2 * time.Second}
	for _, r := range first.Jobs {
		claimed(t, r, r.ID, 1, "")
		if r.Claim != first.Jobs[0].Claim {
			t.Errorf("claim tokens %v: one call hands out one token", first.Jobs)
		}
		sameTime(t, r.ID+"'s run-at", r.RunAt, start.Add(runAt[r.ID]))
	}
	if p := string(first.Jobs[2].Payload); p != "pc" {
		t.Errorf("c's payload = %q, want pc", p)
	}
	sameTime(t, "next after the first claim", first.Next, start.Add(-time.Second))

	second := k.claim(10, long)
	if got := ids(second.Jobs); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("second claim took %v, want [d]: the future job is not due", got)
	}
	d := second.Jobs[0]
	claimed(t, d, "d", 1, "")
	if d.Claim == first.Jobs[0].Claim {
		t.Errorf("second claim reused the token %d", d.Claim)
	}
	sameTime(t, "next after the second claim", second.Next, start.Add(long))
	snap := k.is("d", facts{Set: store.SetActive, Claim: d.Claim, Attempt: 1})
	within(t, "d's lease deadline", snap.Score, ms(second.Now).Add(long), snap.Now.Add(long))

	if none := k.claim(10, long); len(none.Jobs) != 0 || !none.Next.Equal(start.Add(long)) {
		t.Errorf("claim before the run-at = %v, next %v; want nothing, next at the run-at", ids(none.Jobs), none.Next)
	}
	k.is("future", facts{Set: store.SetDue})
}

// testRateLimit: a limited claim takes no more than the window allows and,
// while a job waits, says when the window frees.
func testRateLimit(k *kit) {
	t := k.t
	limit := store.Rate{N: 2, Per: time.Minute}
	k.enqueue(store.NewJob{ID: "a"}, store.NewJob{ID: "b"}, store.NewJob{ID: "c"})
	first := k.claimFrom(q, 10, long, limit)
	if len(first.Jobs) != 2 || !first.Limited {
		t.Fatalf("limited claim took %v (limited %v), want 2 jobs, limited", ids(first.Jobs), first.Limited)
	}
	// The window frees a minute after the claim, rounded up to whole ms.
	now := ms(first.Now)
	within(t, "when the window frees", first.Next, now.Add(time.Minute), now.Add(time.Minute+time.Millisecond))
	again := k.claimFrom(q, 10, long, limit)
	if len(again.Jobs) != 0 || !again.Limited || !again.Next.Equal(first.Next) {
		t.Errorf("claim within the window = %v (limited %v, next %v), want nothing, limited, next %v",
			ids(again.Jobs), again.Limited, again.Next, first.Next)
	}

	// With nothing left due, a used-up window holds nothing back.
	k.enqueueTo(other, store.NewJob{ID: "x"}, store.NewJob{ID: "y"})
	if c := k.claimFrom(other, 10, long, limit); len(c.Jobs) != 2 || c.Limited || !c.Next.IsZero() {
		t.Errorf("claim of the last jobs = %v (limited %v, next %v), want both, not limited, no next",
			ids(c.Jobs), c.Limited, c.Next)
	}
}

// testAck: an ack deletes a job held under that token, once.
func testAck(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "a"}, store.NewJob{ID: "b"})
	c := k.claim(2, long)
	a, b := c.Jobs[0], c.Jobs[1]
	wrong := store.Token{ID: b.ID, Claim: b.Claim + 1}
	if n := k.ack(a.Token(), a.Token(), wrong, store.Token{ID: "missing", Claim: a.Claim}); n != 1 {
		t.Errorf("Ack = %d, want 1: a repeated token counts once, a wrong one not at all", n)
	}
	k.gone("a")
	k.is("b", facts{Set: store.SetActive, Claim: b.Claim, Attempt: 1})
	if n := k.ack(b.Token()); n != 1 {
		t.Errorf("Ack(b) = %d, want 1", n)
	}
	if n := k.ack(a.Token()); n != 0 {
		t.Errorf("second Ack(a) = %d, want 0", n)
	}
	k.gone("b")
}

// testStaleToken: once a job was handed back and claimed again, or deleted
// and enqueued again under its id, the old tokens change nothing.
func testStaleToken(k *kit) {
	t := k.t
	first, second := k.claimTwice()
	before := k.get("j")
	touchStale(k, first)
	k.unchanged("j", before)

	// A job enqueued again under a deleted job's id gets a token of its own.
	if n := k.ack(second.Token()); n != 1 {
		t.Fatalf("Ack = %d, want 1", n)
	}
	k.enqueue(store.NewJob{ID: "j", Payload: []byte("new")})
	third := k.claimOne(long)
	if third.Claim == first.Claim || third.Claim == second.Claim {
		t.Fatalf("the claim of the new job reused a token: %d after %d and %d", third.Claim, first.Claim, second.Claim)
	}
	before = k.get("j")
	touchStale(k, first)
	touchStale(k, second)
	k.unchanged("j", before)
}

// testRollback: when Redis loses its recent writes, the token sequence
// rolls back with the jobs, yet no (id, token) pair is handed out twice: the
// worker whose claim was lost finds its token stale (its lease extension
// reports the lease lost, its ack deletes nothing), and cannot touch the job
// claimed again since.
func testRollback(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "j", Payload: []byte("p")})
	first := k.claimOne(long) // so that the sequence holds a token
	if n := k.snooze(0, first.Token()); n != 1 {
		t.Fatalf("Snooze = %d, want 1", n)
	}
	rollBack := k.b.Checkpoint(t, q)
	lost := k.claimOne(long) // lost with the writes after the checkpoint
	claimed(t, lost, "j", 1, "")
	rollBack()
	k.is("j", facts{Set: store.SetDue, Payload: "p"})

	again := k.claimOne(long)
	claimed(t, again, "j", 1, "")
	if again.Claim == lost.Claim || again.Claim <= first.Claim {
		t.Fatalf("after the rollback, j was claimed under token %d; tokens before: %d, then %d (lost)", again.Claim, first.Claim, lost.Claim)
	}
	before := k.get("j")
	touchStale(k, lost)
	touchStale(k, first)
	k.unchanged("j", before)
	k.is("j", facts{Set: store.SetActive, Claim: again.Claim, Attempt: 1, Payload: "p"})
	if n := k.ack(again.Token()); n != 1 {
		t.Errorf("Ack under the new token = %d, want 1", n)
	}
	k.gone("j")
}

// testReusedID: a job enqueued again under the id of one that was acked
// starts afresh: no attempt spent, no last error, its own max attempts;
// nothing of the earlier job's failures carries over. A job cancelled
// before it started keeps its id (it is kept, with its attempts and last
// error, in the cancelled set) until it is trimmed or purged.
func testReusedID(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "acked", MaxAttempts: 5}, store.NewJob{ID: "cancelled", MaxAttempts: 4})
	held := tokensByID(k.claim(2, long).Jobs)
	if !k.retry(held["acked"], 0, "failed") || !k.retry(held["cancelled"], long, "failed too") {
		t.Fatalf("Retry did not move the jobs")
	}
	r := k.claimOne(long)
	claimed(t, r, "acked", 2, "failed")
	if n := k.ack(r.Token()); n != 1 {
		t.Fatalf("Ack = %d, want 1", n)
	}
	if got := k.cancel("cancelled"); got != store.Cancelled {
		t.Fatalf("Cancel = %v, want Cancelled", got)
	}
	kept := k.is("cancelled", facts{Set: store.SetCancelled, Attempt: 1, MaxAttempts: 4, LastError: "failed too"})
	if added, err := k.b.Enqueue(k.ctx(), q, []store.NewJob{{ID: "cancelled", MaxAttempts: 2}}); err != nil || len(added) != 1 || added[0] {
		t.Errorf("Enqueue under a cancelled job's id = %v, %v; want not added", added, err)
	}
	k.unchanged("cancelled", kept)

	k.enqueue(store.NewJob{ID: "acked", Payload: []byte("new")})
	k.is("acked", facts{Set: store.SetDue, Payload: "new"})
	r = k.claimOne(long)
	claimed(t, r, "acked", 1, "")
	if r.MaxAttempts != 0 || string(r.Payload) != "new" {
		t.Errorf("claim of the new job = %+v, want the queue's max attempts and payload new", r)
	}
}

// touchStale makes every call that carries a token with r's, which is
// stale, and fails when one reports a change.
func touchStale(k *kit, r store.Record) {
	t, tok := k.t, r.Token()
	t.Helper()
	if n := k.ack(tok); n != 0 {
		t.Errorf("Ack with a stale token = %d, want 0", n)
	}
	if k.retry(tok, 0, "stale") {
		t.Errorf("Retry with a stale token moved the job")
	}
	if k.kill(tok, "stale") {
		t.Errorf("Kill with a stale token moved the job")
	}
	if n := k.snooze(0, tok); n != 0 {
		t.Errorf("Snooze with a stale token = %d, want 0", n)
	}
	lost := k.extend(map[string][]store.Token{q: {tok}}, long)
	sameTokens(t, "Extend with a stale token: lost", lost, map[string][]store.Token{q: {tok}})
}

// testExtend: an extension renews the leases of held jobs, in any number of
// queues at once, and reports the tokens it could not renew.
func testExtend(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "a"}, store.NewJob{ID: "b"})
	k.enqueueTo(other, store.NewJob{ID: "x"})
	c := k.claim(2, time.Second)
	a, b := c.Jobs[0], c.Jobs[1]
	x := k.claimFrom(other, 1, time.Second, store.Rate{}).Jobs[0]
	if n := k.ack(b.Token()); n != 1 {
		t.Fatalf("Ack(b) = %d, want 1", n)
	}
	before, beforeX := k.get("a").Now, k.getFrom(other, "x").Now
	never := store.Token{ID: "never", Claim: a.Claim}
	lost := k.extend(map[string][]store.Token{q: {a.Token(), b.Token(), never}, other: {x.Token()}}, long)
	sameTokens(t, "lost", lost, map[string][]store.Token{q: {b.Token(), never}})
	snap := k.is("a", facts{Set: store.SetActive, Claim: a.Claim, Attempt: 1})
	within(t, "a's renewed lease", snap.Score, before.Add(long), snap.Now.Add(long))
	xs := k.getFrom(other, "x")
	within(t, "x's renewed lease", xs.Score, beforeX.Add(long), xs.Now.Add(long))
}
