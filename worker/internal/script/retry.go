package script

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// Resending refused calls. Redis answers some calls with an error reply
// that says it did not run them, for a cause that passes by itself. Any
// script may then be sent again, Once scripts included: the call did
// nothing. rueidis resends these only for commands marked retryable (and
// LOADING only), so the script layer does it for every script.
//
//	TRYAGAIN     the keys' slot is migrating and the keys are split between
//	             the two nodes (claim always names keys that may not exist,
//	             such as the rate and dead sets, so it gets this for the
//	             whole migration)
//	LOADING      the server is loading its data set (a restart with a big AOF)
//	BUSY         another script runs beyond lua-time-limit
//	MASTERDOWN   a replica lost its master
//	CLUSTERDOWN  the cluster does not serve the slot (a failover in progress)
//
// MOVED and ASK are followed by rueidis itself, for every command. Other
// refusals (OOM, READONLY, NOREPLICAS, MISCONF) last until an operator
// acts: they are counted and returned, not resent.
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
