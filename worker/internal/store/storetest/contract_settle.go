package storetest

import (
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// testSnooze: a snooze puts a held job back to due at now+delay without
// spending its attempt.
func testSnooze(k *kit) {
	t := k.t
	_, second := k.claimTwice()
	before := k.get("j").Now
	if n := k.snooze(long, second.Token(), second.Token()); n != 1 {
		t.Errorf("Snooze of a repeated token = %d, want 1", n)
	}
	snap := k.is("j", facts{Set: store.SetDue, Payload: "p"})
	within(t, "the snoozed run-at", snap.Score, before.Add(long), snap.Now.Add(long))
	if c := k.claim(1, long); len(c.Jobs) != 0 || !c.Next.Equal(snap.Score) {
		t.Errorf("claim before the snoozed run-at = %v, next %v; want nothing, next %v", ids(c.Jobs), c.Next, snap.Score)
	}
}

// testRetry: a retry spends the attempt, keeps the error and puts the job
// back to due after the delay.
func testRetry(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "j", Payload: []byte("p")})
	first := k.claimOne(long)
	if !k.retry(first.Token(), 0, "first failure") {
		t.Fatalf("Retry did not move the job")
	}
	second := k.claimOne(long)
	claimed(t, second, "j", 2, "first failure")
	// Delays count in whole ms.
	before := k.get("j").Now
	if !k.retry(second.Token(), long+1500*time.Microsecond, "second failure") {
		t.Fatalf("Retry did not move the job")
	}
	snap := k.is("j", facts{Set: store.SetDue, Attempt: 2, LastError: "second failure", Payload: "p"})
	within(t, "the retry's run-at", snap.Score, before.Add(long+time.Millisecond), snap.Now.Add(long+time.Millisecond))
	if c := k.claim(1, long); len(c.Jobs) != 0 || !c.Next.Equal(snap.Score) {
		t.Errorf("claim before the retry's run-at = %v, next %v; want nothing, next %v", ids(c.Jobs), c.Next, snap.Score)
	}
	if k.retry(second.Token(), 0, "again") {
		t.Errorf("a second Retry of the same attempt moved the job")
	}
}

// testCancel: a cancel moves a job that has not started to the cancelled
// set as it was, ends a running one (to the cancelled set with the last
// error "cancelled", its worker told on the wake channel, with the claim
// it ended, and by its next extension, its late outcome stale), leaves a
// dead or cancelled one alone, and both can be requeued from there.
func testCancel(k *kit) {
	t := k.t
	wakes := k.subscribe()
	k.enqueue(store.NewJob{ID: "dead"}, store.NewJob{ID: "running"})
	<-wakes
	held := tokensByID(k.claim(2, long).Jobs)
	if !k.kill(held["dead"], "gone") {
		t.Fatalf("Kill did not move the job")
	}
	k.enqueue(store.NewJob{ID: "due", Delay: long, Payload: []byte("pd")})
	dead := k.get("dead")
	for _, c := range []struct {
		id   string
		want store.CancelResult
	}{
		{"due", store.Cancelled},
		{"due", store.CancelAlready},
		{"running", store.CancelRunning},
		{"running", store.CancelAlready},
		{"dead", store.CancelDead},
		{"missing", store.CancelNotFound},
	} {
		if got := k.cancel(c.id); got != c.want {
			t.Errorf("Cancel(%s) = %v, want %v", c.id, got, c.want)
		}
	}
	due := k.is("due", facts{Set: store.SetCancelled, Payload: "pd"})
	within(t, "the cancel time", due.Score, due.Now.Add(-waitLimit), due.Now)
	k.unchanged("dead", dead)
	select {
	case tok := <-k.cancels:
		if tok != held["running"] {
			t.Errorf("the cancel announced the run %+v, want %+v: the claim it ended", tok, held["running"])
		}
	case <-time.After(waitLimit):
		t.Fatalf("no cancel announced within %v", waitLimit)
	}
	snap := k.get("running")
	if snap.Set != store.SetCancelled || snap.Record.LastError != store.CancelledError || snap.Record.Attempt != 1 {
		t.Errorf("the cancelled job: set %s, last error %q, attempt %d; want cancelled, %q, 1",
			snap.Set, snap.Record.LastError, snap.Record.Attempt, store.CancelledError)
	}
	lost := k.extendLost(map[string][]store.Token{q: {held["running"]}}, long)
	if want := []store.Lost{{Token: held["running"], Cancelled: true}}; !slices.Equal(lost[q], want) {
		t.Errorf("Extend of the cancelled job lost %v, want %v", lost[q], want)
	}
	if n := k.ack(held["running"]); n != 0 {
		t.Errorf("Ack of the cancelled job = %d, want 0: its claim is gone", n)
	}
	if k.retry(held["running"], 0, "late") {
		t.Errorf("Retry of the cancelled job moved it: its claim is gone")
	}
	if got := k.get("running"); got.Set != store.SetCancelled || got.Record.LastError != store.CancelledError {
		t.Errorf("after the late outcomes: set %s, last error %q; want cancelled, %q", got.Set, got.Record.LastError, store.CancelledError)
	}
	if moved := k.requeue("running", "due"); moved[0] || moved[1] {
		t.Errorf("Requeue from the dead set moved a cancelled job: %v", moved)
	}
	if moved := k.requeueFrom(store.SetCancelled, "running", "due", "dead"); !moved[0] || !moved[1] || moved[2] {
		t.Errorf("Requeue from the cancelled set = %v, want [true true false]", moved)
	}
	k.is("due", facts{Set: store.SetDue, Payload: "pd"})
	k.is("running", facts{Set: store.SetDue, LastError: store.CancelledError})
}

