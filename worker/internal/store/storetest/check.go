package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// facts is a job as the cases compare it, times left out: the cases bound
// those against the backend's clock instead.
type facts struct {
	Set         store.Set
	Claim       int64
	Attempt     int
	MaxAttempts int
	Timeout     time.Duration
	LastError   string
	Payload     string
}

func factsOf(snap store.Snapshot) facts {
	r := snap.Record
	return facts{snap.Set, r.Claim, r.Attempt, r.MaxAttempts, r.Timeout, r.LastError, string(r.Payload)}
}

// is fails unless job id of q is as want says.
func (k *kit) is(id string, want facts) store.Snapshot {
	k.t.Helper()
	snap := k.get(id)
	if got := factsOf(snap); got != want {
		k.t.Errorf("job %s is %+v, want %+v", id, got, want)
	}
	return snap
}

// unchanged fails unless job id of q is as it was in before.
func (k *kit) unchanged(id string, before store.Snapshot) {
	k.t.Helper()
	after := k.get(id)
	if factsOf(after) != factsOf(before) || !after.Score.Equal(before.Score) {
		k.t.Errorf("job %s changed: %+v (score %v), was %+v (score %v)",
			id, factsOf(after), after.Score, factsOf(before), before.Score)
	}
}

// maxToken bounds claim tokens: Lua numbers are doubles, exact below 2^53.
const maxToken = 1 << 53

// claimed fails unless r is a claim of id in its attempt-th attempt, after
// the last error lastErr, under a claim token.
func claimed(t *testing.T, r store.Record, id string, attempt int, lastErr string) {
	t.Helper()
	if r.ID != id || r.Attempt != attempt || r.LastError != lastErr || r.Claim <= 0 || r.Claim >= maxToken {
		t.Errorf("claimed %+v, want %s in attempt %d after error %q, under a claim token in (0, 2^53)", r, id, attempt, lastErr)
	}
}

// within fails unless lo <= got <= hi.
func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo) || got.After(hi) {
		t.Errorf("%s = %v, want within [%v, %v]", what, got.UnixMilli(), lo.UnixMilli(), hi.UnixMilli())
	}
}

// sameTime fails unless got and want are the same instant.
func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got.UnixMilli(), want.UnixMilli())
	}
}

// sameTokens fails unless got and want hold the same tokens per queue, in
// order; a queue without tokens has no entry.
func sameTokens(t *testing.T, what string, got, want map[string][]store.Token) {
	t.Helper()
	same := len(got) == len(want)
	for queue, toks := range want {
		if g, ok := got[queue]; !ok || !slices.Equal(g, toks) {
			same = false
		}
	}
	if !same {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
