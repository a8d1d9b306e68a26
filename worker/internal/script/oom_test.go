package script

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// TestScriptsUnderOOM runs every script on a Redis that is out of memory
// (maxmemory reached, noeviction): the scripts declared AllowOOM run, the
// ones that add data (enqueue, fire) are refused before they change
// anything, with a refusal counted as reason oom, and the read-only ones
// run. The script cache is flushed first, so each call goes as EVAL.
func TestScriptsUnderOOM(t *testing.T) {
	t.Parallel()
	r := testkit.StartPrivate(t)
	c, reg := meteredConn(t, r.Client(t))
	ctx := t.Context()
	prefix := testkit.Prefix(t)
	k := keysOf(prefix, "q")
	leader, lockKey := prefix+":{q}:leader", prefix+":{q}:lock"
	periodic := prefix + ":{q}:periodic"

	// Before: seven jobs, five claimed, one of them dead; the test leads
	// the queue.
	enqueueRaw(t, c, k, "j1", "j2", "j3", "j4", "j5", "j6", "j7")
	vals, err := claimRaw(c, k, t, 5).ToArray()
	if err != nil || len(vals) != 4+5*5 {
		t.Fatalf("claim before: %d values, %v", len(vals), err)
	}
	tok := claimToken(t, vals) // every job of one claim gets the same token
	run := func(s *Script, keys []string, args ...string) rueidis.RedisResult {
		return s.Exec(ctx, c, keys, args)
	}
	if err := run(Retry, k.withKeys(k.jobs, k.due, k.active, k.dead, k.claims, k.state, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex), k.wake, "j4", tok, "dead", "0", "boom").Error(); err != nil {
		t.Fatalf("retry to dead before: %v", err)
	}
	if err := run(LockAcquire, []string{leader}, "60000", "me:leader").Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("lock_acquire of the leader lock before: %v", err)
	}
	nowMs := testkit.RedisNow(t, c.client)
	// A minute of history long gone, for history_trim to delete.
	testkit.Do(t, c.client, c.B().Hset().Key(k.history).FieldValue().FieldValue("1:s", "3").FieldValue("1:l0", "2").Build())
	testkit.Do(t, c.client, c.B().Zadd().Key(k.historyIndex).ScoreMember().ScoreMember(1, "1").Build())

	// A slot of a limiter (worker/limiter), held before Redis fills up.
	slots, rate := prefix+":{limiter:x}:slots", prefix+":{limiter:x}:rate"
	if err := run(LimiterAcquire, []string{slots}, "2", "60000", "held").Error(); err != nil {
		t.Fatalf("limiter_acquire before: %v", err)
	}

	r.MustDo(t, "SCRIPT", "FLUSH")
	r.Fill(t)
	if _, err := r.Do("SET", "probe", "x"); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Fatalf("SET after filling up: %v, want an OOM refusal", err)
	}

	// Replies that show the script did its work, for the scripts whose
	// refusal would re-run jobs or leave a queue without a leader.
	none := func(res rueidis.RedisResult) bool { a, err := res.ToArray(); return err == nil && len(a) == 0 }
	one := func(res rueidis.RedisResult) bool { n, err := res.AsInt64(); return err == nil && n == 1 }
	taken := func(res rueidis.RedisResult) bool { return rueidis.IsRedisNil(res.Error()) }
	qsChanged := func(res rueidis.RedisResult) bool { // queue_set: changed = 1
		a, err := res.ToArray()
		if err != nil || len(a) == 0 {
			return false
		}
		n, err := a[0].AsInt64()
		return err == nil && n == 1
	}
	firstOne := func(res rueidis.RedisResult) bool { // limiter_extend: {1, now, deadline} = renewed
		a, err := res.AsIntSlice()
		return err == nil && len(a) == 3 && a[0] == 1
	}
	led := func(res rueidis.RedisResult) bool { // fenced: -1 = not the leader
		a, err := res.AsIntSlice()
		return err == nil && len(a) == 2 && a[0] >= 0
	}
	cases := []struct {
		s    *Script
		keys []string
		args []string
		done func(rueidis.RedisResult) bool // nil: any reply
	}{
		{Extend, []string{k.active, k.claims, k.dead, k.state, k.cancelled}, []string{"60000", "0", "j1", tok}, none},
		{Ack, []string{k.jobs, k.active, k.claims, k.state, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex}, []string{"j1", tok}, one},
		// A retained job's result is stored while Redis is full (see
		// complete.lua's header).
		{Complete, []string{k.jobs, k.active, k.claims, k.state, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex, k.completed, k.results}, []string{"1", "j5", tok, "1", `{"ok":true}`}, one},
		{Retry, k.withKeys(k.jobs, k.due, k.active, k.dead, k.claims, k.state, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex), []string{k.wake, "j2", tok, "due", "1000", "failed"}, one},
		{Snooze, k.withKeys(k.due, k.active, k.claims, k.dueHigh, k.dueLow, k.opts), []string{k.wake, "0", "j3", tok}, one},
		{Cancel, k.withKeys(k.jobs, k.due, k.active, k.dead, k.state, k.claims, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.completed, k.cancelled), []string{"j6", k.wake}, nil},
		{Claim, []string{k.jobs, k.due, k.active, k.dead, k.claims, k.state, k.rate, k.paused, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex}, []string{"10", "60000"}, nil},
		{Requeue, k.withKeys(k.jobs, k.due, k.dead, k.state, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp), []string{k.wake, "j4"}, nil},
		{Recover, k.withKeys(k.jobs, k.due, k.active, k.dead, k.claims, k.state, leader, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.history, k.historyIndex), []string{k.wake, "100", "3", "me:leader"}, led},
		{Trim, []string{k.jobs, k.dead, leader, k.state, k.opts, k.results}, []string{"me:leader", "10", "1000", "100"}, led},
		{UniqExpire, []string{k.unique, k.uniqueExp, k.jobs, leader}, []string{"me:leader", "100"}, led},
		{HistoryTrim, []string{k.history, k.historyIndex, leader}, []string{"me:leader", "60"}, one},
		{Purge, []string{k.jobs, k.dead, k.state, k.opts}, []string{"", "j4"}, nil},
		// A key's cap can be lowered (or raised) while Redis is full.
		{KeyConf, k.keySet, []string{k.wake, "acme", "2", "3"}, one},
		{Enqueue, []string{k.jobs, k.due, k.state, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.settings}, []string{k.wake, "1", "0", "", "new", "-1", "0", "0", "0", "payload"}, nil},
		{Import, []string{k.jobs, k.due, k.state, k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.settings, k.dead, prefix + ":{q}:imported:asynq"},
			[]string{k.wake, "1", "", "src", "imported", "0", "1", "0", "0", "", "-1", "", "", "payload"}, nil},
		{Fire, []string{k.jobs, k.due, periodic, leader, k.state}, []string{"me:leader", k.wake, "tick", strconv.FormatInt(nowMs-1000, 10), "0", "0", "tick"}, nil},
		{Forget, []string{k.jobs, k.due, k.active, k.dead, k.claims, k.state, k.rate, leader, periodic, prefix + ":{q}:fleet", k.paused,
			k.dueHigh, k.dueLow, k.opts, k.unique, k.uniqueExp, k.settings, k.history, k.historyIndex, k.completed, k.results, k.cancelled}, nil, nil},
		// An operator can pause a queue, and resume it, while Redis is full.
		// A daemon can start, and write its queue's layout, while Redis is full.
		{QueueSet, []string{k.settings, k.paused}, []string{"layout", "", "2", "", "0;2"}, qsChanged},
		{QueueSet, []string{k.settings, k.paused}, []string{"pause", "1", k.wake}, qsChanged},
		{QueueSet, []string{k.settings, k.paused}, []string{"pause", "0", k.wake}, qsChanged},
		{QueueCopy, []string{k.settings, k.paused}, []string{"9000000000000000", "1", "2", "", "0", "1", "1;2", "1", k.wake}, one},
		{Get, []string{k.jobs, k.due, k.active, k.dead, k.claims, k.state, k.dueHigh, k.dueLow, k.opts, k.completed, k.results, k.cancelled}, []string{"j5"}, nil},
		{Stats, []string{k.due, k.active, k.dead, k.paused, k.dueHigh, k.dueLow, k.completed, k.cancelled}, nil, nil},
		{DeadList, []string{k.jobs, k.dead, k.state, k.opts}, []string{"10", "jobs", "", "", "", "1000000", "", "", "fail"}, nil},
		{List, []string{k.jobs, k.due, k.dueHigh, k.dueLow, k.active, k.state, k.claims, k.opts, k.completed, k.results}, []string{"completed", "10", "", "", "", "1000000"}, nil},
		{LockAcquire, []string{lockKey}, []string{"60000", "other:h"}, taken},
		{LockRenew, []string{lockKey}, []string{"60000", "other:h"}, one},
		{LockRelease, []string{lockKey}, []string{prefix + ":unlock", "0", "60000", "other:h"}, one},
		// A limiter's holders keep their slots and give them back while
		// Redis is full; a new slot and a take are refused.
		{LimiterAcquire, []string{slots}, []string{"2", "60000", "new"}, nil},
		{LimiterExtend, []string{slots}, []string{"60000", "held"}, firstOne},
		{LimiterRelease, []string{slots}, []string{prefix + ":{limiter:x}:free", "held"}, one},
		{LimiterTake, []string{rate}, []string{"5", "1000", "1"}, nil},
	}
	covered := map[*Script]bool{}
	for _, tc := range cases {
		covered[tc.s] = true
		res := run(tc.s, tc.keys, tc.args...)
		err := res.Error()
		if rueidis.IsRedisNil(err) {
			err = nil // lock_acquire: taken
		}
		if err == nil && tc.done != nil && !tc.done(res) {
			t.Errorf("%s ran out of memory but did not do its work: %v", tc.s.Name(), res)
		}
		refused := metrics.Refusal(err) == metrics.RefusedOOM
		switch writes := tc.s != Get && tc.s != Stats && tc.s != DeadList && tc.s != List; {
		case tc.s.OOM() == AllowOOM && err != nil:
			t.Errorf("%s, declared AllowOOM, failed out of memory: %v", tc.s.Name(), err)
		case tc.s.OOM() == DenyOOM && writes && !refused:
			t.Errorf("%s, declared DenyOOM, was not refused out of memory: %v", tc.s.Name(), err)
		case tc.s.OOM() == DenyOOM && !writes && err != nil:
			t.Errorf("%s (read only) failed out of memory: %v", tc.s.Name(), err)
		}
	}
	for _, s := range All() {
		if !covered[s] {
			t.Errorf("%s has no case here", s.Name())
		}
	}
	// The refused scripts changed nothing.
	if _, err := c.Do(ctx, c.B().Hget().Key(k.jobs).Field("new").Build()).ToString(); !rueidis.IsRedisNil(err) {
		t.Errorf("the refused enqueue stored its job (HGET: %v)", err)
	}
	if _, err := c.Do(ctx, c.B().Hget().Key(k.jobs).Field("imported").Build()).ToString(); !rueidis.IsRedisNil(err) {
		t.Errorf("the refused import stored its job (HGET: %v)", err)
	}
	if _, err := c.Do(ctx, c.B().Hget().Key(periodic).Field("tick").Build()).ToString(); !rueidis.IsRedisNil(err) {
		t.Errorf("the refused fire stored its time (HGET: %v)", err)
	}
	if n, err := c.Do(ctx, c.B().Exists().Key(slots, rate).Build()).AsInt64(); n != 0 || err != nil {
		t.Errorf("the refused limiter_acquire or limiter_take left a key (EXISTS: %d, %v)", n, err)
	}
	for op, want := range map[string]float64{"enqueue": 1, "fire": 1, "extend": 0, "claim": 0, "lock_acquire": 0, "limiter_acquire": 1, "limiter_take": 1, "limiter_extend": 0} {
		if got := testkit.Metric(t, reg, "courier_redis_refused_total", "op", op, "reason", metrics.RefusedOOM); got != want {
			t.Errorf("courier_redis_refused_total{op=%s,reason=oom} = %v, want %v", op, got, want)
		}
	}
	if c.flagless.Load() {
		t.Error("Redis 7 refused a script's flags line: the scripts went without flags")
	}
	// A plain command is counted too.
	_ = c.Do(ctx, c.B().Sadd().Key(prefix+":queues").Member("q").Build())
	if got := testkit.Metric(t, reg, "courier_redis_refused_total", "op", "sadd", "reason", metrics.RefusedOOM); got != 1 {
		t.Errorf("courier_redis_refused_total{op=sadd,reason=oom} = %v, want 1", got)
	}
}
