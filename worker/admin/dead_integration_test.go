package admin_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
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

// writeDead puts jobs straight into the dead set of queue, as a worker that
// used up their only attempt leaves them: ids[i] died at died(i) ms.
func writeDead(t testing.TB, rdb rueidis.Client, prefix, queue string, ids []string, died func(i int) int64) {
	t.Helper()
	k := store.QueueKeys(prefix, queue)
	for start := 0; start < len(ids); start += 1000 {
		hset := rdb.B().Hset().Key(k.Jobs).FieldValue()
		zadd := rdb.B().Zadd().Key(k.Dead).ScoreMember()
		for i := start; i < min(start+1000, len(ids)); i++ {
			hset = hset.FieldValue(ids[i], store.EncodeRecord(store.Record{
				Attempt: 1, MaxAttempts: 1, EnqueuedAt: time.UnixMilli(died(i) - 1000), LastError: "boom", Payload: []byte("p-" + ids[i]),
			}))
			zadd = zadd.ScoreMember(float64(died(i)), ids[i])
		}
		for _, cmd := range []rueidis.Completed{hset.Build(), zadd.Build()} {
			if err := rdb.Do(t.Context(), cmd).Error(); err != nil {
				t.Fatalf("write dead jobs: %v", err)
			}
		}
	}
}

// numbered returns n ids "<name>-0000", "<name>-0001", ...
func numbered(name string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%04d", name, i)
	}
	return ids
}

// deadPage reads a page of dead jobs and fails the test on an error.
func deadPage(t testing.TB, c *workertest.Client, queue string, q admin.JobListParams) admin.JobPage {
	t.Helper()
	q.Queue, q.State = queue, worker.StateDead
	page, err := c.Jobs(t.Context(), q)
	if err != nil {
		t.Fatalf("Jobs(%+v): %v", q, err)
	}
	return page
}

// walkDead reads the dead set of queue page by page and returns the ids and
// the size of each page.
func walkDead(t testing.TB, c *workertest.Client, queue string, limit int) (ids []string, sizes []int) {
	t.Helper()
	q := admin.JobListParams{Limit: limit}
	for {
		page := deadPage(t, c, queue, q)
		sizes = append(sizes, len(page.Jobs))
		for _, j := range page.Jobs {
			if j.State != worker.StateDead || j.Queue != queue || j.DiedAt.IsZero() {
				t.Fatalf("listed %+v, want a dead job of %s with its time of death", j, queue)
			}
			ids = append(ids, j.ID)
		}
		if page.Next == "" {
			return ids, sizes
		}
		if url.QueryEscape(page.Next) != page.Next {
			t.Fatalf("cursor %q needs escaping in a URL", page.Next)
		}
		if len(sizes) > 10_000 {
			t.Fatal("the walk does not end")
		}
		q.Cursor = page.Next
	}
}

func TestClientDead(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		st := store.New(rdb, prefix, nil)
		ctx := t.Context()

		// One job fails twice the way a worker fails it, the second time for good.
		before := time.Now()
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: "killed", Payload: workertest.AllBytes(), MaxAttempts: 3, Timeout: 2 * time.Second})
		for i, errText := range []string{"first", "boom"} {
			got, err := st.Claim(ctx, "q", 1, time.Minute)
			if err != nil || len(got.Jobs) != 1 {
				t.Fatalf("Claim = %+v, %v", got, err)
			}
			if i == 0 {
				_, err = st.Retry(ctx, "q", got.Jobs[0].Token(), 0, errText)
			} else {
				_, err = st.Kill(ctx, "q", got.Jobs[0].Token(), errText)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		after := time.Now()
		// 24 more that died an hour ago, three per ms.
		earlier := numbered("early", 24)
		ms := testkit.RedisNow(t, rdb) - time.Hour.Milliseconds()
		writeDead(t, rdb, prefix, "q", earlier, func(i int) int64 { return ms + int64(i/3) })

		ids, sizes := walkDead(t, c, "q", 7)
		if want := append(slices.Clone(earlier), "killed"); !slices.Equal(ids, want) || !slices.Equal(sizes, []int{7, 7, 7, 4}) {
			t.Errorf("pages of %v listed %v, want %v", sizes, ids, want)
		}
		page := deadPage(t, c, "q", admin.JobListParams{Limit: 1, Cursor: deadPage(t, c, "q", admin.JobListParams{Limit: 24}).Next})
		if len(page.Jobs) != 1 || page.Next != "" {
			t.Fatalf("the last page: %d jobs, next %q", len(page.Jobs), page.Next)
		}
		job := page.Jobs[0]
		if want := workertest.GetJob(t, c, "q", "killed"); !reflect.DeepEqual(job, want) {
			t.Errorf("Dead lists\n%+v\nGet reads\n%+v", job, want)
		}
		if job.Attempt != 2 || job.MaxAttempts != 3 || job.Timeout != 2*time.Second || job.LastError != "boom" || !slices.Equal(job.Payload, workertest.AllBytes()) {
			t.Errorf("listed %+v", job)
		}
		workertest.Within(t, "DiedAt", job.DiedAt, before, after)
		workertest.Within(t, "EnqueuedAt", job.EnqueuedAt, before, after)

		// The default limit is 100.
		writeDead(t, rdb, prefix, "many", numbered("m", 150), func(int) int64 { return ms })
		if ids, sizes := walkDead(t, c, "many", 0); len(ids) != 150 || !slices.Equal(sizes, []int{100, 50}) {
			t.Errorf("default limit: pages of %v", sizes)
		}
		// A cursor names a position, not a job: one that was never listed works.
		cursor := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ms, 10) + ":m-0099"))
		if page := deadPage(t, c, "many", admin.JobListParams{Cursor: cursor}); len(page.Jobs) != 50 || page.Jobs[0].ID != "m-0100" {
			t.Errorf("after %q: %d jobs, want 50 from m-0100", cursor, len(page.Jobs))
		}
		if page := deadPage(t, c, "empty", admin.JobListParams{}); len(page.Jobs) != 0 || page.Next != "" {
			t.Errorf("empty queue: %+v", page)
		}
	})
}

