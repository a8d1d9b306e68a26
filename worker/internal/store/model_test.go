package store_test

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// mjob is what the model expects of one job.
type mjob struct {
	set      store.Set // due, active, dead or cancelled
	ready    bool      // due now (else an hour ahead)
	short    bool      // active under a lease that has run out
	attempts int       // attempts spent and ended
	max      int       // the job's own max attempts, 0 = the default
	token    int64     // claim token while active
	died     int       // the step that moved it to dead or cancelled
	lastErr  string
	payload  string
	record   string // the record enqueue wrote, which nothing rewrites
	level    store.Priority
	key      string // its unique key ("" = none; never a window)
	// holds: the job holds key while it is not dead or cancelled. A
	// requeued job holds it again only when no other job does.
	holds bool
}

// storeModel runs random operations against the scripts and against a model
// of what they must do.
type storeModel struct {
	t      *testing.T
	s      *store.Store
	c      rueidis.Client
	rng    *rand.Rand
	jobs   map[string]*mjob
	tokens []store.Token // every token ever handed out, for stale ones
	now    int           // the step running
	// cursor is where the last page of the dead set ended: the next page
	// op reads on from it, with whatever changed in between.
	cursor store.DeadCursor
	paused bool // the queue is paused: claims take nothing
}

const modelDefaultMax = 3

// TestScriptsAgainstModel runs long random sequences of every script on a
// few ids, so that jobs are enqueued again after they are gone, claimed
// again after recovery and touched with stale tokens, and checks after every
// step that Redis holds exactly what the model expects and that DESIGN.md's
// invariants hold: a job with a record is in exactly one of due, active and
// dead; a claim entry exists exactly while the job is active; a state entry
// only while the job has a record; a record is never rewritten after its
// enqueue; while the queue is paused, claims take nothing and say so. The
// dead set
// is read page by page, with pages interleaved with the other operations,
// and must list the model's dead jobs in the order of their deaths. Some
// jobs have a priority level and some a unique key from a small pool: a
// claim takes exactly the jobs the model predicts (by level, then run-at),
// each job sits in the due zset of its level, and an enqueue whose key a
// due or active job holds is refused and told that job's id.
func TestScriptsAgainstModel(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		m := &storeModel{t: t, s: s, c: c, rng: rand.New(rand.NewPCG(seed, 1)), jobs: map[string]*mjob{}}
		for step := range 400 {
			m.now = step
			op := m.step()
			m.check(fmt.Sprintf("step %d (%s, seed %d)", step, op, seed))
		}
	})
}

func (m *storeModel) id() string { return fmt.Sprintf("j%d", m.rng.IntN(10)) }

// holder returns the id of the job that holds the unique key, or "".
func (m *storeModel) holder(key string) string {
	for id, j := range m.jobs {
		if key != "" && j.key == key && j.holds && j.set != store.SetDead && j.set != store.SetCancelled {
			return id
		}
	}
	return ""
}

// newJob returns a random job to enqueue and what the model expects of it.
func (m *storeModel) newJob() (store.NewJob, *mjob) {
	d, ready := time.Duration(0), true
	if m.rng.IntN(4) == 0 {
		d, ready = time.Hour, false
	}
	j := &mjob{set: store.SetDue, ready: ready, max: m.rng.IntN(3), payload: fmt.Sprintf("p-%d", m.rng.IntN(1000))}
	switch m.rng.IntN(4) {
	case 0:
		j.level = store.PriorityHigh
	case 1:
		j.level = store.PriorityLow
	}
	if m.rng.IntN(2) == 0 {
		j.key = fmt.Sprintf("u%d", m.rng.IntN(2))
	}
	return store.NewJob{ID: m.id(), Delay: d, MaxAttempts: j.max, Payload: []byte(j.payload), Priority: j.level, Unique: store.Unique{Key: j.key}}, j
}

