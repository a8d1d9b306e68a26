package store_test

import (
	"maps"
	"slices"
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

// enqueueArgs returns enqueue ARGV for the given jobs of six values each,
// none with options.
func enqueueArgs(wake string, jobs ...[6]string) []string {
	args := []string{wake, strconv.Itoa(len(jobs)), "0", ""}
	for _, j := range jobs {
		args = append(args, j[:]...)
	}
	return args
}

// argsWith returns a copy of args with the (index int, value string) pairs
// of set in place.
func argsWith(args []string, set ...any) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(set); i += 2 {
		out[set[i].(int)] = set[i+1].(string)
	}
	return out
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
		// Each script's full keys, so that every case fails for its own
		// reason; the "without" cases leave keys off.
		enqKeys := []string{k.Jobs, k.Due, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings}
		qsKeys := []string{k.Settings, k.Paused}
		copyArgs := []string{"5", "5", "4", "", "0", "0", "1;4", "1", k.Wake}
		claimKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		ackKeys := []string{k.Jobs, k.Active, k.Claims, k.State, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		completeKeys := append(slices.Clone(ackKeys), k.Completed, k.Results)
		// complete.lua ARGV: m, then seed-active's pair and pairs, then
		// the (position, result) pairs of rest; done is seed-active's
		// completion with a result.
		ca := func(m string, pairs []string, rest ...string) []string {
			return append(append([]string{m}, pairs...), rest...)
		}
		done := ca("1", active, "1", "r")
		retryKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		snoozeKeys := []string{k.Due, k.Active, k.Claims, k.DueHigh, k.DueLow, k.Opts}
		extendKeys := []string{k.Active, k.Claims, k.Dead, k.State, k.Cancelled}
		cancelKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.State, k.Claims, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Completed}
		requeueKeys := []string{k.Jobs, k.Due, k.Dead, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp}
		recoverKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		forgetKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Leader, k.Periodic, k.Fleet, k.Paused,
			k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings, k.History, k.HistoryIndex, k.Completed, k.Results}
		historyTrimKeys := []string{k.History, k.HistoryIndex, k.Leader}
		// The test leads the queue, and its history holds a minute long
		// gone, so that a history_trim that went ahead would delete it.
		lead := leaderField(t, s, c, queue)
		do(t, c, c.B().Hset().Key(k.History).FieldValue().FieldValue("1:s", "1").Build())
		do(t, c, c.B().Zadd().Key(k.HistoryIndex).ScoreMember().ScoreMember(1, "1").Build())
		statsKeys := []string{k.Due, k.Active, k.Dead, k.Paused, k.DueHigh, k.DueLow, k.Completed}
		purgeKeys := []string{k.Jobs, k.Dead, k.State, k.Opts}
		deadKeys := []string{k.Jobs, k.Dead, k.State, k.Opts}
		listKeys := []string{k.Jobs, k.Due, k.DueHigh, k.DueLow, k.Active, k.State, k.Claims, k.Opts, k.Completed, k.Results}
		getKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.DueHigh, k.DueLow, k.Opts, k.Completed, k.Results}
		trimKeys := []string{k.Jobs, k.Dead, k.Leader, k.State, k.Opts, k.Results}
		// dl and la return deadlist and list ARGV that pass but for the
		// (index, value) pairs given.
		dl := func(set ...any) []string {
			return argsWith([]string{"10", "jobs", "", "", "", "1000", "", "", ""}, set...)
		}
		la := func(set ...any) []string { return argsWith([]string{"ready", "10", "", "", "", "1000"}, set...) }
		// One job with options: enqueue ARGV with n = 1 and k = 1, and the
		// options pair (position, options) after the job.
		withOpts := func(pos, o string) []string { return append(append([]string{k.Wake, "1", "1", ""}, ok[:]...), pos, o) }

		tests := []struct {
			name   string
			script *script.Script
			keys   []string
			args   []string
		}{
			{"enqueue n=0", script.Enqueue, enqKeys, []string{k.Wake, "0", "0"}},
			{"enqueue n=1001", script.Enqueue, enqKeys, enqueueArgs(k.Wake, make([][6]string, 1001)...)},
			{"enqueue n not a number", script.Enqueue, enqKeys, append([]string{k.Wake, "one", "0"}, ok[:]...)},
			{"enqueue too few values", script.Enqueue, enqKeys, append([]string{k.Wake, "2", "0"}, ok[:]...)},
			{"enqueue too many values", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "extra")},
			{"enqueue empty id in the second job", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"", "-1", "0", "0", "0", "p"})},
			{"enqueue run-at not an integer", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "1.5", "0", "0", "0", ""})},
			{"enqueue run-at empty", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "", "0", "0", "0", ""})},
			{"enqueue delay of 16 digits", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "1234567890123456", "0", "0", ""})},
			{"enqueue max attempts not a number", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "three", "0", ""})},
			{"enqueue timeout in exponent form", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "1e3", ""})},
			{"enqueue negative max attempts", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "-1", "0", ""})},
			{"enqueue negative timeout", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "-5", ""})},
			{"enqueue negative delay", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "-5", "0", "0", ""})},
			{"enqueue run-at below -1", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-2", "0", "0", "0", ""})},
			{"enqueue timeout beyond a Duration", script.Enqueue, enqKeys, enqueueArgs(k.Wake, ok, [6]string{"x", "-1", "0", "0", "9999999999999", ""})},
			{"enqueue without the settings key", script.Enqueue, enqKeys[:8], enqueueArgs(k.Wake, ok)},
			{"enqueue layout version not a number", script.Enqueue, enqKeys, argsWith(enqueueArgs(k.Wake, ok), 3, "v2")},
			{"enqueue layout version negative", script.Enqueue, enqKeys, argsWith(enqueueArgs(k.Wake, ok), 3, "-1")},
			{"enqueue k missing", script.Enqueue, enqKeys, append([]string{k.Wake, "1"}, ok[:]...)},
			{"enqueue k above n", script.Enqueue, enqKeys, append(append([]string{k.Wake, "1", "2"}, ok[:]...), "1", "h;-;0;0;", "1", "h;-;0;0;")},
			{"enqueue options without their pair", script.Enqueue, enqKeys, append([]string{k.Wake, "1", "1"}, ok[:]...)},
			{"enqueue options of job 0", script.Enqueue, enqKeys, withOpts("0", "h;-;0;0;")},
			{"enqueue headers of job 0", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "0", "a=1\n")},
			{"enqueue headers of job 2 of 1", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "2", "a=1\n")},
			{"enqueue headers of job 1 twice", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "1", "a=1\n", "1", "b=1\n")},
			{"enqueue headers without a final newline", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "1", "a=1")},
			{"enqueue headers of 16385 bytes", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "1", strings.Repeat("a", 16384)+"\n")},
			{"enqueue headers without their section", script.Enqueue, enqKeys, append(enqueueArgs(k.Wake, ok), "1")},
			{"enqueue options of job 2 of 1", script.Enqueue, enqKeys, withOpts("2", "h;-;0;0;")},
			{"enqueue options position not a number", script.Enqueue, enqKeys, withOpts("first", "h;-;0;0;")},
			{"enqueue options level unknown", script.Enqueue, enqKeys, withOpts("1", "x;-;0;0;")},
			{"enqueue options since unknown", script.Enqueue, enqKeys, withOpts("1", "h;a;0;0;")},
			{"enqueue options window not a number", script.Enqueue, enqKeys, withOpts("1", "n;e;soon;0;key")},
			{"enqueue options window of 13 digits", script.Enqueue, enqKeys, withOpts("1", "n;e;1234567890123;0;key")},
			{"enqueue options caller flag 2", script.Enqueue, enqKeys, withOpts("1", "n;-;0;2;key")},
			{"enqueue options cut short", script.Enqueue, enqKeys, withOpts("1", "h;-;0")},

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
			{"claim without the unique keys", script.Claim, claimKeys[:10], []string{"10", "1000"}},
			{"claim without the history keys", script.Claim, claimKeys[:13], []string{"10", "1000"}},
			{"claim weights of two levels", script.Claim, claimKeys, []string{"10", "1000", "", "", "1,1"}},
			{"claim weight 1001", script.Claim, claimKeys, []string{"10", "1000", "", "", "1001,1,1"}},
			{"claim weights all 0", script.Claim, claimKeys, []string{"10", "1000", "", "", "0,0,0"}},
			{"claim weight negative", script.Claim, claimKeys, []string{"10", "1000", "", "", "-1,1,1"}},
			{"claim rate limit without the state and rate keys", script.Claim, claimKeys[:5], []string{"10", "1000", "5", "1000"}},

			{"ack odd pairs", script.Ack, ackKeys, append(active, "other")},
			{"ack without the unique keys", script.Ack, ackKeys[:4], active},
			{"ack without the history keys", script.Ack, ackKeys[:7], active},
			{"ack claim not a number", script.Ack, ackKeys, append(active, "other", "x")},
			{"ack negative claim", script.Ack, ackKeys, append(active, "other", "-1")},
			{"ack 1001 pairs", script.Ack, ackKeys, append(active, repeatArgs(1000, "other", "1")...)},

			{"complete without m", script.Complete, completeKeys, active},
			{"complete a pair cut short", script.Complete, completeKeys, ca("0", append(slices.Clone(active), "other"))},
			{"complete m above the pairs", script.Complete, completeKeys, ca("2", active, "1", "r", "1", "r")},
			{"complete m negative", script.Complete, completeKeys, ca("-1", active)},
			{"complete result of job 0", script.Complete, completeKeys, ca("1", active, "0", "r")},
			{"complete result of job 2 of 1", script.Complete, completeKeys, ca("1", active, "2", "r")},
			{"complete result position fractional", script.Complete, completeKeys, ca("1", active, "1.5", "r")},
			{"complete without the completed and results keys", script.Complete, completeKeys[:9], done},
			{"complete without the results key", script.Complete, completeKeys[:10], done},
			{"complete claim not a number", script.Complete, completeKeys, ca("1", append(slices.Clone(active), "other", "x"), "1", "r")},
			{"complete negative claim", script.Complete, completeKeys, ca("1", append(slices.Clone(active), "other", "-1"), "1", "r")},
			{"complete 1001 pairs", script.Complete, completeKeys, ca("1", append(slices.Clone(active), repeatArgs(1000, "other", "1")...), "1", "r")},

			{"retry claim not a number", script.Retry, retryKeys, []string{k.Wake, "seed-active", "one", "due", "0", "e"}},
			{"retry to nowhere", script.Retry, retryKeys, []string{k.Wake, "seed-active", tok, "limbo", "0", "e"}},
			{"retry negative delay", script.Retry, retryKeys, []string{k.Wake, "seed-active", tok, "due", "-1", "e"}},
			{"retry delay not a number", script.Retry, retryKeys, []string{k.Wake, "seed-active", tok, "due", "soon", "e"}},

			{"snooze negative delay", script.Snooze, snoozeKeys, append([]string{k.Wake, "-1"}, active...)},
			{"snooze delay not a number", script.Snooze, snoozeKeys, append([]string{k.Wake, "later"}, active...)},
			{"snooze odd pairs", script.Snooze, snoozeKeys, append([]string{k.Wake, "0"}, append(active, "other")...)},
			{"snooze claim not a number", script.Snooze, snoozeKeys, append([]string{k.Wake, "0"}, append(active, "other", "x")...)},
			{"snooze 1001 pairs", script.Snooze, snoozeKeys, append([]string{k.Wake, "0"}, append(active, repeatArgs(1000, "other", "1")...)...)},

			{"extend lease 0", script.Extend, extendKeys, append([]string{"0", "0"}, active...)},
			{"extend lease not a number", script.Extend, extendKeys, append([]string{"long", "0"}, active...)},
			{"extend odd pairs", script.Extend, extendKeys, append([]string{"1000", "0"}, append(active, "other")...)},
			{"extend claim not a number", script.Extend, extendKeys, append([]string{"1000", "0"}, append(active, "other", "x")...)},
			{"extend 1001 pairs", script.Extend, extendKeys, append([]string{"1000", "0"}, append(active, repeatArgs(1000, "other", "1")...)...)},

			{"cancel without an id", script.Cancel, cancelKeys, nil},
			{"cancel without the wake channel", script.Cancel, cancelKeys, []string{"seed-active"}},
			{"cancel without the unique keys", script.Cancel, cancelKeys[:6], []string{"seed-active", k.Wake}},
			{"cancel without the completed key", script.Cancel, cancelKeys[:11], []string{"seed-active", k.Wake}},
			{"extend m not a number", script.Extend, extendKeys, append([]string{"1000", "one"}, active...)},
			{"extend m above the jobs", script.Extend, extendKeys, append([]string{"1000", "2"}, append(active, "1", "5;x")...)},
			{"extend progress position 0", script.Extend, extendKeys, append([]string{"1000", "1"}, append(active, "0", "5;x")...)},
			{"extend progress position past the jobs", script.Extend, extendKeys, append([]string{"1000", "1"}, append(active, "2", "5;x")...)},
			{"extend without the dead and state keys", script.Extend, extendKeys[:2], append([]string{"1000", "0"}, active...)},
			{"retry without the unique keys", script.Retry, retryKeys[:6], []string{k.Wake, "seed-active", tok, "dead", "0", "e"}},
			{"retry without the history keys", script.Retry, retryKeys[:11], []string{k.Wake, "seed-active", tok, "dead", "0", "e"}},
			{"snooze without the opts key", script.Snooze, snoozeKeys[:3], append([]string{k.Wake, "0"}, active...)},
			{"requeue without the unique keys", script.Requeue, requeueKeys[:4], []string{k.Wake, "seed-dead"}},
			{"recover without the unique keys", script.Recover, recoverKeys[:7], []string{k.Wake, "10", "3", "x"}},
			{"recover without the history keys", script.Recover, recoverKeys[:12], []string{k.Wake, "10", "3", "x"}},
			{"uniq_expire limit 0", script.UniqExpire, []string{k.Unique, k.UniqueExp, k.Jobs, k.Leader}, []string{"x", "0"}},
			{"uniq_expire limit 1001", script.UniqExpire, []string{k.Unique, k.UniqueExp, k.Jobs, k.Leader}, []string{"x", "1001"}},
			{"uniq_expire limit not a number", script.UniqExpire, []string{k.Unique, k.UniqueExp, k.Jobs, k.Leader}, []string{"x", "all"}},

			{"requeue 1001 ids", script.Requeue, requeueKeys, append([]string{k.Wake, "seed-dead"}, repeatArgs(1000, "other")...)},

			{"recover limit 0", script.Recover, recoverKeys, []string{k.Wake, "0", "3"}},
			{"recover limit 1001", script.Recover, recoverKeys, []string{k.Wake, "1001", "3"}},
			{"recover default max 0", script.Recover, recoverKeys, []string{k.Wake, "10", "0"}},
			{"recover default max not a number", script.Recover, recoverKeys, []string{k.Wake, "10", "many"}},

			{"deadlist limit 0", script.DeadList, deadKeys, dl(0, "0")},
			{"deadlist limit 1001", script.DeadList, deadKeys, dl(0, "1001")},
			{"deadlist limit -1", script.DeadList, deadKeys, dl(0, "-1")},
			{"deadlist limit not a number", script.DeadList, deadKeys, dl(0, "ten")},
			{"deadlist limit in exponent form", script.DeadList, deadKeys, dl(0, "1e2")},
			{"deadlist 8 arguments", script.DeadList, deadKeys, dl(0, "10")[:8]},
			{"deadlist 10 arguments", script.DeadList, deadKeys, append(dl(0, "10"), "x")},
			{"deadlist without the opts key", script.DeadList, deadKeys[:3], dl(0, "10")},
			{"deadlist mode unknown", script.DeadList, deadKeys, dl(1, "all")},
			{"deadlist cursor id without a time", script.DeadList, deadKeys, dl(3, "seed-dead")},
			{"deadlist cursor time without an id", script.DeadList, deadKeys, dl(2, "123")},
			{"deadlist cursor time not whole ms", script.DeadList, deadKeys, dl(2, "1.5", 3, "x")},
			{"deadlist cursor time negative", script.DeadList, deadKeys, dl(2, "-1", 3, "x")},
			{"deadlist cursor time of 16 digits", script.DeadList, deadKeys, dl(2, "1234567890123456", 3, "x")},
			{"deadlist until not a number", script.DeadList, deadKeys, dl(4, "soon")},
			{"deadlist until negative", script.DeadList, deadKeys, dl(4, "-5", 1, "ids", 5, "")},
			{"deadlist max bytes 0", script.DeadList, deadKeys, dl(5, "0")},
			{"deadlist max bytes missing", script.DeadList, deadKeys, dl(5, "")},
			{"deadlist max bytes missing with an error filter", script.DeadList, deadKeys, dl(1, "ids", 5, "", 8, "boom")},
			{"deadlist after not a number", script.DeadList, deadKeys, dl(6, "yesterday")},
			{"deadlist after negative", script.DeadList, deadKeys, dl(6, "-1")},
			{"deadlist before of 16 digits", script.DeadList, deadKeys, dl(7, "1234567890123456")},
			{"deadlist error filter of 257 bytes", script.DeadList, deadKeys, dl(8, strings.Repeat("x", 257))},

			{"list 5 arguments", script.List, listKeys, la(0, "ready")[:5]},
			{"list without the opts key", script.List, listKeys[:7], la(0, "ready")},
			{"list without the completed and results keys", script.List, listKeys[:8], la(0, "ready")},
			{"list without the results key", script.List, listKeys[:9], la(0, "completed")},
			{"list completed cursor with a level", script.List, listKeys, la(0, "completed", 2, "n", 3, "123", 4, "x")},
			{"list dead", script.List, listKeys, la(0, "dead")},
			{"list what empty", script.List, listKeys, la(0, "")},
			{"list limit 0", script.List, listKeys, la(1, "0")},
			{"list limit 1001", script.List, listKeys, la(1, "1001")},
			{"list limit in exponent form", script.List, listKeys, la(1, "1e2")},
			{"list cursor id without a score", script.List, listKeys, la(4, "seed-due")},
			{"list cursor level without a score", script.List, listKeys, la(2, "h")},
			{"list cursor score without an id", script.List, listKeys, la(3, "123")},
			{"list cursor score negative", script.List, listKeys, la(3, "-1", 4, "x")},
			{"list cursor score of 16 digits", script.List, listKeys, la(3, "1234567890123456", 4, "x")},
			{"list ready cursor without a level", script.List, listKeys, la(3, "123", 4, "x")},
			{"list ready cursor level unknown", script.List, listKeys, la(2, "x", 3, "123", 4, "x")},
			{"list scheduled cursor with a level", script.List, listKeys, la(0, "scheduled", 2, "h", 3, "123", 4, "x")},
			{"list max bytes 0", script.List, listKeys, la(5, "0")},
			{"list max bytes not a number", script.List, listKeys, la(5, "lots")},

			{"claim process with @", script.Claim, claimKeys, []string{"10", "60000", "", "", "", "host@1"}},
			{"claim process of 257 bytes", script.Claim, claimKeys, []string{"10", "60000", "", "", "", strings.Repeat("p", 257)}},

			{"queue_set without the paused key", script.QueueSet, []string{k.Settings}, []string{"retention", "0"}},
			{"queue_set unknown change", script.QueueSet, qsKeys, []string{"grow"}},
			{"queue_set read (a plain HMGET)", script.QueueSet, qsKeys, []string{"read"}},
			{"queue_set no change", script.QueueSet, qsKeys, nil},
			{"queue_set pause without a state", script.QueueSet, qsKeys, []string{"pause", "", k.Wake}},
			{"queue_set pause state yes", script.QueueSet, qsKeys, []string{"pause", "yes", k.Wake}},
			{"queue_set pause state 2", script.QueueSet, qsKeys, []string{"pause", "2", k.Wake}},
			{"queue_set pause without the wake channel", script.QueueSet, qsKeys, []string{"pause", "1"}},
			{"queue_set pause empty wake channel", script.QueueSet, qsKeys, []string{"pause", "1", ""}},
			{"queue_set retention negative", script.QueueSet, qsKeys, []string{"retention", "-1"}},
			{"queue_set retention over a year", script.QueueSet, qsKeys, []string{"retention", "31622400001"}},
			{"queue_set retention missing", script.QueueSet, qsKeys, []string{"retention"}},
			{"queue_set layout revision not a number", script.QueueSet, qsKeys, []string{"layout", "r1", "4", "", "0;4"}},
			{"queue_set layout of 0 partitions", script.QueueSet, qsKeys, []string{"layout", "", "0", "", "0;1"}},
			{"queue_set layout of 65 partitions", script.QueueSet, qsKeys, []string{"layout", "", "65", "", "0;65"}},
			{"queue_set layout prev not numbers", script.QueueSet, qsKeys, []string{"layout", "", "4", "two", "0;4"}},
			{"queue_set layout share missing", script.QueueSet, qsKeys, []string{"layout", "", "4", ""}},
			{"queue_set layout share not i;m", script.QueueSet, qsKeys, []string{"layout", "", "4", "", "0"}},
			{"queue_copy without the paused key", script.QueueCopy, []string{k.Settings}, copyArgs},
			{"queue_copy rev not a number", script.QueueCopy, qsKeys, argsWith(copyArgs, 0, "x")},
			{"queue_copy v missing", script.QueueCopy, qsKeys, argsWith(copyArgs, 1, "")},
			{"queue_copy of 0 partitions", script.QueueCopy, qsKeys, argsWith(copyArgs, 2, "0")},
			{"queue_copy prev not numbers", script.QueueCopy, qsKeys, argsWith(copyArgs, 3, "x")},
			{"queue_copy retention negative", script.QueueCopy, qsKeys, argsWith(copyArgs, 4, "-1")},
			{"queue_copy paused yes", script.QueueCopy, qsKeys, argsWith(copyArgs, 5, "yes")},
			{"queue_copy share not i;m", script.QueueCopy, qsKeys, argsWith(copyArgs, 6, "1")},
			{"queue_copy serves 2", script.QueueCopy, qsKeys, argsWith(copyArgs, 7, "2")},
			{"queue_copy without the wake channel", script.QueueCopy, qsKeys, copyArgs[:8]},

			{"forget without the paused key", script.Forget, forgetKeys[:10], nil},
			{"forget without the settings key", script.Forget, forgetKeys[:16], nil},
			{"forget without the history keys", script.Forget, forgetKeys[:17], nil},
			{"forget without the completed and results keys", script.Forget, forgetKeys[:19], nil},
			{"forget without the results key", script.Forget, forgetKeys[:20], nil},

			{"history_trim without the leader key", script.HistoryTrim, historyTrimKeys[:2], []string{lead, "60"}},
			{"history_trim retention 0", script.HistoryTrim, historyTrimKeys, []string{lead, "0"}},
			{"history_trim retention missing", script.HistoryTrim, historyTrimKeys, []string{lead}},
			{"history_trim retention negative", script.HistoryTrim, historyTrimKeys, []string{lead, "-60"}},
			{"history_trim retention fractional", script.HistoryTrim, historyTrimKeys, []string{lead, "1.5"}},
			{"history_trim retention in exponent form", script.HistoryTrim, historyTrimKeys, []string{lead, "1e3"}},
			{"history_trim retention beyond 10^8", script.HistoryTrim, historyTrimKeys, []string{lead, "100000001"}},
			{"stats without the paused key", script.Stats, statsKeys[:3], nil},
			{"stats without the due level keys", script.Stats, statsKeys[:4], nil},
			{"stats without the completed key", script.Stats, statsKeys[:6], nil},
			{"get without the opts key", script.Get, getKeys[:6], []string{"seed-due"}},
			{"get without the completed and results keys", script.Get, getKeys[:9], []string{"seed-due"}},
			{"get without the results key", script.Get, getKeys[:10], []string{"seed-due"}},
			{"purge without the opts key", script.Purge, purgeKeys[:3], []string{"", "seed-dead"}},
			{"trim without the opts key", script.Trim, trimKeys[:4], []string{lead, "0", "1", "100"}},
			{"trim without the results key", script.Trim, trimKeys[:5], []string{lead, "0", "1", "100"}},

			{"purge without until", script.Purge, purgeKeys, nil},
			{"purge 1001 ids", script.Purge, purgeKeys, append([]string{"", "seed-dead"}, repeatArgs(1000, "other")...)},
			{"purge until not a number", script.Purge, purgeKeys, []string{"soon", "seed-dead"}},
			{"purge until negative", script.Purge, purgeKeys, []string{"-1", "seed-dead"}},
		}
		before := state(t, c, k)
		history := testkit.HGetAll(t, c, k.History)
		for _, tt := range tests {
			err := tt.script.Exec(t.Context(), script.NewConn(c, nil), tt.keys, tt.args).Error()
			if err == nil {
				t.Errorf("%s: no error", tt.name)
				continue
			}
			t.Logf("%s: %v", tt.name, err)
			if tt.name != "cancel without an id" && !strings.Contains(err.Error(), "courier:") {
				t.Errorf("%s: error %q is not the script's own", tt.name, err)
			}
			unchanged(t, c, k, before)
			if testkit.Exists(t, c, k.Paused) {
				t.Fatalf("%s: the queue was paused", tt.name)
			}
			if got := testkit.HGetAll(t, c, k.History); !maps.Equal(got, history) {
				t.Fatalf("%s: the history changed: %v, was %v", tt.name, got, history)
			}
		}
	})
}