func TestClientDeadInvalid(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		writeDead(t, rdb, prefix, "q", numbered("d", 3), func(int) int64 { return testkit.RedisNow(t, rdb) })
		raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		ctx := t.Context()
		tests := []struct {
			name  string
			err   error
			field string
		}{
			{"bad queue", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "a b", State: worker.StateDead})), "Queue"},
			{"limit -1", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Limit: -1})), "Limit"},
			{"limit 1001", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Limit: 1001})), "Limit"},
			{"cursor not base64", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: "!!!"})), "Cursor"},
			{"cursor padded", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: base64.URLEncoding.EncodeToString([]byte("12:a"))})), "Cursor"},
			{"cursor without a colon", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("12")})), "Cursor"},
			{"cursor without a time", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw(":a")})), "Cursor"},
			{"cursor without an id", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("12:")})), "Cursor"},
			{"cursor time not a number", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("1x:a")})), "Cursor"},
			{"cursor time negative", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("-1:a")})), "Cursor"},
			{"cursor time of 16 digits", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("1234567890123456:a")})), "Cursor"},
			{"cursor id with a space", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("12:a b")})), "Cursor"},
			{"cursor id too long", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: raw("12:" + strings.Repeat("x", 257))})), "Cursor"},
			{"cursor too long", workertest.Second(c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Cursor: strings.Repeat("A", 400)})), "Cursor"},
			{"Purge bad queue", workertest.Second(c.Purge(ctx, "q{x}", "d-0000")), "Queue"},
			{"Purge bad id", workertest.Second(c.Purge(ctx, "q", "d-0000", "")), "IDs[1]"},
			{"PurgeAll bad queue", workertest.Second(c.PurgeAll(ctx, "")), "Queue"},
			{"RequeueAll bad queue", workertest.Second(c.RequeueAll(ctx, "a:b")), "Queue"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { workertest.CheckInvalid(t, tt.err, tt.field, "") })
		}
		if s := workertest.Stats(t, c, "q"); s != (admin.QueueStats{Dead: 3}) {
			t.Errorf("Stats = %+v after refused calls, want the 3 dead jobs", s)
		}
		// The limits themselves are allowed.
		for _, limit := range []int{1, admin.ListLimitMax} {
			if _, err := c.Jobs(ctx, admin.JobListParams{Queue: "q", State: worker.StateDead, Limit: limit}); err != nil {
				t.Errorf("limit %d: %v", limit, err)
			}
		}
	})
}

func TestClientPurge(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		st := store.New(rdb, prefix, nil)
		ctx := t.Context()
		writeDead(t, rdb, prefix, "q", []string{"d1", "d2"}, func(int) int64 { return testkit.RedisNow(t, rdb) })
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: "active"})
		if got, err := st.Claim(ctx, "q", 1, time.Minute); err != nil || len(got.Jobs) != 1 {
			t.Fatalf("Claim = %+v, %v", got, err)
		}
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: "due"})
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: "later", Delay: time.Hour})

		n, err := c.Purge(ctx, "q", "d1", "due", "active", "later", "missing", "d1")
		if err != nil || n != 1 {
			t.Fatalf("Purge = %d, %v; want 1", n, err)
		}
		if !workertest.IsGone(t, c, "q", "d1") {
			t.Error("d1 is still there")
		}
		for id, state := range map[string]worker.State{"d2": worker.StateDead, "active": worker.StateActive, "due": worker.StateReady, "later": worker.StateScheduled} {
			if !workertest.InState(t, c, "q", id, state) {
				t.Errorf("%s is no longer %s", id, state)
			}
		}
		if n, err := c.Purge(ctx, "q", "d1"); err != nil || n != 0 {
			t.Errorf("second Purge = %d, %v; want 0", n, err)
		}
	})
}