// testDead: a job goes to dead when its handler gives up (Kill) and when its
// lease expires with no attempts left.
func testDead(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "killed", Payload: []byte("p")})
	r := k.claimOne(long)
	before := k.get("killed").Now
	if !k.kill(r.Token(), "permanent: bad payload") {
		t.Fatalf("Kill did not move the job")
	}
	snap := k.is("killed", facts{Set: store.SetDead, Attempt: 1, LastError: "permanent: bad payload", Payload: "p"})
	within(t, "time of death", snap.Score, before, snap.Now)
	if c := k.claim(1, long); len(c.Jobs) != 0 || !c.Next.IsZero() {
		t.Errorf("claim with only a dead job = %v, next %v; want nothing", ids(c.Jobs), c.Next)
	}
	if k.kill(r.Token(), "again") || k.retry(r.Token(), 0, "again") {
		t.Errorf("the dead job's token still moves it")
	}

	// Recover: the job's own max attempts, else the queue's default.
	k.enqueue(
		store.NewJob{ID: "own-max-1", MaxAttempts: 1},
		store.NewJob{ID: "default-max"},
		store.NewJob{ID: "own-max-3", MaxAttempts: 3},
	)
	expired := k.claim(3, shortLease)
	before = k.waitExpired(ids(expired.Jobs)...)
	if got := k.recover(1); got != (store.Recovered{Due: 1, Dead: 2}) {
		t.Fatalf("Recover = %+v, want 1 due, 2 dead", got)
	}
	const noneLeft = "lease expired: the worker running attempt 1 stopped responding; no attempts left"
	for _, id := range []string{"own-max-1", "default-max"} {
		snap := k.is(id, facts{Set: store.SetDead, Attempt: 1, MaxAttempts: map[string]int{"own-max-1": 1}[id], LastError: noneLeft})
		within(t, id+"'s time of death", snap.Score, before, snap.Now)
	}
	k.is("own-max-3", facts{Set: store.SetDue, Attempt: 1, MaxAttempts: 3, LastError: "lease expired: the worker running attempt 1 stopped responding"})
}

// testRequeue: a requeue moves dead jobs to due now with their attempts
// reset and their last error kept, and skips every other id.
func testRequeue(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "a", MaxAttempts: 4, Payload: []byte("pa")}, store.NewJob{ID: "b"})
	held := tokensByID(k.claim(2, long).Jobs)
	if !k.kill(held["a"], "why") || !k.retry(held["b"], long, "b failed") {
		t.Fatalf("Kill or Retry did not move its job")
	}
	k.is("a", facts{Set: store.SetDead, Attempt: 1, MaxAttempts: 4, LastError: "why", Payload: "pa"})
	b := k.get("b")
	before := k.get("a").Now
	if moved := k.requeue("a", "b", "missing", "a"); !slices.Equal(moved, []bool{true, false, false, false}) {
		t.Errorf("Requeue = %v, want [true false false false]: only a, and once", moved)
	}
	snap := k.is("a", facts{Set: store.SetDue, MaxAttempts: 4, LastError: "why", Payload: "pa"})
	within(t, "the requeued run-at", snap.Score, before, snap.Now)
	k.unchanged("b", b)
	r := k.claimOne(long)
	claimed(t, r, "a", 1, "why")
	if r.MaxAttempts != 4 {
		t.Errorf("requeued a claimed with max attempts %d, want its own 4", r.MaxAttempts)
	}
}

