package admin_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// listAll reads every page of q and returns the jobs and the page sizes.
// priorityRank orders levels as a strict-priority claim takes them.
func priorityRank(p worker.Priority) int {
	switch p {
	case worker.PriorityHigh:
		return 0
	case worker.PriorityLow:
		return 2
	}
	return 1
}

func TestListReadyAndScheduled(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		levels := []worker.Priority{worker.PriorityHigh, worker.PriorityNormal, worker.PriorityLow}
		var ready, scheduled []*worker.Job
		for i := range 12 {
			p := levels[i%3]
			r := workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: fmt.Sprintf("r%02d", i), Priority: p, UniqueKey: fmt.Sprintf("u%d", i)})
			// Scheduled jobs share run-ats across levels, in pairs: the id
			// breaks the tie.
			s := workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: fmt.Sprintf("s%02d", i), Priority: p, RunAt: time.Now().Add(time.Hour + time.Duration(i/2)*time.Minute).Truncate(time.Millisecond)})
			ready = append(ready, workertest.GetJob(t, c, "q", r))
			scheduled = append(scheduled, workertest.GetJob(t, c, "q", s))
		}
		slices.SortFunc(ready, func(a, b *worker.Job) int {
			return cmp.Or(cmp.Compare(priorityRank(a.Priority), priorityRank(b.Priority)), a.RunAt.Compare(b.RunAt), strings.Compare(a.ID, b.ID))
		})
		slices.SortFunc(scheduled, func(a, b *worker.Job) int {
			return cmp.Or(a.RunAt.Compare(b.RunAt), strings.Compare(a.ID, b.ID))
		})
		for _, tc := range []struct {
			state worker.State
			want  []*worker.Job
		}{{worker.StateReady, ready}, {worker.StateScheduled, scheduled}} {
			for _, limit := range []int{1, 5, 0} {
				got, sizes := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: tc.state, Limit: limit})
				if !slices.Equal(workertest.JobIDs(got), workertest.JobIDs(tc.want)) {
					t.Fatalf("%s, limit %d: %v, want %v", tc.state, limit, workertest.JobIDs(got), workertest.JobIDs(tc.want))
				}
				if limit == 5 && !slices.Equal(sizes, []int{5, 5, 2}) {
					t.Errorf("%s: pages of %v", tc.state, sizes)
				}
				for i, j := range got {
					if w := tc.want[i]; j.State != tc.state || j.Priority != w.Priority || !j.RunAt.Equal(w.RunAt) || j.UniqueKey != w.UniqueKey || !j.EnqueuedAt.Equal(w.EnqueuedAt) {
						t.Errorf("%s: listed %+v, Get reads %+v", tc.state, j, w)
					}
				}
			}
		}

		// A job due soon is scheduled, then ready, in its level's place.
		soon := workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", Priority: worker.PriorityLow, Delay: 200 * time.Millisecond})
		if got, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateScheduled}); got[0].ID != soon {
			t.Errorf("scheduled starts with %s, want the job due soon %s", got[0].ID, soon)
		}
		testkit.Eventually(t, 5*time.Second, "the job to be due", func() bool {
			got, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateReady})
			return len(got) == 13 && got[12].ID == soon
		})
		if got, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateScheduled}); len(got) != 12 || slices.Contains(workertest.JobIDs(got), soon) {
			t.Errorf("scheduled after it was due: %v", workertest.JobIDs(got))
		}
	})
}

func TestListActive(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := workertest.Config(t, prefix)
		cfg.Lease = time.Minute // no renewal moves a job while the pages are read
		c := workertest.NewClient(t, rdb, cfg)
		release := make(chan struct{})
		seen := make(chan *worker.Job, 10)
		reg := workertest.Register(t, nil, "q", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			seen <- job
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}), worker.QueueOptions{Concurrency: 10})
		before := time.UnixMilli(testkit.RedisNow(t, rdb))
		for i := range 7 {
			workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: fmt.Sprintf("a%d", i), Priority: worker.PriorityHigh})
		}
		d := workertest.StartDaemon(t, rdb, reg, cfg)
		defer close(release)
		for range 7 {
			job := workertest.Receive(t, seen, 10*time.Second, "a job to start")
			if job.Worker != d.ID() || job.StartedAt.Before(before) {
				t.Errorf("the handler's job %s: Worker %q, StartedAt %v; want %q, after %v", job.ID, job.Worker, job.StartedAt, d.ID(), before)
			}
		}
		after := time.UnixMilli(testkit.RedisNow(t, rdb) + 1)
		got, sizes := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateActive, Limit: 3})
		if ids := workertest.JobIDs(got); len(ids) != 7 || !slices.Equal(sizes, []int{3, 3, 1}) {
			t.Fatalf("active: %v in pages of %v", ids, sizes)
		}
		ids := workertest.JobIDs(got)
		slices.Sort(ids)
		if ids = slices.Compact(ids); len(ids) != 7 {
			t.Errorf("a job listed twice: %v", workertest.JobIDs(got))
		}
		for i, j := range got {
			if i > 0 && j.LeaseUntil.Before(got[i-1].LeaseUntil) {
				t.Errorf("%s listed after %s, whose lease ends later", j.ID, got[i-1].ID)
			}
			if j.State != worker.StateActive || j.Worker != d.ID() || j.StartedAt.Before(before) || j.StartedAt.After(after) ||
				!j.LeaseUntil.After(j.StartedAt) || j.Attempt != 1 || j.Priority != worker.PriorityHigh || j.RunAt != (time.Time{}) {
				t.Errorf("listed %+v; want active on %s, started in [%v, %v]", j, d.ID(), before, after)
			}
			if g := workertest.GetJob(t, c, "q", j.ID); g.Worker != j.Worker || !g.StartedAt.Equal(j.StartedAt) || !g.LeaseUntil.Equal(j.LeaseUntil) {
				t.Errorf("Get reads %+v, List %+v", g, j)
			}
		}
	})
}

