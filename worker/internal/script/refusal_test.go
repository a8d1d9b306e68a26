package script

import (
	"fmt"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// TestRefusalsByFirstWord has Redis answer each error reply and checks
// what metrics.Refusal makes of it, wrapped or not, and which of them the
// script layer sends again.
func TestRefusalsByFirstWord(t *testing.T) {
	t.Parallel()
	c := NewConn(testkit.Single(t), nil)
	reply := newScript("reply", "return redis.error_reply(ARGV[1])", Once)
	for _, tc := range []struct {
		reply, reason string
		resent        bool
	}{
		{"OOM command not allowed when used memory > 'maxmemory'.", metrics.RefusedOOM, false},
		{"READONLY You can't write against a read only replica.", metrics.RefusedReadOnly, false},
		{"LOADING Redis is loading the dataset in memory", metrics.RefusedLoading, true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", metrics.RefusedTryAgain, true},
		{"BUSY Redis is busy running a script.", metrics.RefusedBusy, true},
		{"MASTERDOWN Link with MASTER is down", metrics.RefusedMasterDown, true},
		{"CLUSTERDOWN The cluster is down", metrics.RefusedClusterDown, true},
		{"NOREPLICAS Not enough good replicas to write.", metrics.RefusedNoReplicas, false},
		{"MISCONF Errors writing to the AOF file", metrics.RefusedMisconf, false},
		{"BUSYKEY Target key name already exists.", "", false},
		{"BUSYGROUP Consumer Group name already exists", "", false},
		{"ERR courier: bad argument", "", false},
		{"LOADINGX not a refusal", "", false},
	} {
		// The layer would resend the passing ones: send the script plainly.
		err := c.client.Do(t.Context(), reply.eval(c, reply.plain, nil, []string{tc.reply})).Error()
		if err == nil {
			t.Fatalf("%q: no error", tc.reply)
		}
		if got := metrics.Refusal(err); got != tc.reason {
			t.Errorf("Refusal(%q) = %q, want %q", err, got, tc.reason)
		}
		if got := metrics.Refusal(fmt.Errorf("claim q: %w", err)); got != tc.reason {
			t.Errorf("Refusal of wrapped %q = %q, want %q", err, got, tc.reason)
		}
		if got := passing[metrics.Refusal(err)]; got != tc.resent {
			t.Errorf("%q resent: %v, want %v", tc.reply, got, tc.resent)
		}
	}
	if metrics.Refusal(nil) != "" || metrics.Refusal(fmt.Errorf("i/o timeout")) != "" {
		t.Error("Refusal of nil or a network error is not empty")
	}
}