// tokensByID returns the tokens of recs by job id.
func tokensByID(recs []store.Record) map[string]store.Token {
	m := make(map[string]store.Token, len(recs))
	for _, r := range recs {
		m[r.ID] = r.Token()
	}
	return m
}

// testComplete: a completion keeps a held job, with its result and finish
// time, in the completed set: it is never claimed again, its id stays
// taken, cancel and requeue leave it alone, and its old token, like any
// stale one, changes nothing.
func testComplete(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "a", Payload: []byte("pa")}, store.NewJob{ID: "b"}, store.NewJob{ID: "c", MaxAttempts: 5})
	held := tokensByID(k.claim(3, long).Jobs)
	if !k.retry(held["c"], 0, "first failure") {
		t.Fatalf("Retry did not move c")
	}
	c := k.claimOne(long)
	before := k.get("a").Now
	wrong := store.Token{ID: "b", Claim: held["b"].Claim + 1}
	n := k.complete(
		store.Completion{Token: held["a"], Result: []byte(`{"ok":true}`)},
		store.Completion{Token: held["a"], Result: []byte("again")}, // a repeated job counts once
		store.Completion{Token: wrong, Result: []byte("wrong")},
		store.Completion{Token: held["c"], Result: []byte("stale")}, // c's first claim
		store.Completion{Token: store.Token{ID: "missing", Claim: held["a"].Claim}},
	)
	if n != 1 {
		t.Errorf("Complete = %d, want 1: a repeated job counts once, a wrong or stale token not at all", n)
	}
	if n := k.complete(store.Completion{Token: held["b"], Result: []byte{}}, store.Completion{Token: c.Token()}); n != 2 {
		t.Errorf("Complete(b, c) = %d, want 2", n)
	}
	a := k.is("a", facts{Set: store.SetCompleted, Attempt: 1, Payload: "pa"})
	within(t, "a's finish time", a.Score, before, a.Now)
	if string(a.Record.Result) != `{"ok":true}` {
		t.Errorf("a's result = %q, want the first completion's", a.Record.Result)
	}
	if b := k.is("b", facts{Set: store.SetCompleted, Attempt: 1}); b.Record.Result != nil {
		t.Errorf("b's result = %q, want nil: an empty result is not stored", b.Record.Result)
	}
	k.is("c", facts{Set: store.SetCompleted, Attempt: 2, MaxAttempts: 5, LastError: "first failure"})

	if got := k.claim(3, long); len(got.Jobs) != 0 || !got.Next.IsZero() {
		t.Errorf("claim with only completed jobs = %v, next %v; want nothing", ids(got.Jobs), got.Next)
	}
	for _, r := range []store.Record{{ID: "a", Claim: held["a"].Claim}, c} {
		touchStale(k, r)
	}
	if n := k.complete(store.Completion{Token: held["a"], Result: []byte("late")}); n != 0 {
		t.Errorf("a second Complete of a = %d, want 0", n)
	}
	if added, err := k.b.Enqueue(k.ctx(), q, []store.NewJob{{ID: "a"}}); err != nil || len(added) != 1 || added[0] {
		t.Errorf("Enqueue of a completed job's id = %v, %v; want not added (the id is taken)", added, err)
	}
	if got := k.cancel("a"); got != store.CancelCompleted {
		t.Errorf("Cancel(a) = %v, want CancelCompleted", got)
	}
	if moved := k.requeue("a", "b"); slices.Contains(moved, true) {
		t.Errorf("Requeue of completed jobs = %v, want nothing moved", moved)
	}
	k.unchanged("a", a)
	if got := k.get("a"); string(got.Record.Result) != `{"ok":true}` {
		t.Errorf("a's result after the stale calls = %q", got.Record.Result)
	}
}
