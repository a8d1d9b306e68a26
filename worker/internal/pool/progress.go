package pool

import (
	"context"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// runKey is the context key under which a job's run context holds its run.
type runKey struct{}

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

// Report records p as the attempt's progress. Reports made between two
// extensions replace each other: only the last is sent. It never blocks.
func (h Run) Report(p store.Progress) {
	if h.r != nil {
		h.r.progress.Store(&p)
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
