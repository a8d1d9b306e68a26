package pool

import (
	"context"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// runKey is the context key under which a job's run context holds its run.
type runKey struct{}

// runCtx is the parent of a run's context: the pool's base context, with
// the run as the value of runKey. It lives inside the run, so the value
// costs no allocation of its own, and its Done is the base's, so the run's
// cancel context joins the base's cancellation directly.
type runCtx struct {
	context.Context
	r *run
}

// Value returns the run for runKey and asks the base for any other key.
func (c *runCtx) Value(key any) any {
	if key == (runKey{}) {
		return c.r
	}
	return c.Context.Value(key)
}

// Run is a handler's handle on its running attempt: what it reports goes
// out with the pool's next lease extension (extendLoop), in the call that
// renews the lease, so a report costs Redis no call of its own. The zero
// Run ignores reports.
type Run struct{ r *run }

// RunOf returns the Run of the job whose run context ctx is, or derives
// from; the zero Run for any other context.
func RunOf(ctx context.Context) Run {
	r, _ := ctx.Value(runKey{}).(*run)
	return Run{r}
}

// Running reports whether h is a running attempt's (not the zero Run).
func (h Run) Running() bool { return h.r != nil }

// Report records p as the attempt's progress. Reports made between two
// extensions replace each other: only the last is sent. It never blocks.
func (h Run) Report(p store.Progress) {
	if h.r != nil {
		h.r.progress.Store(&p)
	}
}

// SetResult records b as what the attempt returns, kept with the job by a
// queue that retains its finished jobs (Queue.Retain) when the attempt is
// acked. The last call wins.
func (h Run) SetResult(b []byte) {
	if h.r != nil {
		h.r.result.Store(&b)
	}
}

// renewal is r as the extension sends it, taking its pending progress.
func (r *run) renewal() store.Renewal {
	return store.Renewal{Token: r.rec.Token(), Progress: r.progress.Swap(nil)}
}

// unsent puts back a progress report whose extension failed, unless the
// handler reported again meanwhile, so the next extension carries it.
func (r *run) unsent(rn store.Renewal) {
	if rn.Progress != nil {
		r.progress.CompareAndSwap(nil, rn.Progress)
	}
}
