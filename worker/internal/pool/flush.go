package pool

import (
	"context"
	"time"
)

// ReportEvery bounds how long a progress report (Run.Report) waits before
// it is sent: readers (Get, the operator's listings) see it within about
// this long. A process sends at most one flush call per ReportEvery,
// whatever the number of handlers reporting, and none while nothing is
// reported.
const ReportEvery = 900 * time.Millisecond

// flushLoop sends the pending progress reports of every run, in one
// batched lease extension (extendRound) of those runs only, at most once
// per ReportEvery: at once when the last flush was longer ago than that,
// else when ReportEvery has passed since it. A report that arrives while a
// flush is in flight waits for the next. The regular extension (extendLoop)
// sends what is pending as well, so a flush finds nothing when it came
// first.
func (p *Pool) flushLoop(ctx context.Context) {
	var last time.Time
	t := time.NewTimer(0)
	<-t.C
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.reportSig:
		}
		if wait := ReportEvery - time.Since(last); wait > 0 {
			t.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		last = time.Now()
		p.extendRound(ctx, true)
	}
}
