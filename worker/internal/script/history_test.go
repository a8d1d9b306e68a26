package script

import (
	"strconv"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestLagBuckets runs record.lua's lag_bucket on Redis at and around every
// bound of the history's lag buckets (worker.LagBounds): a bound belongs to
// its own bucket, one ms more to the next, and the last bucket is open.
func TestLagBuckets(t *testing.T) {
	t.Parallel()
	helpers, err := loadHelpers()
	if err != nil {
		t.Fatal(err)
	}
	bounds := []int64{1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000, 300000}
	lags := []int64{-5, 0}
	want := []int64{0, 0}
	for i, b := range bounds {
		lags = append(lags, b, b+1)
		want = append(want, int64(i), int64(i+1))
	}
	lags, want = append(lags, 1e12), append(want, int64(len(bounds)))
	args := make([]string, len(lags))
	for i, l := range lags {
		args[i] = strconv.FormatInt(l, 10)
	}
	body := "-- " + testkit.Prefix(t) + "\nlocal out = {}\nfor i = 1, #ARGV do out[i] = lag_bucket(tonumber(ARGV[i])) end\nreturn out\n"
	s := newScript("lag_bucket", assemble(body, helpers), Once)
	got, err := s.Exec(t.Context(), NewConn(testkit.Single(t), nil), nil, args).AsIntSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lags) {
		t.Fatalf("%d buckets for %d lags: %v", len(got), len(lags), got)
	}
	for i := range lags {
		if got[i] != want[i] {
			t.Errorf("lag_bucket(%d) = %d, want %d", lags[i], got[i], want[i])
		}
	}
}
