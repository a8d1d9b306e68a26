package script

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// passing holds the refusals whose cause passes by itself, which are resent
// whatever the script's Repeat; the rule is "Retries" in the package doc.
// TRYAGAIN lasts a whole slot migration for claim, which always names keys
// that may not exist (the rate and dead sets).
var passing = map[string]bool{
	metrics.RefusedTryAgain:    true,
	metrics.RefusedLoading:     true,
	metrics.RefusedBusy:        true,
	metrics.RefusedMasterDown:  true,
	metrics.RefusedClusterDown: true,
}

// The backoff between resends: retryFirst, doubling, at most retryMax.
const (
	retryFirst = 10 * time.Millisecond
	retryMax   = 250 * time.Millisecond
)

// backoff returns the wait before resend n+1 (n from 0).
func backoff(n int) time.Duration {
	return min(retryFirst<<min(n, 8), retryMax)
}

// retrying runs round, and again after backoff(n) each time it returns
// true (something is left to send), until it returns false or ctx ends.
func retrying(ctx context.Context, round func() bool) {
	for n := 0; round(); n++ {
		t := time.NewTimer(backoff(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// refused counts err under op when it is a refusal (metrics.Refusal), and
// reports whether the call is to be sent again: its cause passes.
func (c Conn) refused(op string, err error) bool {
	reason := metrics.Refusal(err)
	c.metrics.Refused(op, reason)
	return passing[reason]
}
