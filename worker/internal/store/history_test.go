package store_test

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// historyTotals sums queue's history by kind ("s", "r", "d", "l0" …) over
// its minutes, so that a test does not depend on the minute the scripts
// ran in, and fails unless the index lists every minute the hash holds,
// each scored by itself.
func historyTotals(t *testing.T, c rueidis.Client, k store.Keys) map[string]int64 {
	t.Helper()
	minutes, err := c.Do(t.Context(), c.B().Zrange().Key(k.HistoryIndex).Min("0").Max("-1").Withscores().Build()).AsZScores()
	if err != nil {
		t.Fatalf("ZRANGE %s: %v", k.HistoryIndex, err)
	}
	indexed := map[string]bool{}
	for _, m := range minutes {
		indexed[m.Member] = true
		if m.Member != strconv.FormatInt(int64(m.Score), 10) {
			t.Errorf("index member %q has score %v", m.Member, m.Score)
		}
	}
	totals := map[string]int64{}
	for field, v := range testkit.HGetAll(t, c, k.History) {
		minute, kind, ok := strings.Cut(field, ":")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("history field %q = %q", field, v)
		}
		if !indexed[minute] {
			t.Errorf("minute %s of field %q is not in the index %v", minute, field, minutes)
		}
		totals[kind] += n
	}
	return totals
}

// TestHistoryCounts: claim counts each job started in its lag bucket
// (enqueued with run-ats in the past by known amounts) and a corrupt
// record as died; ack counts succeeded, once per job; retry and recover
// count retried or died.
// lagBoundsMs are the upper bounds of the history's lag buckets l0 to l10
// (lua/record.lua's lag_bucket, worker.LagBounds); l11 is above the last.
var lagBoundsMs = []int64{1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000, 300000}

func TestHistoryCounts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		now := testkit.RedisNow(t, c)
		// Each lag lies well inside its bucket: the claim runs a few ms
		// after now.
		ago := map[string]time.Duration{
			"l3": 30 * time.Millisecond, "l5": 250 * time.Millisecond, "l7": 3 * time.Second,
			"l9": 30 * time.Second, "l10": 2 * time.Minute, "l11": time.Hour, "l11b": 2 * time.Hour,
		}
		for id, d := range ago {
			enqueue(t, s, store.NewJob{ID: id, At: time.UnixMilli(now - d.Milliseconds()), Payload: []byte("p")})
		}
		// A record that is not one goes to dead at its claim.
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("corrupt", "not a record").Build())
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(float64(now), "corrupt").Build())
		cl := claim(t, s, 100, time.Hour)
		if len(cl.Jobs) != len(ago) || cl.Corrupt != 1 {
			t.Fatalf("claimed %v, %d corrupt; want %d jobs and 1 corrupt", ids(cl.Jobs), cl.Corrupt, len(ago))
		}
		// Each job's bucket is that of its lag at the claim's own time: on a
		// loaded machine the claim may run tens of ms after now, which moves
		// the shortest lags to the next bucket.
		want := map[string]int64{"d": 1}
		for _, d := range ago {
			lag := cl.Now.UnixMilli() - (now - d.Milliseconds())
			b := 0
			for b < len(lagBoundsMs) && lag > lagBoundsMs[b] {
				b++
			}
			want[fmt.Sprintf("l%d", b)]++
		}
		if want["l3"]+want["l4"] != 1 || want["l5"] != 1 || want["l11"] != 2 {
			t.Fatalf("the claim ran too late for the lags to stay in their buckets: %v", want)
		}
		if got := historyTotals(t, c, k); !maps.Equal(got, want) {
			t.Fatalf("history after the claim = %v, want %v", got, want)
		}

		tok := map[string]store.Token{}
		for _, r := range cl.Jobs {
			tok[r.ID] = r.Token()
		}
		// An id acked twice in one call, and a stale token, count once and
		// not at all.
		stale := tok["l5"]
		stale.Claim--
		if n, err := s.Ack(ctx, queue, []store.Token{tok["l3"], tok["l3"], tok["l7"], stale}); err != nil || n != 2 {
			t.Fatalf("Ack = %d, %v; want 2", n, err)
		}
		if ok, err := s.Retry(ctx, queue, tok["l5"], time.Hour, "boom"); err != nil || !ok {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		if ok, err := s.Kill(ctx, queue, tok["l9"], "boom"); err != nil || !ok {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		// A stale retry counts nothing.
		if ok, err := s.Retry(ctx, queue, tok["l5"], 0, "again"); err != nil || ok {
			t.Fatalf("stale Retry = %v, %v; want false", ok, err)
		}
		want["s"], want["r"], want["d"] = 2, 1, 2
		if got := historyTotals(t, c, k); !maps.Equal(got, want) {
			t.Fatalf("history after ack, retry and kill = %v, want %v", got, want)
		}

		// Recover: one job back to due, one out of attempts.
		enqueue(t, s, store.NewJob{ID: "again", Payload: []byte("p")}, store.NewJob{ID: "last", MaxAttempts: 1, Payload: []byte("p")})
		expiring := claim(t, s, 10, shortLease)
		if len(expiring.Jobs) != 2 {
			t.Fatalf("claimed %v, want again and last", ids(expiring.Jobs))
		}
		waitLeasesExpired(t, c, k, "again", "last")
		r, err := s.Recover(ctx, queue, leaderField(t, s, c, queue), 100, 3)
		if err != nil || r != (store.Recovered{Due: 1, Dead: 1}) {
			t.Fatalf("Recover = %+v, %v; want 1 due, 1 dead", r, err)
		}
		got := historyTotals(t, c, k)
		started := int64(0) // the two just claimed, due at once: beyond the first claim's
		for _, b := range []string{"l0", "l1", "l2", "l3"} {
			started += got[b] - want[b]
		}
		if got["r"] != 2 || got["d"] != 3 || got["s"] != 2 || started != 2 {
			t.Errorf("history after the recovery = %v; want r 2, d 3, s 2 and two more started within 50 ms", got)
		}
	})
}

