package store_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Scripts are called raw here, with argument lists the Go wrappers never
// build: every script must refuse bad ARGV before its first write, because
// Lua does not roll back.

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
		seed(t, s)
		// A job due now, so that a claim that went ahead would change
		// something.
		enqueue(t, s, job("seed-ready", "r"))
		ok := [6]string{"new", "-1", "0", "0", "0", "p"}
		// seed-active's own claim, so that a call that went ahead would
		// change something.
		tok, _ := testkit.HGet(t, c, k.Claims, "seed-active")
		active := []string{"seed-active", tok}
		claimKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused}
		forgetKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Leader, k.Periodic, k.Fleet, k.Paused}

		tests := []struct {
			name   string
			script *script.Script
			keys   []string
			args   []string
		}{
			{"enqueue n=0", script.Enqueue, []string{k.Jobs, k.Due, k.State}, []string{k.Wake, "0"}},
			{"enqueue n=1001", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, make([][6]string, 1001)...)},
			{"enqueue n not a number", script.Enqueue, []string{k.Jobs, k.Due, k.State}, append([]string{k.Wake, "one"}, ok[:]...)},
			{"enqueue too few values", script.Enqueue, []string{k.Jobs, k.Due, k.State}, append([]string{k.Wake, "2"}, ok[:]...)},
			{"enqueue too many values", script.Enqueue, []string{k.Jobs, k.Due, k.State}, append(enqueueArgs(k.Wake, ok), "extra")},
			{"enqueue empty id in the second job", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"", "-1", "0", "0", "0", "p"})},
			{"enqueue run-at not an integer", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "1.5", "0", "0", "0", ""})},
			{"enqueue run-at empty", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "", "0", "0", "0", ""})},
			{"enqueue delay of 16 digits", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "1234567890123456", "0", "0", ""})},
			{"enqueue max attempts not a number", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "three", "0", ""})},
			{"enqueue timeout in exponent form", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "1e3", ""})},
			{"enqueue negative max attempts", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "-1", "0", ""})},
			{"enqueue negative timeout", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "-5", ""})},
			{"enqueue negative delay", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "-5", "0", "0", ""})},
			{"enqueue run-at below -1", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-2", "0", "0", "0", ""})},
			{"enqueue timeout beyond a Duration", script.Enqueue, []string{k.Jobs, k.Due, k.State}, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "9999999999999", ""})},

			{"claim n=0", script.Claim, claimKeys, []string{"0", "1000"}},
			{"claim n=1001", script.Claim, claimKeys, []string{"1001", "1000"}},
			{"claim n not a number", script.Claim, claimKeys, []string{"all", "1000"}},
			{"claim lease 0", script.Claim, claimKeys, []string{"10", "0"}},
			{"claim lease missing", script.Claim, claimKeys, []string{"10"}},
			{"claim rate_n not a number", script.Claim, claimKeys, []string{"10", "1000", "ten", "1000"}},
			{"claim rate_n negative", script.Claim, claimKeys, []string{"10", "1000", "-1", "1000"}},
			{"claim rate_n in exponent form", script.Claim, claimKeys, []string{"10", "1000", "1e3", "1000"}},
			{"claim rate_n 1000001", script.Claim, claimKeys, []string{"10", "1000", "1000001", "1000"}},
			{"claim rate_ms 0", script.Claim, claimKeys, []string{"10", "1000", "5", "0"}},
			{"claim rate_ms missing", script.Claim, claimKeys, []string{"10", "1000", "5"}},
			{"claim rate_ms not a number", script.Claim, claimKeys, []string{"10", "1000", "5", "1s"}},
			{"claim rate_ms fractional", script.Claim, claimKeys, []string{"10", "1000", "5", "0.5"}},
			{"claim rate_ms beyond a year", script.Claim, claimKeys, []string{"10", "1000", "5", "99999999999"}},
			{"claim rate_ms without rate_n", script.Claim, claimKeys, []string{"10", "1000", "0", "1000"}},
			{"claim rate limit without the rate key", script.Claim, claimKeys[:6], []string{"10", "1000", "5", "1000"}},
			{"claim without the paused key", script.Claim, claimKeys[:7], []string{"10", "1000"}},
			{"claim rate limit without the state and rate keys", script.Claim, claimKeys[:5], []string{"10", "1000", "5", "1000"}},

			{"ack odd pairs", script.Ack, []string{k.Jobs, k.Active, k.Claims, k.State}, append(active, "other")},
			{"ack claim not a number", script.Ack, []string{k.Jobs, k.Active, k.Claims, k.State}, append(active, "other", "x")},
			{"ack negative claim", script.Ack, []string{k.Jobs, k.Active, k.Claims, k.State}, append(active, "other", "-1")},
			{"ack 1001 pairs", script.Ack, []string{k.Jobs, k.Active, k.Claims, k.State}, append(active, repeatArgs(1000, "other", "1")...)},

			{"retry claim not a number", script.Retry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State}, []string{k.Wake, "seed-active", "one", "due", "0", "e"}},
			{"retry to nowhere", script.Retry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State}, []string{k.Wake, "seed-active", tok, "limbo", "0", "e"}},
			{"retry negative delay", script.Retry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State}, []string{k.Wake, "seed-active", tok, "due", "-1", "e"}},
			{"retry delay not a number", script.Retry, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State}, []string{k.Wake, "seed-active", tok, "due", "soon", "e"}},

			{"snooze negative delay", script.Snooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "-1"}, active...)},
			{"snooze delay not a number", script.Snooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "later"}, active...)},
			{"snooze odd pairs", script.Snooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "0"}, append(active, "other")...)},
			{"snooze claim not a number", script.Snooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "0"}, append(active, "other", "x")...)},
			{"snooze 1001 pairs", script.Snooze, []string{k.Due, k.Active, k.Claims}, append([]string{k.Wake, "0"}, append(active, repeatArgs(1000, "other", "1")...)...)},

			{"extend lease 0", script.Extend, []string{k.Active, k.Claims}, append([]string{"0"}, active...)},
			{"extend lease not a number", script.Extend, []string{k.Active, k.Claims}, append([]string{"long"}, active...)},
			{"extend odd pairs", script.Extend, []string{k.Active, k.Claims}, append([]string{"1000"}, append(active, "other")...)},
			{"extend claim not a number", script.Extend, []string{k.Active, k.Claims}, append([]string{"1000"}, append(active, "other", "x")...)},
			{"extend 1001 pairs", script.Extend, []string{k.Active, k.Claims}, append([]string{"1000"}, append(active, repeatArgs(1000, "other", "1")...)...)},

			{"cancel without an id", script.Cancel, []string{k.Jobs, k.Due, k.Active, k.Dead, k.State}, nil},

			{"requeue 1001 ids", script.Requeue, []string{k.Jobs, k.Due, k.Dead, k.State}, append([]string{k.Wake, "seed-dead"}, repeatArgs(1000, "other")...)},

			{"recover limit 0", script.Recover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader}, []string{k.Wake, "0", "3"}},
			{"recover limit 1001", script.Recover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader}, []string{k.Wake, "1001", "3"}},
			{"recover default max 0", script.Recover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader}, []string{k.Wake, "10", "0"}},
			{"recover default max not a number", script.Recover, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader}, []string{k.Wake, "10", "many"}},

			{"deadlist limit 0", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"0", "jobs", "", "", "", "1000"}},
			{"deadlist limit 1001", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"1001", "jobs", "", "", "", "1000"}},
			{"deadlist limit -1", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"-1", "ids", "", "", "", ""}},
			{"deadlist limit not a number", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"ten", "jobs", "", "", "", "1000"}},
			{"deadlist limit in exponent form", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"1e2", "jobs", "", "", "", "1000"}},
			{"deadlist 5 arguments", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "ids", "", "", ""}},
			{"deadlist 7 arguments", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "ids", "", "", "", "", "x"}},
			{"deadlist mode unknown", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "all", "", "", "", "1000"}},
			{"deadlist cursor id without a time", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "", "seed-dead", "", "1000"}},
			{"deadlist cursor time without an id", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "123", "", "", "1000"}},
			{"deadlist cursor time not whole ms", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "1.5", "x", "", "1000"}},
			{"deadlist cursor time negative", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "-1", "x", "", "1000"}},
			{"deadlist cursor time of 16 digits", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "1234567890123456", "x", "", "1000"}},
			{"deadlist until not a number", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "", "", "soon", "1000"}},
			{"deadlist until negative", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "ids", "", "", "-5", ""}},
			{"deadlist max bytes 0", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "", "", "", "0"}},
			{"deadlist max bytes missing", script.DeadList, []string{k.Jobs, k.Dead, k.State}, []string{"10", "jobs", "", "", "", ""}},

			{"pause without a state", script.Pause, []string{k.Paused}, []string{"", k.Wake}},
			{"pause state yes", script.Pause, []string{k.Paused}, []string{"yes", k.Wake}},
			{"pause state 2", script.Pause, []string{k.Paused}, []string{"2", k.Wake}},
			{"pause without the wake channel", script.Pause, []string{k.Paused}, []string{"1"}},
			{"pause empty wake channel", script.Pause, []string{k.Paused}, []string{"1", ""}},

			{"forget without the paused key", script.Forget, forgetKeys[:10], nil},
			{"stats without the paused key", script.Stats, []string{k.Due, k.Active, k.Dead}, nil},

			{"purge without until", script.Purge, []string{k.Jobs, k.Dead, k.State}, nil},
			{"purge 1001 ids", script.Purge, []string{k.Jobs, k.Dead, k.State}, append([]string{"", "seed-dead"}, repeatArgs(1000, "other")...)},
			{"purge until not a number", script.Purge, []string{k.Jobs, k.Dead, k.State}, []string{"soon", "seed-dead"}},
			{"purge until negative", script.Purge, []string{k.Jobs, k.Dead, k.State}, []string{"-1", "seed-dead"}},
		}
		before := state(t, c, k)
		for _, tt := range tests {
			err := tt.script.Exec(t.Context(), script.NewConn(c, nil), tt.keys, tt.args).Error()
			if err == nil {
				t.Errorf("%s: no error", tt.name)
				continue
			}
			if tt.name != "cancel without an id" && !strings.Contains(err.Error(), "courier:") {
				t.Errorf("%s: error %q is not the script's own", tt.name, err)
			}
			unchanged(t, c, k, before)
			if testkit.Exists(t, c, k.Paused) {
				t.Fatalf("%s: the queue was paused", tt.name)
			}
		}
	})
}
