package workertest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Match selects jobs for RequireEnqueued, RequireNotEnqueued and
// Enqueued: a job matches when it passes every Match given. Make one with
// Queue, Kind, Payload, PayloadEqual, RunAt, Priority, UniqueKey, State,
// ID or Header.
type Match struct {
	desc string
	ok   func(j *worker.Job) bool
}

// Queue matches the jobs of queue.
func Queue(name string) Match {
	return Match{fmt.Sprintf("queue %q", name), func(j *worker.Job) bool { return j.Queue == name }}
}

// Kind matches the jobs of a kind (worker.JobSpec.Kind); "" matches the
// jobs enqueued without one.
func Kind(kind string) Match {
	return Match{fmt.Sprintf("kind %q", kind), func(j *worker.Job) bool { return j.Kind == kind }}
}

// Payload matches the jobs whose payload decodes as JSON into a T for
// which ok returns true.
func Payload[T any](ok func(T) bool) Match {
	return Match{"a payload of " + typeName[T]() + " that the predicate accepts", func(j *worker.Job) bool {
		v, err := decode[T](j.Payload)
		return err == nil && ok(v)
	}}
}

// PayloadEqual matches the jobs whose payload decodes as JSON into a T
// equal to want (reflect.DeepEqual): fields the JSON leaves out decode
// as their zero values.
func PayloadEqual[T any](want T) Match {
	return Match{fmt.Sprintf("payload %+v", want), func(j *worker.Job) bool {
		v, err := decode[T](j.Payload)
		return err == nil && reflect.DeepEqual(v, want)
	}}
}

// RunAt matches the jobs due at at, to the millisecond (the store keeps
// run-ats in ms): with Store's clock, a job enqueued with Delay d is due
// at Store.Now().Add(d), exactly. A job that ran keeps the run-at of its
// last attempt.
func RunAt(at time.Time) Match {
	at = at.Truncate(time.Millisecond)
	return Match{"run-at " + at.Format(time.RFC3339Nano), func(j *worker.Job) bool { return j.RunAt.Equal(at) }}
}

// Priority matches the jobs of priority p.
func Priority(p worker.Priority) Match {
	return Match{"priority " + p.String(), func(j *worker.Job) bool { return j.Priority == p }}
}

// UniqueKey matches the jobs of unique key key (worker.JobSpec.UniqueKey).
func UniqueKey(key string) Match {
	return Match{fmt.Sprintf("unique key %q", key), func(j *worker.Job) bool { return j.UniqueKey == key }}
}

// State matches the jobs in state s: worker.StateScheduled (due later),
// StateReady (due now), StateActive, StateDead or StateCompleted.
func State(s worker.State) Match {
	return Match{"state " + string(s), func(j *worker.Job) bool { return j.State == s }}
}

// ID matches the job of id id.
func ID(id string) Match {
	return Match{fmt.Sprintf("id %q", id), func(j *worker.Job) bool { return j.ID == id }}
}

// Header matches the jobs with header name set to value.
func Header(name, value string) Match {
	return Match{fmt.Sprintf("header %s=%q", name, value), func(j *worker.Job) bool {
		v, ok := j.Headers[name]
		return ok && v == value
	}}
}

// RequireEnqueued fails the test unless the store holds a job that
// matches every one of ms and whose payload decodes as JSON into a T;
// it returns the first such job (in the order of Enqueued) and its
// payload. The failure lists every job the store holds. Use []byte as T
// for a payload that is not JSON, and any when the payload does not
// matter.
//
// The store is read through admin.Client.Jobs, so it sees exactly what
// the scripts stored: jobs not yet run (scheduled, ready), running, dead,
// and completed in a queue that retains them. A job that ran and was
// deleted is no longer there.
func RequireEnqueued[T any](t testing.TB, s *Store, ms ...Match) (T, *worker.Job) {
	t.Helper()
	all := s.jobs(t)
	want := append([]Match{decodes[T]()}, ms...)
	for _, j := range all {
		if matches(j, want) {
			v, _ := decode[T](j.Payload)
			return v, j
		}
	}
	t.Fatalf("workertest.RequireEnqueued: no job with %s; %s", describe(want), listing(all))
	var zero T
	return zero, nil
}

// RequireNotEnqueued fails the test when the store holds a job that
// matches every one of ms (all jobs, when ms is empty), listing those
// that do. It reads the store as RequireEnqueued does.
func RequireNotEnqueued(t testing.TB, s *Store, ms ...Match) {
	t.Helper()
	var found []*worker.Job
	for _, j := range s.jobs(t) {
		if matches(j, ms) {
			found = append(found, j)
		}
	}
	if len(found) > 0 {
		t.Fatalf("workertest.RequireNotEnqueued: want no job with %s; %s", describe(ms), listing(found))
	}
}

