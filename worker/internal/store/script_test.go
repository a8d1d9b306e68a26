package store_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/lua"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Scripts are called raw here, with argument lists the Go wrappers never
// build: every script must refuse bad ARGV before its first write, because
// Lua does not roll back.

var (
	rawEnqueue = rueidis.NewLuaScript(lua.Enqueue)
	rawClaim   = rueidis.NewLuaScript(lua.Claim)
	rawAck     = rueidis.NewLuaScript(lua.Ack)
	rawRetry   = rueidis.NewLuaScript(lua.Retry)
	rawSnooze  = rueidis.NewLuaScript(lua.Snooze)
	rawExtend  = rueidis.NewLuaScript(lua.Extend)
	rawCancel  = rueidis.NewLuaScript(lua.Cancel)
	rawRequeue = rueidis.NewLuaScript(lua.Requeue)
	rawRecover = rueidis.NewLuaScript(lua.Recover)
	rawDead    = rueidis.NewLuaScript(lua.DeadList)
	rawPurge   = rueidis.NewLuaScript(lua.Purge)
)

// repeatArgs returns n copies of args, concatenated.
func repeatArgs(n int, args ...string) []string {
	out := make([]string, 0, n*len(args))
	for range n {
		out = append(out, args...)
	}
	return out
}

// enqueueArgs returns enqueue ARGV for the given jobs of six values each.
func enqueueArgs(wake string, jobs ...[6]string) []string {
	args := []string{wake, strconv.Itoa(len(jobs))}
	for _, j := range jobs {
		args = append(args, j[:]...)
	}
	return args
}