// TestHistoryLagsByLevel: a claim of jobs of several priority levels (each
// level's jobs by run-at, levels in turn) counts each job's lag in its
// bucket, with and without weights.
func TestHistoryLagsByLevel(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		for _, w := range []store.Weights{{}, {High: 1, Normal: 1, Low: 1}} {
			q := "strict"
			if w != (store.Weights{}) {
				q = "weighted"
			}
			now := testkit.RedisNow(t, c)
			at := func(d time.Duration) time.Time { return time.UnixMilli(now - d.Milliseconds()) }
			enqueueTo(t, s, q,
				store.NewJob{ID: "h1", At: at(30 * time.Second), Priority: store.PriorityHigh},
				store.NewJob{ID: "h2", At: at(30 * time.Millisecond), Priority: store.PriorityHigh},
				store.NewJob{ID: "n1", At: at(3 * time.Second)},
				store.NewJob{ID: "n2", At: at(3 * time.Second)},
				store.NewJob{ID: "n3", At: at(250 * time.Millisecond)},
				store.NewJob{ID: "l1", At: at(2 * time.Hour), Priority: store.PriorityLow},
				store.NewJob{ID: "l2", At: at(2 * time.Minute), Priority: store.PriorityLow},
			)
			cl, err := s.ClaimWith(t.Context(), q, 100, time.Hour, store.ClaimOptions{Weights: w})
			if err != nil || len(cl.Jobs) != 7 {
				t.Fatalf("%s: claimed %d jobs, %v; want 7", q, len(cl.Jobs), err)
			}
			want := map[string]int64{"l9": 1, "l3": 1, "l7": 2, "l5": 1, "l11": 1, "l10": 1}
			if got := historyTotals(t, c, s.Keys(q)); !maps.Equal(got, want) {
				t.Errorf("%s: history = %v, want %v", q, got, want)
			}
		}
		// A full batch of one level over three buckets.
		now := testkit.RedisNow(t, c)
		var jobs []store.NewJob
		for _, g := range []struct {
			n   int
			ago time.Duration
		}{{300, 2 * time.Minute}, {400, 30 * time.Second}, {300, 3 * time.Second}} {
			for j := range g.n {
				jobs = append(jobs, store.NewJob{ID: "b" + strconv.Itoa(len(jobs)), At: time.UnixMilli(now - g.ago.Milliseconds() + int64(j%7))})
			}
		}
		enqueueTo(t, s, "batch", jobs...)
		if cl := claimFrom(t, s, "batch", 1000, time.Hour); len(cl.Jobs) != 1000 {
			t.Fatalf("batch: claimed %d jobs, want 1000", len(cl.Jobs))
		}
		if got, want := historyTotals(t, c, s.Keys("batch")), map[string]int64{"l10": 300, "l9": 400, "l7": 300}; !maps.Equal(got, want) {
			t.Errorf("batch: history = %v, want %v", got, want)
		}
	})
}