// enqueue enqueues one or two jobs in one call: each is refused when
// another job holds its key, not added when its id exists, else added.
func (m *storeModel) enqueue() string {
	t := m.t
	nj := make([]store.NewJob, 1+m.rng.IntN(2))
	mj := make([]*mjob, len(nj))
	for i := range nj {
		nj[i], mj[i] = m.newJob()
	}
	got, err := m.s.EnqueueJobs(t.Context(), store.Target{Partition: queue, Version: -1}, nj)
	if err != nil || len(got) != len(nj) {
		t.Fatalf("enqueue %v = %v, %v", nj, got, err)
	}
	var what []string
	for i, j := range mj {
		id := nj[i].ID
		var want store.Enqueued
		switch h := m.holder(j.key); {
		case h != "":
			want.Holder = h
		case m.jobs[id] == nil:
			want.Added = true
		}
		if got[i] != want {
			t.Fatalf("enqueue %s (level %d, key %q) = %+v, want %+v", id, j.level, j.key, got[i], want)
		}
		if want.Added {
			j.record, _ = testkit.HGet(t, m.c, m.s.Keys(queue).Jobs, id)
			j.holds = j.key != ""
			m.jobs[id] = j
		}
		what = append(what, fmt.Sprintf("%s/%d/%q", id, j.level, j.key))
	}
	return fmt.Sprintf("enqueue %v", what)
}

// token returns the current token of a random active job, or a stale or
// made-up one.
func (m *storeModel) token() store.Token {
	if m.rng.IntN(3) > 0 {
		var active []string
		for id, j := range m.jobs {
			if j.set == store.SetActive {
				active = append(active, id)
			}
		}
		slices.Sort(active)
		if len(active) > 0 {
			id := active[m.rng.IntN(len(active))]
			return store.Token{ID: id, Claim: m.jobs[id].token}
		}
	}
	if len(m.tokens) > 0 && m.rng.IntN(2) == 0 {
		return m.tokens[m.rng.IntN(len(m.tokens))]
	}
	return store.Token{ID: m.id(), Claim: int64(m.rng.IntN(50))}
}

// held reports whether tok is the current claim of an active job.
func (m *storeModel) held(tok store.Token) *mjob {
	if j := m.jobs[tok.ID]; j != nil && j.set == store.SetActive && j.token == tok.Claim {
		return j
	}
	return nil
}

