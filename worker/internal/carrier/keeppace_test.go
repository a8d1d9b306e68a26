package carrier

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestCleanupKeepsPace: a new leader forgets 30,000 unique windows of 1ms,
// trims 30,000 dead jobs beyond the count and 2,000 minutes of history
// beyond the retention within seconds of its term's start, far beyond one
// tick's worth of calls of the old cap (10 calls a minute: 10,000 windows;
// issue 29, item 9). Each call stays bounded; a full one is followed at
// once by the next.
func TestCleanupKeepsPace(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name    string
		connect func(testing.TB) rueidis.Client
	}{{"single", testkit.Single}, {"cluster", testkit.Cluster}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			const n, minutes, keepDead = 30000, 2000, 10
			prefix := testkit.Prefix(t)
			rdb := b.connect(t)
			st := store.New(rdb, prefix, nil)
			k := st.Keys(testQueue)

			jobs := make([]store.NewJob, n)
			for i := range jobs {
				jobs[i] = store.NewJob{ID: fmt.Sprintf("u%05d", i), Delay: time.Hour, Unique: store.Unique{Key: strconv.Itoa(i), For: time.Millisecond}}
			}
			if _, err := st.Enqueue(t.Context(), testQueue, jobs); err != nil {
				t.Fatal(err)
			}
			// Dead jobs and minutes of history, written raw: the trims only
			// read their sets.
			now := testkit.RedisNow(t, rdb)
			for from := 0; from < n; from += 5000 {
				zadd := rdb.B().Zadd().Key(k.Dead).ScoreMember()
				for i := from; i < from+5000; i++ {
					zadd = zadd.ScoreMember(float64(now-int64(n-i)), fmt.Sprintf("d%05d", i))
				}
				testkit.Do(t, rdb, zadd.Build())
			}
			zadd := rdb.B().Zadd().Key(k.HistoryIndex).ScoreMember()
			for m := range int64(minutes) {
				zadd = zadd.ScoreMember(float64(m+1), strconv.FormatInt(m+1, 10)) // minutes of 1970
			}
			testkit.Do(t, rdb, zadd.Build())
			card := func(key string) int64 {
				v, err := rdb.Do(t.Context(), rdb.B().Zcard().Key(key).Build()).AsInt64()
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			testkit.Eventually(t, 2*time.Second, "the windows to end", func() bool { return testkit.RedisNow(t, rdb) > now+1 })

			start := time.Now()
			startNodeOn(t, rdb, prefix, "a", []Queue{{Name: testQueue, MaxAttempts: 3, DeadMaxJobs: keepDead}}, Config{})
			testkit.EventuallyState(t, 5*time.Second, func() (bool, string) {
				u, d, h := card(k.UniqueExp), card(k.Dead), card(k.HistoryIndex)
				return u == 0 && d == keepDead && h == 0,
					fmt.Sprintf("windows listed %d (want 0), dead %d (want %d), minutes %d (want 0)", u, d, keepDead, h)
			})
			t.Logf("caught up %v after the node started (its election included)", time.Since(start).Round(time.Millisecond))
		})
	}
}
