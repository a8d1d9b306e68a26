package admin_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// historySum adds up minutes.
func historySum(minutes []admin.HistoryMinute) admin.HistoryMinute {
	var s admin.HistoryMinute
	for _, m := range minutes {
		s.Succeeded += m.Succeeded
		s.Retried += m.Retried
		s.Died += m.Died
		for i, n := range m.Lag {
			s.Lag[i] += n
		}
	}
	return s
}

// TestHistoryThroughADaemon: the jobs a Daemon runs show in the queue's
// history: acked ones as succeeded, failed attempts sent back as retried,
// jobs out of attempts or failed for good as died, every attempt started
// with its lag; a cancelled job is not counted as died.
func TestHistoryThroughADaemon(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		ctx := t.Context()
		cfg := workertest.Config(t, prefix)
		c := workertest.NewClient(t, rdb, cfg)
		started := make(chan string, 16)
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			started <- job.ID
			switch job.ID {
			case "flaky":
				if job.Attempt == 1 {
					return errors.New("first attempt fails")
				}
			case "doomed":
				return errors.New("always fails")
			case "perm":
				return worker.Permanent(errors.New("cannot work"))
			case "cancelled":
				<-ctx.Done()
				return context.Cause(ctx)
			}
			return nil
		})
		workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "h", h, worker.QueueOptions{MaxAttempts: 2, Backoff: worker.FixedSteps{0}}), cfg)
		from := time.UnixMilli(testkit.RedisNow(t, rdb))
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "h", ID: "cancelled"})
		if id := workertest.Receive(t, started, 10*time.Second, "the job to cancel to start"); id != "cancelled" {
			t.Fatalf("%s started, want cancelled", id)
		}
		if err := c.Cancel(ctx, "h", "cancelled"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"ok1", "ok2", "flaky", "doomed", "perm"} {
			workertest.Enqueue(t, c, worker.JobSpec{Queue: "h", ID: id})
		}
		for range 7 { // ok1, ok2, perm once; flaky and doomed twice
			workertest.Receive(t, started, 10*time.Second, "the jobs to start")
		}
		want := admin.HistoryMinute{Succeeded: 3, Retried: 2, Died: 2} // succeeded: ok1, ok2, flaky; died: doomed, perm
		var got admin.HistoryMinute
		var minutes []admin.HistoryMinute
		testkit.Eventually(t, 10*time.Second, "the history to count every outcome", func() bool {
			var err error
			minutes, err = c.History(ctx, "h", from, from.Add(10*time.Minute))
			if err != nil {
				t.Fatalf("History: %v", err)
			}
			got = historySum(minutes)
			return got.Succeeded == want.Succeeded && got.Retried == want.Retried && got.Died == want.Died
		})
		if len(minutes) != 10 {
			t.Fatalf("%d minutes, want 10", len(minutes))
		}
		for i, m := range minutes {
			if want := from.Truncate(time.Minute).Add(time.Duration(i) * time.Minute); !m.Start.Equal(want) {
				t.Errorf("minute %d starts %v, want %v", i, m.Start, want)
			}
		}
		if got.Started() != 8 || got.Failed() != 4 {
			t.Errorf("history %+v: started %d, failed %d; want 8 (the cancelled job too) and 4", got, got.Started(), got.Failed())
		}
		if lag, ok := admin.LagQuantile(minutes, 0.5); !ok || lag <= 0 || lag >= 5*time.Minute {
			t.Errorf("LagQuantile(0.5) = %v, %v; want a lag under 5m", lag, ok)
		}
		if !workertest.InState(t, c, "h", "cancelled", worker.StateCancelled) {
			t.Error("the cancelled job is not in the state cancelled")
		}
	})
}