// TestHistoryNeverFailsAScript: a history key of another type makes the
// history writes fail, never the scripts: claim, ack, retry, kill and
// recover do their work and reply as without it.
func TestHistoryNeverFailsAScript(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		for _, q := range []string{"hash-taken", "index-taken"} {
			k := s.Keys(q)
			key := k.History
			if q == "index-taken" {
				key = k.HistoryIndex
			}
			do(t, c, c.B().Set().Key(key).Value("not history").Build())
			jobs := []store.NewJob{job("a", "p"), job("b", "p"), job("c", "p"), {ID: "d", MaxAttempts: 1}}
			enqueueTo(t, s, q, jobs...)
			do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("corrupt", "not a record").Build())
			do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "corrupt").Build())
			cl := claimFrom(t, s, q, 3, time.Hour)
			if len(cl.Jobs) != 2 || cl.Corrupt != 1 {
				t.Fatalf("%s: claimed %v, %d corrupt; want 2 jobs, 1 corrupt", q, ids(cl.Jobs), cl.Corrupt)
			}
			if n, err := s.Ack(ctx, q, []store.Token{cl.Jobs[0].Token()}); err != nil || n != 1 {
				t.Errorf("%s: Ack = %d, %v; want 1", q, n, err)
			}
			if ok, err := s.Retry(ctx, q, cl.Jobs[1].Token(), time.Hour, "boom"); err != nil || !ok {
				t.Errorf("%s: Retry = %v, %v; want true", q, ok, err)
			}
			last := claimFrom(t, s, q, 2, shortLease)
			if len(last.Jobs) != 2 {
				t.Fatalf("%s: claimed %v, want c and d", q, ids(last.Jobs))
			}
			if ok, err := s.Kill(ctx, q, last.Jobs[0].Token(), "boom"); err != nil || !ok {
				t.Errorf("%s: Kill = %v, %v; want true", q, ok, err)
			}
			waitLeasesExpired(t, c, k, last.Jobs[1].ID)
			if r, err := s.Recover(ctx, q, leaderField(t, s, c, q), 100, 3); err != nil || r.Due+r.Dead != 1 {
				t.Errorf("%s: Recover = %+v, %v; want one job", q, r, err)
			}
			if v, err := c.Do(ctx, c.B().Get().Key(key).Build()).ToString(); err != nil || v != "not history" {
				t.Errorf("%s: %s = %q, %v; want it untouched", q, key, v, err)
			}
		}
	})
}

// writeMinutes writes every field of each minute (value 1) to queue's
// history and lists the minutes in its index, as the scripts do.
func writeMinutes(t *testing.T, c rueidis.Client, k store.Keys, minutes ...int64) {
	t.Helper()
	hset := c.B().Hset().Key(k.History).FieldValue()
	zadd := c.B().Zadd().Key(k.HistoryIndex).ScoreMember()
	for _, m := range minutes {
		ms := strconv.FormatInt(m, 10)
		for _, kind := range []string{"s", "r", "d", "l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11"} {
			hset = hset.FieldValue(ms+":"+kind, "1")
		}
		zadd = zadd.ScoreMember(float64(m), ms)
	}
	do(t, c, hset.Build())
	do(t, c, zadd.Build())
}