// Enqueued returns the jobs of the store that match every one of ms (all
// of them, when ms is empty): by queue name, then by state (scheduled,
// ready, active, dead, completed), then in admin.Client.Jobs's order
// (scheduled by run-at). It reads the store as RequireEnqueued does.
func Enqueued(t testing.TB, s *Store, ms ...Match) []*worker.Job {
	t.Helper()
	var found []*worker.Job
	for _, j := range s.jobs(t) {
		if matches(j, ms) {
			found = append(found, j)
		}
	}
	return found
}

// listStates are the states Enqueued reads, in its order.
var listStates = []worker.State{worker.StateScheduled, worker.StateReady, worker.StateActive, worker.StateDead, worker.StateCompleted}

// jobs reads every job of every known queue.
func (s *Store) jobs(t testing.TB) []*worker.Job {
	t.Helper()
	ctx := t.Context()
	var names []string
	for p := (admin.QueuePage{Next: ""}); ; {
		var err error
		p, err = s.admin.Queues(ctx, admin.QueueListParams{Cursor: p.Next, Limit: admin.QueuesPerPageMax})
		if err != nil {
			t.Fatalf("workertest: list the queues: %v", err)
		}
		names = append(names, p.Names...)
		if p.Next == "" {
			break
		}
	}
	slices.Sort(names)
	var all []*worker.Job
	for _, q := range names {
		for _, st := range listStates {
			for cursor := ""; ; {
				page, err := s.admin.Jobs(ctx, admin.JobListParams{Queue: q, State: st, Cursor: cursor, Limit: admin.ListLimitMax})
				if err != nil {
					t.Fatalf("workertest: list the %s jobs of queue %q: %v", st, q, err)
				}
				all = append(all, page.Jobs...)
				if cursor = page.Next; cursor == "" {
					break
				}
			}
		}
	}
	return all
}

// decodes matches the jobs whose payload decodes into a T.
func decodes[T any]() Match {
	return Match{"a payload that decodes into " + typeName[T](), func(j *worker.Job) bool {
		_, err := decode[T](j.Payload)
		return err == nil
	}}
}

// decode decodes a payload as JSON into a T. A []byte T gets the payload
// itself; an interface T (any) takes every payload: what JSON decodes it
// into, or nil for one that is not JSON (an empty payload among them).
func decode[T any](payload []byte) (T, error) {
	var v T
	if b, ok := any(&v).(*[]byte); ok {
		*b = append([]byte(nil), payload...)
		return v, nil
	}
	err := json.Unmarshal(payload, &v)
	if err != nil && reflect.TypeFor[T]().Kind() == reflect.Interface {
		var zero T
		return zero, nil
	}
	return v, err
}

// typeName names T, an interface type too.
func typeName[T any]() string { return reflect.TypeFor[T]().String() }

func matches(j *worker.Job, ms []Match) bool {
	for _, m := range ms {
		if m.ok == nil || !m.ok(j) {
			return false
		}
	}
	return true
}

func describe(ms []Match) string {
	if len(ms) == 0 {
		return "any content"
	}
	ds := make([]string, len(ms))
	for i, m := range ms {
		ds[i] = m.desc
	}
	return strings.Join(ds, ", ")
}

// maxListed bounds the jobs a failure lists.
const maxListed = 50

// listing describes jobs, one a line.
func listing(jobs []*worker.Job) string {
	if len(jobs) == 0 {
		return "the store holds no job"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the store holds %d:", len(jobs))
	for i, j := range jobs {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  … and %d more", len(jobs)-maxListed)
			break
		}
		fmt.Fprintf(&b, "\n  %s/%s %s", j.Queue, j.ID, j.State)
		if j.Kind != "" {
			fmt.Fprintf(&b, " kind %q", j.Kind)
		}
		if !j.RunAt.IsZero() {
			fmt.Fprintf(&b, " run-at %s", j.RunAt.Format(time.RFC3339Nano))
		}
		if j.Priority != worker.PriorityNormal {
			fmt.Fprintf(&b, " priority %s", j.Priority)
		}
		if j.UniqueKey != "" {
			fmt.Fprintf(&b, " unique key %q", j.UniqueKey)
		}
		fmt.Fprintf(&b, " payload %s", abbreviate(j.Payload))
	}
	return b.String()
}

// abbreviate shows a payload, as is when it is JSON and quoted
// otherwise, cut to 200 bytes.
func abbreviate(p []byte) string {
	const most = 200
	cut := ""
	if len(p) > most {
		p, cut = p[:most], "…"
	}
	if json.Valid(p) {
		return string(p) + cut
	}
	return fmt.Sprintf("%q", p) + cut
}