// TestHistoryMinutes: History returns one entry per minute of the span
// (its ends truncated to the minute), zeros where nothing happened, oldest
// first, at most a day of them; bad arguments are ValidationErrors.
func TestHistoryMinutes(t *testing.T) {
	t.Parallel()
	c := workertest.NewClient(t, testkit.Single(t), workertest.Config(t, testkit.Prefix(t)))
	ctx := t.Context()
	base := time.Date(2001, 2, 3, 4, 5, 0, 0, time.UTC)
	got, err := c.History(ctx, "quiet", base.Add(30*time.Second), base.Add(3*time.Minute+10*time.Second))
	if err != nil || len(got) != 3 {
		t.Fatalf("History over 2m40s = %d minutes, %v; want 3", len(got), err)
	}
	for i, m := range got {
		if want := (admin.HistoryMinute{Start: base.Add(time.Duration(i) * time.Minute)}); !m.Start.Equal(want.Start) || m.Started() != 0 || m.Failed() != 0 || m.Succeeded != 0 {
			t.Errorf("minute %d = %+v, want an empty minute at %v", i, m, want.Start)
		}
	}
	if got, err := c.History(ctx, "quiet", base.Add(10*time.Second), base.Add(50*time.Second)); err != nil || len(got) != 0 {
		t.Errorf("History within one minute = %v, %v; want none", got, err)
	}
	if got, err := c.History(ctx, "quiet", base, base.Add(24*time.Hour)); err != nil || len(got) != admin.HistoryMaxMinutes {
		t.Errorf("History over a day = %d minutes, %v; want %d", len(got), err, admin.HistoryMaxMinutes)
	}
	for _, tc := range []struct {
		name, queue string
		from, to    time.Time
		field       string
	}{
		{"a day and a minute", "quiet", base, base.Add(24*time.Hour + time.Minute), "To"},
		{"to before from", "quiet", base, base.Add(-time.Minute), "To"},
		{"bad queue name", "{q}", base, base.Add(time.Minute), "Queue"},
	} {
		_, err := c.History(ctx, tc.queue, tc.from, tc.to)
		var ve *worker.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: History = %v; want a ValidationError of %s", tc.name, err, tc.field)
		}
	}
}

func TestLagBounds(t *testing.T) {
	t.Parallel()
	b := admin.LagBounds()
	want := []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 500 * time.Millisecond, time.Second, 5 * time.Second, 10 * time.Second, time.Minute, 5 * time.Minute}
	if !slices.Equal(b, want) || len(b)+1 != admin.LagBuckets {
		t.Fatalf("LagBounds() = %v (%d buckets), want %v", b, admin.LagBuckets, want)
	}
	b[0] = time.Hour
	if admin.LagBounds()[0] != time.Millisecond {
		t.Error("LagBounds returned a shared slice")
	}
}

func TestLagQuantile(t *testing.T) {
	t.Parallel()
	// lags returns a minute with the given counts by bucket.
	lags := func(counts map[int]int64) admin.HistoryMinute {
		var m admin.HistoryMinute
		for b, n := range counts {
			m.Lag[b] = n
		}
		return m
	}
	ms := time.Millisecond
	tests := []struct {
		name    string
		minutes []admin.HistoryMinute
		q       float64
		want    time.Duration
		ok      bool
	}{
		{"no minutes", nil, 0.5, 0, false},
		{"no job started", []admin.HistoryMinute{{Succeeded: 3}, {}}, 0.5, 0, false},
		{"q 0", []admin.HistoryMinute{lags(map[int]int64{0: 1})}, 0, 0, false},
		{"q 1", []admin.HistoryMinute{lags(map[int]int64{0: 1})}, 1, 0, false},
		{"first bucket from 0", []admin.HistoryMinute{lags(map[int]int64{0: 1})}, 0.5, ms / 2, true},
		{"median within 10ms to 50ms", []admin.HistoryMinute{lags(map[int]int64{3: 10})}, 0.5, 30 * ms, true},
		{"p90 within 10ms to 50ms", []admin.HistoryMinute{lags(map[int]int64{3: 10})}, 0.9, 46 * ms, true},
		{"rank at a bucket's top", []admin.HistoryMinute{lags(map[int]int64{0: 50}), lags(map[int]int64{6: 50})}, 0.5, ms, true},
		{"across minutes", []admin.HistoryMinute{lags(map[int]int64{0: 50}), lags(map[int]int64{6: 50})}, 0.75, 750 * ms, true},
		{"empty buckets skipped", []admin.HistoryMinute{lags(map[int]int64{1: 99, 11: 1})}, 0.99, 5 * ms, true},
		{"in the open bucket", []admin.HistoryMinute{lags(map[int]int64{1: 99, 11: 1})}, 0.995, 5 * time.Minute, true},
		{"all above 5m", []admin.HistoryMinute{lags(map[int]int64{11: 7})}, 0.5, 5 * time.Minute, true},
		{"within 1m to 5m", []admin.HistoryMinute{lags(map[int]int64{10: 4})}, 0.25, 2 * time.Minute, true},
	}
	for _, tt := range tests {
		got, ok := admin.LagQuantile(tt.minutes, tt.q)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: LagQuantile(q %v) = %v, %v; want %v, %v", tt.name, tt.q, got, ok, tt.want, tt.ok)
		}
	}
}

func TestHistoryMinuteSums(t *testing.T) {
	t.Parallel()
	m := admin.HistoryMinute{Succeeded: 5, Retried: 2, Died: 1}
	m.Lag[0], m.Lag[11] = 3, 4
	if m.Failed() != 3 || m.Started() != 7 {
		t.Errorf("Failed %d, Started %d; want 3, 7", m.Failed(), m.Started())
	}
}