// TestTrimHistory: the leader's trim deletes the minutes before the
// retention, 60 per call and oldest first, every field of each, and
// leaves the newer ones; a caller that is not the leader changes nothing.
func TestTrimHistory(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		now := testkit.RedisNow(t, c) / 60000
		// 71 minutes before the retention of an hour (now - 60), and two
		// within it: now - 59 stays even if the minute turns meanwhile.
		var old []int64
		for m := now - 200; m < now-70; m++ {
			old = append(old, m)
		}
		old = append(old, now-61)
		writeMinutes(t, c, k, old...)
		writeMinutes(t, c, k, now-59, now)
		if len(old) != 131 {
			t.Fatalf("%d old minutes", len(old))
		}
		before := testkit.HGetAll(t, c, k.History)
		for _, field := range []string{"", "test-client-uuid:other"} {
			if _, err := s.TrimHistory(ctx, queue, field, time.Hour); !errors.Is(err, store.ErrNotLeader) {
				t.Errorf("TrimHistory by %q = %v; want ErrNotLeader", field, err)
			}
		}
		if after := testkit.HGetAll(t, c, k.History); !maps.Equal(after, before) {
			t.Fatalf("a refused TrimHistory changed the history: %d fields, was %d", len(after), len(before))
		}
		lead := leaderField(t, s, c, queue)
		for i, want := range []int{60, 60, 11, 0} {
			if n, err := s.TrimHistory(ctx, queue, lead, time.Hour); err != nil || n != want {
				t.Fatalf("call %d: TrimHistory = %d, %v; want %d", i+1, n, err, want)
			}
		}
		left := testkit.HGetAll(t, c, k.History)
		if len(left) != 2*15 || left[strconv.FormatInt(now-59, 10)+":l11"] != "1" || left[strconv.FormatInt(now, 10)+":s"] != "1" {
			t.Errorf("history left: %v; want the 15 fields of minutes now-59 and now", left)
		}
		minutes, err := c.Do(ctx, c.B().Zrange().Key(k.HistoryIndex).Min("0").Max("-1").Build()).AsStrSlice()
		if err != nil || len(minutes) != 2 || minutes[0] != strconv.FormatInt(now-59, 10) {
			t.Errorf("index left: %v, %v; want now-59 and now", minutes, err)
		}
	})
}

// TestHistoryRead: History returns one entry per minute asked for, oldest
// first, zeros where nothing happened, each kind in its place.
func TestHistoryRead(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		do(t, c, c.B().Hset().Key(k.History).FieldValue().
			FieldValue("1000:s", "5").FieldValue("1000:r", "2").FieldValue("1000:d", "1").
			FieldValue("1000:l0", "3").FieldValue("1000:l11", "4").FieldValue("1002:l6", "7").
			FieldValue("999:s", "100").FieldValue("1003:s", "100").Build())
		got, err := s.History(ctx, queue, 1000, 3)
		if err != nil || len(got) != 3 {
			t.Fatalf("History = %v, %v; want 3 minutes", got, err)
		}
		want := []store.HistoryCounts{
			{Minute: 1000, Succeeded: 5, Retried: 2, Died: 1, Lag: [store.LagBuckets]int64{0: 3, 11: 4}},
			{Minute: 1001},
			{Minute: 1002, Lag: [store.LagBuckets]int64{6: 7}},
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("minute %d = %+v, want %+v", i, got[i], want[i])
			}
		}
		if got, err := s.History(ctx, "never-used", 1000, store.MaxHistoryMinutes); err != nil || len(got) != store.MaxHistoryMinutes || got[0] != (store.HistoryCounts{Minute: 1000}) {
			t.Errorf("History of an unknown queue: %d minutes, %v; want %d empty ones", len(got), err, store.MaxHistoryMinutes)
		}
		for _, n := range []int64{-1, store.MaxHistoryMinutes + 1} {
			if _, err := s.History(ctx, queue, 1000, n); err == nil {
				t.Errorf("History of %d minutes: no error", n)
			}
		}
	})
}