// writeDeadErrs puts jobs into the dead set as writeDead does, job i with
// error errs(i).
func writeDeadErrs(t testing.TB, rdb rueidis.Client, prefix, queue string, ids []string, died func(i int) int64, errs func(i int) string) {
	t.Helper()
	k := store.QueueKeys(prefix, queue)
	for start := 0; start < len(ids); start += 1000 {
		hset := rdb.B().Hset().Key(k.Jobs).FieldValue()
		zadd := rdb.B().Zadd().Key(k.Dead).ScoreMember()
		for i := start; i < min(start+1000, len(ids)); i++ {
			hset = hset.FieldValue(ids[i], store.EncodeRecord(store.Record{
				Attempt: 1, MaxAttempts: 1, EnqueuedAt: time.UnixMilli(died(i) - 1000), LastError: errs(i), Payload: []byte("p-" + ids[i]),
			}))
			zadd = zadd.ScoreMember(float64(died(i)), ids[i])
		}
		testkit.Do(t, rdb, hset.Build())
		testkit.Do(t, rdb, zadd.Build())
	}
}

func TestListDeadFilter(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		// Recent: the daemon's leader trims old dead jobs.
		ms := testkit.RedisNow(t, rdb) - time.Minute.Milliseconds()
		errs := []string{"HTTP 503: upstream Timeout", "boom", "context deadline exceeded (timeout)", "bad input"}
		ids := numbered("d", 40)
		writeDeadErrs(t, rdb, prefix, "q", ids, func(i int) int64 { return ms + int64(i)*1000 }, func(i int) string { return errs[i%4] })
		// Jobs that failed for real, through the scripts: a state entry
		// holds their error.
		reg := workertest.Register(t, nil, "q", worker.HandlerFunc(func(context.Context, *worker.Job) error {
			return worker.Permanent(errors.New("real TIMEOUT"))
		}), worker.QueueOptions{})
		d := workertest.StartDaemon(t, rdb, reg, workertest.Config(t, prefix))
		real := workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", Priority: worker.PriorityLow})
		testkit.Eventually(t, 10*time.Second, "the job to die", func() bool { return workertest.InState(t, c, "q", real, worker.StateDead) })
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}

		var timeouts []string
		for i, id := range ids {
			if i%4 == 0 || i%4 == 2 {
				timeouts = append(timeouts, id)
			}
		}
		f := admin.DeadFilter{ErrorContains: "TimeOut"}
		got, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateDead, Limit: 3, Dead: f})
		if want := append(slices.Clone(timeouts), real); !slices.Equal(workertest.JobIDs(got), want) {
			t.Errorf("by error: %v, want %v", workertest.JobIDs(got), want)
		}
		if last := got[len(got)-1]; last.Priority != worker.PriorityLow || !strings.Contains(last.LastError, "real TIMEOUT") || last.State != worker.StateDead {
			t.Errorf("the real dead job: %+v", last)
		}
		// By age: DiedAfter and DiedBefore are exclusive.
		age := admin.DeadFilter{DiedAfter: time.UnixMilli(ms + 10_000), DiedBefore: time.UnixMilli(ms + 20_000)}
		if got, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateDead, Dead: age}); !slices.Equal(workertest.JobIDs(got), ids[11:20]) {
			t.Errorf("by age: %v, want %v", workertest.JobIDs(got), ids[11:20])
		}
		age.ErrorContains = "boom"
		if got, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateDead, Dead: age}); !slices.Equal(workertest.JobIDs(got), []string{"d-0013", "d-0017"}) {
			t.Errorf("by age and error: %v", workertest.JobIDs(got))
		}
	})
}