func (m *storeModel) step() string {
	t, ctx := m.t, m.t.Context()
	delay := func() (time.Duration, bool) {
		if m.rng.IntN(4) == 0 {
			return time.Hour, false
		}
		return 0, true
	}
	switch op := m.rng.IntN(15); op {
	case 0, 1:
		return m.enqueue()
	case 2, 3: // claim
		n := 1 + m.rng.IntN(4)
		m.claim(n, m.rng.IntN(3) == 0)
		return fmt.Sprintf("claim %d", n)
	case 4: // ack
		toks := []store.Token{m.token(), m.token(), m.token()}
		want := map[string]bool{}
		for _, tok := range toks {
			if m.held(tok) != nil {
				want[tok.ID] = true
			}
		}
		n, err := m.s.Ack(ctx, queue, toks)
		if err != nil || n != len(want) {
			t.Fatalf("ack %v = %d, %v; want %d", toks, n, err, len(want))
		}
		for id := range want {
			delete(m.jobs, id)
		}
		return fmt.Sprintf("ack %v", toks)
	case 5: // retry or kill
		tok := m.token()
		j := m.held(tok)
		errText := fmt.Sprintf("err-%d", m.rng.IntN(100))
		var ok bool
		var err error
		d, ready := delay()
		kill := m.rng.IntN(3) == 0
		if kill {
			ok, err = m.s.Kill(ctx, queue, tok, errText)
		} else {
			ok, err = m.s.Retry(ctx, queue, tok, d, errText)
		}
		if err != nil || ok != (j != nil) {
			t.Fatalf("retry/kill %v = %v, %v; want %v", tok, ok, err, j != nil)
		}
		if j != nil {
			j.attempts++
			j.lastErr = errText
			j.set, j.ready = store.SetDue, ready
			if kill {
				j.set, j.died = store.SetDead, m.now
			}
		}
		return fmt.Sprintf("retry/kill(%v) %v", kill, tok)
	case 6: // snooze
		toks := []store.Token{m.token(), m.token()}
		d, ready := delay()
		want := map[string]bool{}
		for _, tok := range toks {
			if m.held(tok) != nil {
				want[tok.ID] = true
			}
		}
		n, err := m.s.Snooze(ctx, queue, toks, d)
		if err != nil || n != len(want) {
			t.Fatalf("snooze %v = %d, %v; want %d", toks, n, err, len(want))
		}
		for id := range want {
			m.jobs[id].set, m.jobs[id].ready = store.SetDue, ready
		}
		return fmt.Sprintf("snooze %v", toks)
	case 7: // extend
		toks := []store.Token{m.token(), m.token()}
		lost, err := m.s.Extend(ctx, storetest.Renewals(map[string][]store.Token{queue: toks}), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var wantLost []store.Lost
		for _, tok := range toks {
			if j := m.held(tok); j != nil {
				j.short = false
			} else {
				j := m.jobs[tok.ID]
				cancelled := j != nil && j.set == store.SetCancelled
				wantLost = append(wantLost, store.Lost{Token: tok, Cancelled: cancelled})
			}
		}
		if !slices.Equal(lost[queue], wantLost) {
			t.Fatalf("extend %v lost %v, want %v", toks, lost[queue], wantLost)
		}
		return fmt.Sprintf("extend %v", toks)
	case 8: // cancel or requeue
		if m.rng.IntN(2) == 0 {
			id := m.id()
			j := m.jobs[id]
			res, err := m.s.Cancel(ctx, queue, id)
			want := store.CancelNotFound
			switch {
			case j == nil:
			case j.set == store.SetDue:
				want = store.Cancelled
			case j.set == store.SetActive:
				want = store.CancelRunning
			case j.set == store.SetDead:
				want = store.CancelDead
			case j.set == store.SetCancelled:
				want = store.CancelAlready
			}
			if err != nil || res != want {
				t.Fatalf("cancel %s = %v, %v; want %v", id, res, err, want)
			}
			switch want {
			case store.Cancelled:
				j.set, j.died = store.SetCancelled, m.now
			case store.CancelRunning:
				j.set, j.short, j.token, j.died = store.SetCancelled, false, 0, m.now
				j.attempts++
				j.lastErr = store.CancelledError
			}
			return "cancel " + id
		}
		// Mostly a dead (or cancelled) job, so that requeues meet keys
		// taken meanwhile.
		from := m.triaged()
		id := m.keptID(from)
		j := m.jobs[id]
		moved, err := m.s.Requeue(ctx, queue, from, []string{id})
		want := j != nil && j.set == from
		if err != nil || moved[0] != want {
			t.Fatalf("requeue %s = %v, %v; want %v", id, moved, err, want)
		}
		if want {
			j.holds = j.key != "" && m.holder(j.key) == ""
			j.set, j.ready, j.attempts = store.SetDue, true, 0
		}
		return fmt.Sprintf("requeue %s %s", from, id)
	case 10:
		if m.rng.IntN(2) == 0 {
			return m.purge()
		}
		return m.deadPage()
	case 11:
		return m.deadPage()
	case 12, 13:
		return m.kill()
	case 14:
		return m.pause(m.rng.IntN(2) == 0)
	default: // recover, once the short leases have run out
		var short []string
		for id, j := range m.jobs {
			if j.set == store.SetActive && j.short {
				short = append(short, id)
			}
		}
		waitLeasesExpired(t, m.c, m.s.Keys(queue), short...)
		got, err := m.s.Recover(ctx, queue, leaderField(t, m.s, m.c, queue), 100, modelDefaultMax)
		if err != nil {
			t.Fatal(err)
		}
		var want store.Recovered
		for _, id := range short {
			j := m.jobs[id]
			j.attempts++
			j.lastErr = "lease expired"
			max := cmp.Or(j.max, modelDefaultMax)
			if j.attempts >= max {
				j.set, j.died = store.SetDead, m.now
				want.Dead++
			} else {
				j.set, j.ready = store.SetDue, true
				want.Due++
			}
		}
		if got != want {
			t.Fatalf("recover = %+v, want %+v", got, want)
		}
		return "recover"
	}
}

// claim claims up to n jobs, under a lease that runs out at once when short,
// checks them against the model and returns them.
func (m *storeModel) claim(n int, short bool) []store.Record {
	t := m.t
	lease := time.Hour
	if short {
		lease = time.Millisecond
	}
	runAt := m.runAts()
	got, err := m.s.Claim(t.Context(), queue, n, lease)
	if err != nil {
		t.Fatal(err)
	}
	if got.Paused != m.paused {
		t.Fatalf("claim %d: paused %v, model %v", n, got.Paused, m.paused)
	}
	// The jobs due now, highest level first, each level by run-at (then
	// id, as Redis orders equal scores): the claim takes the first n. The
	// model knows which jobs are due and their levels; their run-ats are
	// the Redis clock's when they went to due, read from Redis.
	var ready, rest []string
	for id, j := range m.jobs {
		if j.set == store.SetDue && j.ready && !m.paused {
			ready = append(ready, id)
		}
	}
	slices.SortFunc(ready, func(a, b string) int {
		return cmp.Or(cmp.Compare(m.jobs[b].level, m.jobs[a].level), cmp.Compare(runAt[a], runAt[b]), cmp.Compare(a, b))
	})
	want := ready[:min(n, len(ready))]
	if !slices.Equal(ids(got.Jobs), want) || len(got.Bad) > 0 {
		t.Fatalf("claim %d: got %v (bad %v), want %v of ready %v (run-ats %v)", n, ids(got.Jobs), got.Bad, want, ready, runAt)
	}
	// Next is the earliest run-at of every level left.
	var next int64
	for id, j := range m.jobs {
		if j.set == store.SetDue && !slices.Contains(want, id) {
			rest = append(rest, id)
			if next == 0 || runAt[id] < next {
				next = runAt[id]
			}
		}
	}
	if m.paused {
		next = 0
	}
	if got.Next.IsZero() != (next == 0) || (next != 0 && got.Next.UnixMilli() != next) {
		t.Fatalf("claim %d: Next = %v, want %d, the earliest of %v", n, got.Next, next, rest)
	}
	for _, r := range got.Jobs {
		j := m.jobs[r.ID]
		if j == nil || j.set != store.SetDue || !j.ready {
			t.Fatalf("claim returned %s, which the model has as %+v", r.ID, j)
		}
		if r.Attempt != j.attempts+1 || !strings.HasPrefix(r.LastError, j.lastErr) || string(r.Payload) != j.payload || r.MaxAttempts != j.max ||
			r.Priority != j.level || r.RunAt.UnixMilli() != runAt[r.ID] {
			t.Fatalf("claimed %+v, model %+v", r, j)
		}
		for _, old := range m.tokens {
			if old == r.Token() {
				t.Fatalf("claim token %v was handed out before", old)
			}
		}
		j.set, j.token, j.short = store.SetActive, r.Claim, short
		m.tokens = append(m.tokens, r.Token())
	}
	return got.Jobs
}

// check compares Redis with the model and checks the invariants.
func (m *storeModel) check(where string) {
	t := m.t
	t.Helper()
	k := m.s.Keys(queue)
	st := state(t, m.c, k)
	// The due zsets of the levels: each due job is in its level's.
	dues := map[store.Priority]map[string]float64{store.PriorityNormal: st.Due, store.PriorityHigh: zsetOf(t, m.c, k.DueHigh), store.PriorityLow: zsetOf(t, m.c, k.DueLow)}
	due := maps.Clone(st.Due)
	maps.Copy(due, dues[store.PriorityHigh])
	maps.Copy(due, dues[store.PriorityLow])
	if len(st.Jobs) != len(m.jobs) {
		t.Fatalf("%s: Redis holds jobs %v, the model %d", where, st, len(m.jobs))
	}
	for id := range st.Jobs {
		sets := 0
		for _, set := range []map[string]float64{st.Due, dues[store.PriorityHigh], dues[store.PriorityLow], st.Active, st.Dead, st.Cancelled} {
			if _, ok := set[id]; ok {
				sets++
			}
		}
		if sets != 1 {
			t.Fatalf("%s: job %s is in %d sets: %v", where, id, sets, st)
		}
	}
	for _, set := range []map[string]float64{due, st.Active, st.Dead, st.Cancelled} {
		for id := range set {
			if _, ok := st.Jobs[id]; !ok {
				t.Fatalf("%s: %s is in a set without a record: %v", where, id, st)
			}
		}
	}
	for id := range st.State {
		if _, ok := st.Jobs[id]; !ok {
			t.Fatalf("%s: %s has a state entry without a record: %v", where, id, st)
		}
	}
	if len(st.Claims) != len(st.Active) {
		t.Fatalf("%s: claim entries %v do not match active %v", where, st.Claims, st.Active)
	}
	if len(st.Rate) != 0 {
		t.Fatalf("%s: claims without a rate limit wrote the rate window %v", where, st.Rate)
	}
	for id, j := range m.jobs {
		if st.Jobs[id] != j.record {
			t.Fatalf("%s: job %s's record was rewritten: %q, enqueued as %q", where, id, st.Jobs[id], j.record)
		}
		snap := get(t, m.s, id)
		attempts := j.attempts
		if j.set == store.SetActive {
			attempts++
			if snap.Record.Claim != j.token || st.Claims[id] != fmt.Sprint(j.token) {
				t.Fatalf("%s: job %s claim %d (entry %q), model %d", where, id, snap.Record.Claim, st.Claims[id], j.token)
			}
		}
		if snap.Set != j.set || snap.Record.Attempt != attempts || !strings.HasPrefix(snap.Record.LastError, j.lastErr) ||
			string(snap.Record.Payload) != j.payload {
			t.Fatalf("%s: job %s is %s %+v, model %+v", where, id, snap.Set, snap.Record, j)
		}
		if j.set == store.SetDue && j.ready != !snap.Score.After(snap.Now) {
			t.Fatalf("%s: job %s due at %v (now %v), model ready %v", where, id, snap.Score, snap.Now, j.ready)
		}
		if _, ok := dues[j.level][id]; ok != (j.set == store.SetDue) {
			t.Fatalf("%s: job %s (%s, level %d) in its level's due zset: %v", where, id, j.set, j.level, ok)
		}
		if snap.Record.Priority != j.level || snap.Record.Unique != (store.Unique{Key: j.key}) {
			t.Fatalf("%s: job %s has Priority %d and Unique %+v, model %d and %q", where, id, snap.Record.Priority, snap.Record.Unique, j.level, j.key)
		}
	}
	m.checkOptions(where)
	if p, err := m.s.Paused(t.Context(), queue); err != nil || p != m.paused {
		t.Fatalf("%s: paused %v, %v; model %v", where, p, err, m.paused)
	}
	m.checkDead(where, st.Dead)
}

// pause pauses the queue (on) or resumes it: it changes only what the model
// says is not so already.
func (m *storeModel) pause(on bool) string {
	t := m.t
	f, what := m.s.Resume, "resume"
	if on {
		f, what = m.s.Pause, "pause"
	}
	changed, err := f(t.Context(), queue)
	if err != nil || changed != (m.paused != on) {
		t.Fatalf("%s = %v, %v; model paused %v", what, changed, err, m.paused)
	}
	m.paused = on
	return what
}

// runAts returns the run-at (ms) of every job in a due zset, whatever its
// level.
func (m *storeModel) runAts() map[string]int64 {
	k := m.s.Keys(queue)
	out := map[string]int64{}
	for _, key := range []string{k.Due, k.DueHigh, k.DueLow} {
		for id, score := range zsetOf(m.t, m.c, key) {
			out[id] = int64(score)
		}
	}
	return out
}

// checkOptions compares the options and unique hashes with the model: an
// options entry for each job of a level other than normal or with a key,
// a unique entry for each key held, and no window.
func (m *storeModel) checkOptions(where string) {
	t := m.t
	t.Helper()
	k := m.s.Keys(queue)
	opts, unique := map[string]string{}, map[string]string{}
	letter := map[store.Priority]string{store.PriorityHigh: "h", store.PriorityNormal: "n", store.PriorityLow: "l"}
	for id, j := range m.jobs {
		if j.level != store.PriorityNormal || j.key != "" {
			opts[id] = letter[j.level] + ";-;0;0;" + j.key
		}
		if j.key != "" && m.holder(j.key) == id {
			unique["k:"+j.key] = "1;0;" + id
		}
	}
	if got := testkit.HGetAll(t, m.c, k.Opts); !maps.Equal(got, opts) {
		t.Fatalf("%s: options %v, model %v", where, got, opts)
	}
	if got := testkit.HGetAll(t, m.c, k.Unique); !maps.Equal(got, unique) {
		t.Fatalf("%s: unique keys %v, model %v", where, got, unique)
	}
	if testkit.Exists(t, m.c, k.UniqueExp) {
		t.Fatalf("%s: keys without a window wrote %s", where, k.UniqueExp)
	}
}