func TestScriptsRejectBadArguments(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s) // seed-active is held under claim 1
		// A job due now, so that a claim that went ahead would change
		// something.
		enqueue(t, s, job("seed-ready", "r"))
		ok := [6]string{"new", "-1", "0", "0", "0", "p"}
		active := []string{"seed-active", "1"}
		claimKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.Rate}

		tests := []struct {
			name   string
			script *rueidis.Lua
			keys   []string
			args   []string
		}{
			{"enqueue n=0", rawEnqueue, []string{k.Jobs, k.Due}, []string{k.Wake, "0"}},
			{"enqueue n=1001", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, make([][6]string, 1001)...)},
			{"enqueue n not a number", rawEnqueue, []string{k.Jobs, k.Due}, append([]string{k.Wake, "one"}, ok[:]...)},
			{"enqueue too few values", rawEnqueue, []string{k.Jobs, k.Due}, append([]string{k.Wake, "2"}, ok[:]...)},
			{"enqueue too many values", rawEnqueue, []string{k.Jobs, k.Due}, append(enqueueArgs(k.Wake, ok), "extra")},
			{"enqueue empty id in the second job", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"", "-1", "0", "0", "0", "p"})},
			{"enqueue run-at not an integer", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "1.5", "0", "0", "0", ""})},
			{"enqueue run-at empty", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "", "0", "0", "0", ""})},
			{"enqueue delay of 16 digits", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "1234567890123456", "0", "0", ""})},
			{"enqueue max attempts not a number", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "three", "0", ""})},
			{"enqueue timeout in exponent form", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "1e3", ""})},
			{"enqueue negative max attempts", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "-1", "0", ""})},
			{"enqueue negative timeout", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "-5", ""})},
			{"enqueue negative delay", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "-5", "0", "0", ""})},
			{"enqueue run-at below -1", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-2", "0", "0", "0", ""})},
			{"enqueue timeout beyond a Duration", rawEnqueue, []string{k.Jobs, k.Due}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "9999999999999", ""})},

			{"claim n=0", rawClaim, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{"0", "1000"}},
			{"claim n=1001", rawClaim, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{"1001", "1000"}},
			{"claim n not a number", rawClaim, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{"all", "1000"}},
			{"claim lease 0", rawClaim, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{"10", "0"}},
			{"claim lease missing", rawClaim, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{"10"}},
			{"claim rate_n not a number", rawClaim, claimKeys, []string{"10", "1000", "ten", "1000"}},
			{"claim rate_n negative", rawClaim, claimKeys, []string{"10", "1000", "-1", "1000"}},
			{"claim rate_n in exponent form", rawClaim, claimKeys, []string{"10", "1000", "1e3", "1000"}},
			{"claim rate_n 1000001", rawClaim, claimKeys, []string{"10", "1000", "1000001", "1000"}},
			{"claim rate_ms 0", rawClaim, claimKeys, []string{"10", "1000", "5", "0"}},
			{"claim rate_ms missing", rawClaim, claimKeys, []string{"10", "1000", "5"}},
			{"claim rate_ms not a number", rawClaim, claimKeys, []string{"10", "1000", "5", "1s"}},
			{"claim rate_ms fractional", rawClaim, claimKeys, []string{"10", "1000", "5", "0.5"}},
			{"claim rate_ms beyond a year", rawClaim, claimKeys, []string{"10", "1000", "5", "99999999999"}},
			{"claim rate_ms without rate_n", rawClaim, claimKeys, []string{"10", "1000", "0", "1000"}},
			{"claim rate limit without the rate key", rawClaim, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{"10", "1000", "5", "1000"}},

			{"ack odd pairs", rawAck, []string{k.Jobs, k.Active, k.Claims}, append(active, "other")},
			{"ack claim not a number", rawAck, []string{k.Jobs, k.Active, k.Claims}, append(active, "other", "x")},
			{"ack negative claim", rawAck, []string{k.Jobs, k.Active, k.Claims}, append(active, "other", "-1")},
			{"ack 1001 pairs", rawAck, []string{k.Jobs, k.Active, k.Claims}, append(active, repeatArgs(1000, "other", "1")...)},

			{"retry claim not a number", rawRetry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "seed-active", "one", "due", "0", "e"}},
			{"retry to nowhere", rawRetry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "seed-active", "1", "limbo", "0", "e"}},
			{"retry negative delay", rawRetry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "seed-active", "1", "due", "-1", "e"}},
			{"retry delay not a number", rawRetry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "seed-active", "1", "due", "soon", "e"}},

			{"snooze negative delay", rawSnooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "-1"}, active...)},
			{"snooze delay not a number", rawSnooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "later"}, active...)},
			{"snooze odd pairs", rawSnooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "0"}, append(active, "other")...)},
			{"snooze claim not a number", rawSnooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "0"}, append(active, "other", "x")...)},
			{"snooze 1001 pairs", rawSnooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "0"}, append(active, repeatArgs(1000, "other", "1")...)...)},

			{"extend lease 0", rawExtend, []string{k.Active, k.Claims}, append([]string{"0"}, active...)},
			{"extend lease not a number", rawExtend, []string{k.Active, k.Claims}, append([]string{"long"}, active...)},
			{"extend odd pairs", rawExtend, []string{k.Active, k.Claims}, append([]string{"1000"}, append(active, "other")...)},
			{"extend claim not a number", rawExtend, []string{k.Active, k.Claims}, append([]string{"1000"}, append(active, "other", "x")...)},
			{"extend 1001 pairs", rawExtend, []string{k.Active, k.Claims}, append([]string{"1000"}, append(active, repeatArgs(1000, "other", "1")...)...)},

			{"cancel without an id", rawCancel, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, nil},

			{"requeue 1001 ids", rawRequeue, []string{k.Jobs, k.Due, k.Dead}, append([]string{k.Wake, "seed-dead"}, repeatArgs(1000, "other")...)},

			{"recover limit 0", rawRecover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "0", "3"}},
			{"recover limit 1001", rawRecover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "1001", "3"}},
			{"recover default max 0", rawRecover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "10", "0"}},
			{"recover default max not a number", rawRecover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{k.Wake, "10", "many"}},

			{"deadlist limit 0", rawDead, []string{k.Jobs, k.Dead}, []string{"0", "jobs", "", "", "", "1000"}},
			{"deadlist limit 1001", rawDead, []string{k.Jobs, k.Dead}, []string{"1001", "jobs", "", "", "", "1000"}},
			{"deadlist limit -1", rawDead, []string{k.Jobs, k.Dead}, []string{"-1", "ids", "", "", "", ""}},
			{"deadlist limit not a number", rawDead, []string{k.Jobs, k.Dead}, []string{"ten", "jobs", "", "", "", "1000"}},
			{"deadlist limit in exponent form", rawDead, []string{k.Jobs, k.Dead}, []string{"1e2", "jobs", "", "", "", "1000"}},
			{"deadlist 5 arguments", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "ids", "", "", ""}},
			{"deadlist 7 arguments", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "ids", "", "", "", "", "x"}},
			{"deadlist mode unknown", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "all", "", "", "", "1000"}},
			{"deadlist cursor id without a time", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "", "seed-dead", "", "1000"}},
			{"deadlist cursor time without an id", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "123", "", "", "1000"}},
			{"deadlist cursor time not whole ms", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "1.5", "x", "", "1000"}},
			{"deadlist cursor time negative", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "-1", "x", "", "1000"}},
			{"deadlist cursor time of 16 digits", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "1234567890123456", "x", "", "1000"}},
			{"deadlist until not a number", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "", "", "soon", "1000"}},
			{"deadlist until negative", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "ids", "", "", "-5", ""}},
			{"deadlist max bytes 0", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "", "", "", "0"}},
			{"deadlist max bytes missing", rawDead, []string{k.Jobs, k.Dead}, []string{"10", "jobs", "", "", "", ""}},

			{"purge without until", rawPurge, []string{k.Jobs, k.Dead}, nil},
			{"purge 1001 ids", rawPurge, []string{k.Jobs, k.Dead}, append([]string{"", "seed-dead"}, repeatArgs(1000, "other")...)},
			{"purge until not a number", rawPurge, []string{k.Jobs, k.Dead}, []string{"soon", "seed-dead"}},
			{"purge until negative", rawPurge, []string{k.Jobs, k.Dead}, []string{"-1", "seed-dead"}},
		}
		before := state(t, c, k)
		for _, tt := range tests {
			err := tt.script.Exec(t.Context(), c, tt.keys, tt.args).Error()
			if err == nil {
				t.Errorf("%s: no error", tt.name)
				continue
			}
			if tt.name != "cancel without an id" && !strings.Contains(err.Error(), "courier:") {
				t.Errorf("%s: error %q is not the script's own", tt.name, err)
			}
			unchanged(t, c, k, before)
		}
	})
}