// TestListDeadShortPages: a filter that matches few jobs gives short pages,
// empty even, with a Next: one List examines at most 10,000 jobs.
func TestListDeadShortPages(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		ids := make([]string, 22_000)
		for i := range ids {
			ids[i] = fmt.Sprintf("h-%05d", i) // by bytes as by number
		}
		writeDeadErrs(t, rdb, prefix, "q", ids, func(int) int64 { return 1_700_000_000_000 }, func(i int) string {
			if i == 5 || i == 21_000 {
				return "needle"
			}
			return "hay"
		})
		q := admin.JobListParams{Queue: "q", State: worker.StateDead, Limit: 2, Dead: admin.DeadFilter{ErrorContains: "needle"}}
		var pages [][]string
		for {
			page, err := c.Jobs(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, workertest.JobIDs(page.Jobs))
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		want := [][]string{{"h-00005"}, {}, {"h-21000"}}
		if fmt.Sprint(pages) != fmt.Sprint(want) {
			t.Errorf("pages %v, want %v", pages, want)
		}
	})
}

func TestListInvalid(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		for i := range 3 {
			workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: fmt.Sprintf("j%d", i), Delay: time.Hour})
		}
		writeDead(t, rdb, prefix, "q", numbered("d", 3), func(int) int64 { return testkit.RedisNow(t, rdb) })
		ctx := t.Context()
		next := func(state worker.State) string {
			page, err := c.Jobs(ctx, admin.JobListParams{Queue: "q", State: state, Limit: 1})
			if err != nil || page.Next == "" {
				t.Fatalf("List(%s) = %+v, %v", state, page, err)
			}
			return page.Next
		}
		scheduled, dead := next(worker.StateScheduled), next(worker.StateDead)
		raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		tests := []struct {
			name  string
			q     admin.JobListParams
			field string
		}{
			{"no state", admin.JobListParams{}, "State"},
			{"unknown state", admin.JobListParams{State: "done"}, "State"},
			{"limit 1001", admin.JobListParams{State: worker.StateReady, Limit: 1001}, "Limit"},
			{"limit -1", admin.JobListParams{State: worker.StateReady, Limit: -1}, "Limit"},
			{"dead filter on ready", admin.JobListParams{State: worker.StateReady, Dead: admin.DeadFilter{ErrorContains: "x"}}, "Dead"},
			{"error filter too long", admin.JobListParams{State: worker.StateDead, Dead: admin.DeadFilter{ErrorContains: strings.Repeat("x", 257)}}, "Dead.ErrorContains"},
			{"died before after", admin.JobListParams{State: worker.StateDead, Dead: admin.DeadFilter{DiedAfter: time.Now(), DiedBefore: time.Now().Add(-time.Hour)}}, "Dead.DiedBefore"},
			{"cursor garbage", admin.JobListParams{State: worker.StateReady, Cursor: "!!!"}, "Cursor"},
			{"cursor too long", admin.JobListParams{State: worker.StateDead, Cursor: strings.Repeat("A", 600)}, "Cursor"},
			{"scheduled cursor for ready", admin.JobListParams{State: worker.StateReady, Cursor: scheduled}, "Cursor"},
			{"scheduled cursor for active", admin.JobListParams{State: worker.StateActive, Cursor: scheduled}, "Cursor"},
			{"dead cursor for scheduled", admin.JobListParams{State: worker.StateScheduled, Cursor: dead}, "Cursor"},
			{"old dead cursor for scheduled", admin.JobListParams{State: worker.StateScheduled, Cursor: raw("12:a")}, "Cursor"},
			{"ready cursor without a level", admin.JobListParams{State: worker.StateReady, Cursor: raw("r:12:a")}, "Cursor"},
			{"ready cursor with a bad level", admin.JobListParams{State: worker.StateReady, Cursor: raw("r:x:12:a")}, "Cursor"},
			{"cursor id with a space", admin.JobListParams{State: worker.StateActive, Cursor: raw("a:12:a b")}, "Cursor"},
		}
		for _, tt := range tests {
			tt.q.Queue = "q"
			err := workertest.Second(c.Jobs(ctx, tt.q))
			var ve *worker.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Errorf("%s: err = %v, want a *ValidationError on %s", tt.name, err, tt.field)
			}
		}
		if err := workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "a b", State: worker.StateReady})); err == nil {
			t.Error("bad queue: no error")
		}
		// A cursor of before List, from DeadPage.Next, still reads on.
		page, err := c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw(strings.TrimPrefix(string(mustDecode(t, dead)), "d:"))})
		if err != nil || len(page.Jobs) != 2 || page.Jobs[0].ID != "d-0001" {
			t.Errorf("an old dead cursor: %v, %v", workertest.JobIDs(page.Jobs), err)
		}
	})
}

func mustDecode(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
