package store_test

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// The dead set's part of the model-based test (model_test.go): purges, pages
// read one step at a time, and a full listing after every step.

// kill claims a job and kills it at once, so that the dead set fills up.
func (m *storeModel) kill() string {
	t := m.t
	var killed []string
	for _, r := range m.claim(1+m.rng.IntN(2), false) {
		errText := fmt.Sprintf("killed-%d", m.rng.IntN(100))
		if ok, err := m.s.Kill(t.Context(), queue, r.Token(), errText); !ok || err != nil {
			t.Fatalf("kill %v = %v, %v", r.Token(), ok, err)
		}
		j := m.jobs[r.ID]
		j.attempts++
		j.lastErr = errText
		j.set, j.died = store.SetDead, m.now
		killed = append(killed, r.ID)
	}
	return fmt.Sprintf("kill %v", killed)
}

// purge deletes a few ids of the dead set, or of the cancelled set: only
// the model's jobs of that set go.
func (m *storeModel) purge() string {
	t := m.t
	from := m.triaged()
	ids := []string{m.keptID(from), m.id(), m.keptID(from)}
	want := make([]bool, len(ids))
	for i, id := range ids {
		if j := m.jobs[id]; j != nil && j.set == from && !slices.Contains(ids[:i], id) {
			want[i] = true
		}
	}
	got, err := m.s.Purge(t.Context(), queue, from, ids, time.Time{})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("purge %v = %v, %v; want %v", ids, got, err, want)
	}
	for i, id := range ids {
		if want[i] {
			delete(m.jobs, id)
		}
	}
	return fmt.Sprintf("purge %s %v", from, ids)
}

// triaged picks the set a requeue or purge works on: dead or cancelled.
func (m *storeModel) triaged() store.Set {
	if m.rng.IntN(2) == 0 {
		return store.SetCancelled
	}
	return store.SetDead
}

// keptID returns the id of a job of the model in set (dead or cancelled),
// or else a random one.
func (m *storeModel) keptID(set store.Set) string {
	var dead []string
	for id, j := range m.jobs {
		if j.set == set {
			dead = append(dead, id)
		}
	}
	if len(dead) == 0 || m.rng.IntN(3) == 0 {
		return m.id()
	}
	slices.Sort(dead)
	return dead[m.rng.IntN(len(dead))]
}

// deadPage reads the page after the cursor the previous page left, maybe
// up to the time of death of a job, and compares it with the dead set as it
// is now: the page starts right after the cursor, whatever changed since.
func (m *storeModel) deadPage() string {
	t := m.t
	q := store.DeadQuery{After: m.cursor, Limit: 1 + m.rng.IntN(2), IDsOnly: m.rng.IntN(2) == 0}
	order := deadOrder(state(t, m.c, m.s.Keys(queue)).Dead)
	want := afterCursor(order, m.cursor)
	if len(order) > 0 && m.rng.IntN(4) == 0 {
		until := order[m.rng.IntN(len(order))].Died
		q.Until = time.UnixMilli(until)
		want = slices.DeleteFunc(slices.Clone(want), func(p deadPos) bool { return p.Died > until })
	}
	page, err := m.s.Dead(t.Context(), queue, q)
	if err != nil {
		t.Fatal(err)
	}
	more := len(want) > q.Limit
	want = want[:min(q.Limit, len(want))]
	if got := positions(page.Jobs); !slices.Equal(got, want) || page.Next.IsZero() == more {
		t.Fatalf("dead page %+v: %v (next %+v), want %v (more %v)", q, got, page.Next, want, more)
	}
	m.checkDeadRecords(page.Jobs, q.IDsOnly)
	m.cursor = page.Next
	return fmt.Sprintf("dead page %+v", q)
}

// checkDead reads the whole dead set page by page and compares it with the
// model and with the set Redis holds.
func (m *storeModel) checkDead(where string, set map[string]float64) {
	t := m.t
	t.Helper()
	walk := walkDead(t, m.s, queue, store.DeadQuery{Limit: 1 + m.rng.IntN(4)})
	got := positions(walk)
	if want := deadOrder(set); !slices.Equal(got, want) {
		t.Fatalf("%s: the dead set lists as %v, Redis holds %v", where, got, want)
	}
	dead := 0
	for _, j := range m.jobs {
		if j.set == store.SetDead {
			dead++
		}
	}
	if len(got) != dead {
		t.Fatalf("%s: %d jobs listed dead, the model has %d", where, len(got), dead)
	}
	m.checkDeadRecords(walk, false)
	// A job that died at an earlier step never lists after one that died
	// later (jobs that died in the same ms list by id).
	for a, pa := range got {
		for _, pb := range got[a+1:] {
			if m.jobs[pa.ID].died > m.jobs[pb.ID].died && pa.Died < pb.Died {
				t.Fatalf("%s: %v lists before %v but died at a later step", where, pa, pb)
			}
		}
	}
}

// checkDeadRecords compares listed jobs with the model.
func (m *storeModel) checkDeadRecords(jobs []store.DeadJob, idsOnly bool) {
	t := m.t
	t.Helper()
	for _, dj := range jobs {
		j, r := m.jobs[dj.Record.ID], dj.Record
		if j == nil || j.set != store.SetDead || dj.Err != nil {
			t.Fatalf("listed dead %+v, model %+v", dj, j)
		}
		if idsOnly {
			if r.Payload != nil || r.Attempt != 0 {
				t.Fatalf("listed %+v without its record, yet it carries one", dj)
			}
			continue
		}
		if r.Attempt != j.attempts || r.MaxAttempts != j.max || !strings.HasPrefix(r.LastError, j.lastErr) || string(r.Payload) != j.payload {
			t.Fatalf("listed dead %+v, model %+v", r, j)
		}
	}
}
