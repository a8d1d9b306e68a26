package pool

import (
	"context"
	"errors"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// runValue is the context key under which a job's run context holds its
// run.
type runValue struct{}

// runCtx is the parent of a run's context: the pool's base context, with
// the run as the value of runValue. It lives inside the run, so the value
// costs no allocation of its own, and its Done is the base's, so the run's
// cancel context joins the base's cancellation directly.
type runCtx struct {
	context.Context
	r *run
}

// Value returns the run for runValue and asks the base for any other key.
func (c *runCtx) Value(key any) any {
	if key == (runValue{}) {
		return c.r
	}
	return c.Context.Value(key)
}

// Run is a handler's handle on its running attempt: what it reports goes
// out within ReportEvery, in the pool's next flush (flushLoop), which
// sends every run's pending report in one batched lease extension, or
// with the next regular extension (extendLoop) if that comes first: a
// report costs Redis no call of its own, and a process makes at most one
// flush call per ReportEvery however many handlers report. A Run may also
// carry a Recorder, which receives every report and result as well:
// package worker/workertest's harness runs a handler on a Run that has
// only a Recorder. The zero Run ignores reports.
type Run struct {
	r   *run
	rec Recorder
}

// Recorder receives what a handler reports and sets on its Run, call by
// call: the test harness's view of an attempt (package worker/workertest).
// Calls come from the handler's goroutines.
type Recorder interface {
	Report(p store.Progress)
	SetResult(b []byte)
}

// RunOf returns the Run of the job whose run context ctx is, or derives
// from; the zero Run for any other context.
func RunOf(ctx context.Context) Run {
	r, _ := ctx.Value(runValue{}).(*run)
	return Run{r: r}
}

// Recording returns h with rec receiving its reports and result too; on
// the zero Run, a Run that only rec receives, running for Running.
func (h Run) Recording(rec Recorder) Run {
	h.rec = rec
	return h
}

// Running reports whether h is a running attempt's (not the zero Run).
func (h Run) Running() bool { return h.r != nil || h.rec != nil }

// Report records p as the attempt's progress. Reports made between two
// sends replace each other: only the last is sent. It never blocks.
func (h Run) Report(p store.Progress) {
	if h.r != nil && h.r.progress.Swap(&p) == nil {
		signal(h.r.q.reportSig)
	}
	if h.rec != nil {
		h.rec.Report(p)
	}
}

// SetResult records b as what the attempt returns, kept with the job by a
// queue that retains its finished jobs (Queue.Retain) when the attempt is
// acked. The last call wins.
func (h Run) SetResult(b []byte) {
	if h.r != nil {
		h.r.result.Store(&b)
	}
	if h.rec != nil {
		h.rec.SetResult(b)
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

// answeredQueues names the queues whose extension call Redis answered with
// an error reply, in err (Store.Extend's); all reports an error reply that
// names no queue. Their progress reports are dropped, not sent again:
// Redis ran that call, or refused it, and would answer the same call the
// same way, so a report that made it fail, sent again with every round,
// would fail every renewal of the queue until its jobs' leases ran out. A
// call that got no answer (the network, a timeout) sends its reports
// again. A report is only information, and the handler's next one
// replaces it anyway.
func answeredQueues(err error) (queues map[string]bool, all bool) {
	if err == nil {
		return nil, false
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	queues = make(map[string]bool)
	for _, e := range errs {
		var re *rueidis.RedisError
		if !errors.As(e, &re) || re.IsNil() {
			continue
		}
		var qe *store.QueueError
		if !errors.As(e, &qe) {
			return nil, true
		}
		queues[qe.Queue] = true
	}
	return queues, false
}