// TestClientRequeueAllPurgeAll moves or deletes more dead jobs than one
// script call takes. Jobs that died after the call began (here: stamped an
// hour ahead) are left dead.
func TestClientRequeueAllPurgeAll(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		ctx := t.Context()
		const n = 2500
		ms := testkit.RedisNow(t, rdb)
		for _, q := range []string{"requeue", "purge"} {
			writeDead(t, rdb, prefix, q, numbered("d", n), func(i int) int64 { return ms - int64(n-i/4) })
			writeDead(t, rdb, prefix, q, numbered("later", 3), func(int) int64 { return ms + time.Hour.Milliseconds() })
		}

		before := time.Now()
		if got, err := c.RequeueAll(ctx, "requeue"); err != nil || got != n {
			t.Fatalf("RequeueAll = %d, %v; want %d", got, err, n)
		}
		after := time.Now()
		if s := workertest.Stats(t, c, "requeue"); s != (admin.QueueStats{Ready: n, Dead: 3}) {
			t.Errorf("after RequeueAll: %+v, want %d ready and the 3 later jobs dead", s, n)
		}
		job := workertest.GetJob(t, c, "requeue", "d-2499")
		if job.State != worker.StateReady || job.Attempt != 0 || job.LastError != "boom" {
			t.Errorf("requeued job: %+v", job)
		}
		workertest.Within(t, "RunAt of a requeued job", job.RunAt, before, after)

		if got, err := c.PurgeAll(ctx, "purge"); err != nil || got != n {
			t.Fatalf("PurgeAll = %d, %v; want %d", got, err, n)
		}
		if s := workertest.Stats(t, c, "purge"); s != (admin.QueueStats{Dead: 3}) {
			t.Errorf("after PurgeAll: %+v, want the 3 later jobs dead", s)
		}
		k := store.QueueKeys(prefix, "purge")
		if records, err := rdb.Do(ctx, rdb.B().Hlen().Key(k.Jobs).Build()).AsInt64(); err != nil || records != 3 {
			t.Errorf("%d records left, %v; want the 3 later jobs'", records, err)
		}

		// Nothing is left to do; the later jobs are still dead.
		for _, q := range []string{"requeue", "purge", "empty"} {
			if got, err := c.RequeueAll(ctx, q); err != nil || got != 0 {
				t.Errorf("RequeueAll(%s) again = %d, %v", q, got, err)
			}
			if got, err := c.PurgeAll(ctx, q); err != nil || got != 0 {
				t.Errorf("PurgeAll(%s) again = %d, %v", q, got, err)
			}
		}
		ids, _ := walkDead(t, c, "requeue", 10)
		if !slices.Equal(ids, numbered("later", 3)) {
			t.Errorf("dead after it all: %v", ids)
		}
	})
}

// TestClientRequeueAllWhileJobsDie runs RequeueAll while a daemon runs the
// requeued jobs, which fail for good at once: RequeueAll still ends, and
// moves each job that was dead when it began exactly once.
func TestClientRequeueAllWhileJobsDie(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := workertest.Config(t, prefix)
		c := workertest.NewClient(t, rdb, cfg)
		const n = 1500
		ids := numbered("d", n)
		ms := testkit.RedisNow(t, rdb) - time.Hour.Milliseconds()
		writeDead(t, rdb, prefix, "q", ids, func(int) int64 { return ms })
		rec := workertest.NewRecorder()
		failing := rec.Handler(func(context.Context, *worker.Job) error { return worker.Permanent(errors.New("again")) })
		workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "q", failing, worker.QueueOptions{Concurrency: 50}), cfg)

		got, err := c.RequeueAll(t.Context(), "q")
		if err != nil || got != n {
			t.Fatalf("RequeueAll = %d, %v; want %d", got, err, n)
		}
		t.Logf("%d jobs had run again when RequeueAll returned", rec.Count())
		testkit.Eventually(t, 30*time.Second, "every requeued job to die again", func() bool { return workertest.Stats(t, c, "q").Dead == n })
		for _, id := range ids {
			if calls := rec.Of(id); len(calls) != 1 {
				t.Fatalf("job %s ran %d times, want once", id, len(calls))
			}
		}
	})
}
