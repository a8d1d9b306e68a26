package carrier

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestLeaderTrimsTheHistory: a new leader deletes, in its trim, the
// minutes of the queue's history older than HistoryRetention, more than
// one script call's worth of them, and keeps the newer ones.
func TestLeaderTrimsTheHistory(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	rdb := testkit.Single(t)
	k := store.New(rdb, prefix, nil).Keys(testQueue)
	now := testkit.RedisNow(t, rdb) / 60000
	hset := rdb.B().Hset().Key(k.History).FieldValue()
	zadd := rdb.B().Zadd().Key(k.HistoryIndex).ScoreMember()
	// 150 minutes beyond a retention of 2h (2.5 calls of the script), and
	// the last hour within it.
	for m := now - 300; m <= now; m++ {
		if m >= now-150 && m < now-60 {
			continue
		}
		ms := strconv.FormatInt(m, 10)
		hset = hset.FieldValue(ms+":s", "1").FieldValue(ms+":l3", "2")
		zadd = zadd.ScoreMember(float64(m), ms)
	}
	testkit.Do(t, rdb, hset.Build())
	testkit.Do(t, rdb, zadd.Build())

	startNode(t, prefix, "a", []Queue{{Name: testQueue, MaxAttempts: 3}}, Config{HistoryRetention: 2 * time.Hour})
	testkit.Eventually(t, 10*time.Second, "the leader to trim the history", func() bool {
		return len(testkit.HGetAll(t, rdb, k.History)) == 61*2
	})
	for field := range testkit.HGetAll(t, rdb, k.History) {
		m, _, _ := strings.Cut(field, ":")
		if n, err := strconv.ParseInt(m, 10, 64); err != nil || n < now-60 {
			t.Errorf("field %s left, of a minute before the retention", field)
		}
	}
}

// TestNewRequiresHistoryRetention: HistoryRetention is a required field.
func TestNewRequiresHistoryRetention(t *testing.T) {
	t.Parallel()
	cfg := Config{RecoverInterval: time.Second, DeadMaxJobs: 1, DeadMaxAge: time.Hour}
	if _, err := New(nil, nil, nil, nil, cfg); err == nil || !strings.Contains(err.Error(), "HistoryRetention") {
		t.Errorf("New without HistoryRetention = %v; want an error naming it", err)
	}
	cfg.HistoryRetention = time.Hour
	if _, err := New(nil, nil, nil, nil, cfg); err != nil {
		t.Errorf("New with HistoryRetention = %v", err)
	}
}
