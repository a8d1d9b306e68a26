package store_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestBadReportIsDroppedNotTheRenewal: a progress report never fails the
// lease renewal that carries it (issue 29, item 7). Go's percents at the
// edges (-0, a subnormal, a hair under 100) go out normalised and are
// stored; a report extend.lua cannot store (a percent of "-0", out of
// range, not a plain decimal; a message with a newline or too long) is
// dropped, the stored progress kept, and the lease renewed all the same.
func TestBadReportIsDroppedNotTheRenewal(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", "1"))
		a := claimOne(t, s, time.Minute)
		// renewed fails unless a's lease ends lease after before, or later.
		renewed := func(what string, before int64, lease time.Duration) {
			t.Helper()
			if at, ok := testkit.ZScore(t, c, k.Active, "a"); !ok || at < before+lease.Milliseconds() {
				t.Errorf("%s: the lease ends at %d, want at least %d: not renewed", what, at, before+lease.Milliseconds())
			}
		}
		n := 0
		nextLease := func() time.Duration { n++; return time.Duration(n+1) * time.Hour }

		for _, tc := range []struct {
			name     string
			pct, was float64
		}{
			{"-0", math.Copysign(0, -1), 0},
			{"1e-320", 1e-320, 0},
			{"99.999", 99.999, 100},
			{"12.344", 12.344, 12.34},
			{"100", 100, 100},
			{"0", 0, 0},
		} {
			lease, before := nextLease(), testkit.RedisNow(t, c)
			rs := map[string][]store.Renewal{queue: {{Token: a.Token(), Progress: &store.Progress{Percent: tc.pct, Message: tc.name}}}}
			if lost, err := s.Extend(t.Context(), rs, lease); err != nil || len(lost[queue]) != 0 {
				t.Errorf("Extend with %s%%: lost %v, %v; want the lease renewed", tc.name, lost, err)
				continue
			}
			renewed(tc.name, before, lease)
			p := get(t, s, "a").Record.Progress
			if p == nil || p.Percent != tc.was || math.Signbit(p.Percent) || p.Message != tc.name {
				t.Errorf("%s%%: stored %+v, want %v%% %q", tc.name, p, tc.was, tc.name)
			}
		}

		// Reports Go never sends, raw: each is dropped, the last good one
		// stays, and the lease is renewed.
		good, _ := testkit.HGet(t, c, k.Claims, "a")
		tok := strconv.FormatInt(a.Claim, 10)
		for _, bad := range []string{
			"-0;m", "-1;m", "100.0000001;m", "100.01;m", "101;m", "1e2;m", "nan;m", "inf;m", "0x10;m",
			".5;m", "+5;m", " 5;m", "half;m", "5", "5;a\nb", "5;" + strings.Repeat("x", 511),
		} {
			lease, before := nextLease(), testkit.RedisNow(t, c)
			args := []string{strconv.FormatInt(lease.Milliseconds(), 10), "1", "a", tok, "1", bad}
			lost, err := script.Extend.Exec(t.Context(), script.NewConn(c, nil), []string{k.Active, k.Claims, k.Dead, k.State, k.Cancelled}, args).ToArray()
			if err != nil || len(lost) != 0 {
				t.Errorf("report %q: lost %d, %v; want the report dropped and the lease renewed", bad, len(lost), err)
				continue
			}
			renewed(strconv.Quote(bad), before, lease)
			if v, _ := testkit.HGet(t, c, k.Claims, "a"); v != good {
				t.Errorf("report %q: claims value %q, want the last good report kept: %q", bad, v, good)
			}
		}
	})
}
