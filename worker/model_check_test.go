package worker_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The model's checks. The model asserts only what it knows for certain:
// a job it has seen no attempt of after its enqueue is still there; a job
// an attempt finished on a daemon that lived on is gone (acked) half a
// second later; windows are judged with a margin of 100 to 200 ms; ids
// and unique keys are compared only between jobs whose partition it knew
// (the layout settled at both enqueues), since docs/scaling.md allows them
// again in another partition while the layout changes.

// ackMargin is how long after its handler returned a job is surely acked.
const ackMargin = 500 * time.Millisecond

// unfinished reports that j has certainly not run yet: no attempt of its
// id was claimed after it was accepted, and it was not cancelled.
func (w *world) unfinished(j *mjob) bool {
	if j.cancelled {
		return false
	}
	for _, r := range w.runsOf(j.queue + "/" + j.id) {
		if r.claimed >= j.accepted.UnixMicro()-2000 {
			return false
		}
	}
	return true
}

// finishedAt returns when j's successful attempt ended, when it surely
// was acked by now (its daemon lived on for ackMargin after it), else
// false.
func (w *world) finishedAt(j *mjob, now time.Time) (time.Time, bool) {
	for _, r := range w.runsOf(j.queue + "/" + j.id) {
		if r.claimed < j.accepted.UnixMicro()-2000 || !r.done || !r.ok || now.Sub(r.ended) < ackMargin {
			continue
		}
		if w.cut(r) {
			continue // its ack may have died with its daemon
		}
		return r.ended, true
	}
	return time.Time{}, false
}

// holds reports that j certainly holds its unique key at now.
func (w *world) holds(j *mjob, now time.Time) bool {
	if w.unfinished(j) {
		return true
	}
	if j.window > 0 && !j.afterFinish && now.Before(j.accepted.Add(j.window-100*time.Millisecond)) {
		return true
	}
	return false
}

// released reports that j has certainly given its unique key up at now.
func (w *world) released(j *mjob, now time.Time) bool {
	var end time.Time
	if j.cancelled {
		end = time.UnixMicro(j.cancelledAt)
	} else {
		at, ok := w.finishedAt(j, now)
		if !ok {
			return false
		}
		end = at
	}
	if j.window > 0 {
		from := j.accepted.Add(200 * time.Millisecond) // enqueue's Redis time is before accepted
		if j.afterFinish {
			from = end.Add(ackMargin)
		}
		return now.After(from.Add(j.window))
	}
	return true
}

// checkEnqueued checks the outcome of one job of an enqueue sent at now:
// home is its partition if the model knew it ("" or "?" if not), retained
// the queue's settled id retention (-1: not settled).
func (w *world) checkEnqueued(q *mqueue, s worker.JobSpec, r worker.EnqueueResult, home string, retained time.Duration, now time.Time) {
	known := home != "" && home != "?"
	k := q.name + "/" + r.ID
	switch {
	case r.Err == nil:
		if js := w.jobs[k]; s.ID != "" && len(js) > 0 && known {
			last := js[len(js)-1]
			if last.home == home && w.unfinished(last) {
				w.violation("%s: id accepted while the job of that id waits to run", k)
			}
			if _, gone := w.finishedAt(last, now); gone && last.home == home && last.retained > 0 && retained > 0 {
				w.violation("%s: id accepted within its retention of %s", k, last.retained)
			}
		}
		if s.UniqueKey != "" && known {
			for _, o := range w.keys[q.name+"/"+s.UniqueKey] {
				if o.home == home && w.holds(o, now) {
					w.violation("%s: unique key %q accepted while job %s holds it", k, s.UniqueKey, o.id)
				}
			}
		}
	case errors.Is(r.Err, worker.ErrUniqueKeyHeld):
		i := slices.IndexFunc(w.keys[q.name+"/"+s.UniqueKey], func(o *mjob) bool { return o.id == r.ID })
		if i < 0 {
			w.violation("%s/%s: unique key %q said held by job %s, which never took it", q.name, s.ID, s.UniqueKey, r.ID)
		} else if o := w.keys[q.name+"/"+s.UniqueKey][i]; known && o.home == home && w.released(o, now) {
			w.violation("unique key %q of %s refused for job %s, which released it", s.UniqueKey, q.name, o.id)
		}
	case errors.Is(r.Err, worker.ErrDuplicate):
		js := w.jobs[k]
		if len(js) == 0 {
			w.violation("%s: refused as a duplicate, but no job of that id was ever accepted", k)
			return
		}
		if !known || retained != 0 {
			return
		}
		for _, o := range js {
			if o.home == "" || o.cancelled {
				return
			}
			if _, gone := w.finishedAt(o, now); o.home == home && !gone {
				return
			}
		}
		w.violation("%s: refused as a duplicate while every job of that id is gone and ids are not retained", k)
	default:
		w.violation("%s: enqueue refused: %v", k, r.Err)
	}
}

// checkRuns checks the attempts recorded since the last check: none was
// claimed while its queue was paused, or after its job was cancelled.
func (w *world) checkRuns() {
	w.mu.Lock()
	fresh := map[string][]mrun{}
	for k, rs := range w.runs {
		for _, r := range rs[w.checked[k]:] {
			fresh[k] = append(fresh[k], *r)
		}
		w.checked[k] = len(rs)
	}
	w.mu.Unlock()
	for k, rs := range fresh {
		name, id, _ := strings.Cut(k, "/")
		q := w.queue(name)
		js := w.jobs[k]
		for _, r := range rs {
			if q.paused && r.claimed >= q.pausedAt {
				w.violation("%s: attempt %d claimed while its queue is paused", k, r.attempt)
			}
			for _, p := range q.pauses {
				if r.claimed >= p[0] && r.claimed < p[1] {
					w.violation("%s: attempt %d claimed while its queue was paused", k, r.attempt)
				}
			}
			if len(js) == 1 && js[0].cancelled && r.claimed > js[0].cancelledAt {
				w.violation("%s: attempt %d claimed after the job was cancelled", k, r.attempt)
			}
			if len(js) == 0 && !strings.HasPrefix(id, "periodic:") {
				w.violation("%s: ran, but the model never saw it accepted", k)
			}
		}
	}
}

// checkOnce checks, once every job ran, that none was lost and none ran
// twice but where a daemon was killed before the outcome of an attempt
// was surely stored.
func (w *world) checkOnce() {
	for k, js := range w.jobs {
		want := 0
		kinds := map[string]bool{}
		for _, j := range js {
			if !j.cancelled && j.kind != modelUnserved {
				want++
			}
			kinds[j.kind] = true
		}
		ok, lived := 0, 0
		for _, r := range w.runsOf(k) {
			if !kinds[r.kind] || r.kind == modelUnserved {
				w.violation("%s: a handler ran it as kind %q; it was enqueued as %v (kind %q has no handler)", k, r.kind, kinds, modelUnserved)
			}
			if !r.ok {
				continue
			}
			ok++
			if !w.cut(r) {
				lived++
			}
		}
		if ok < want {
			w.violation("%s: %d job(s) accepted and not cancelled, %d ran to success: lost", k, want, ok)
		}
		if lived > len(js) {
			var runs []string
			for _, r := range w.runsOf(k) {
				runs = append(runs, fmt.Sprintf("attempt %d by daemon %d claimed %s ok=%t ended %s", r.attempt, r.daemon,
					time.UnixMicro(r.claimed).Format("15:04:05.000000"), r.ok, r.ended.Format("15:04:05.000000")))
			}
			w.violation("%s: %d job(s), %d successful attempts on daemons that were never killed: %s", k, len(js), lived, strings.Join(runs, "; "))
		}
	}
}

// checkCancelled checks that every job the model cancelled is in the
// state cancelled, by Get and by the operator's listing of the state
// across the queue's partitions (the dead set's default retention keeps
// them for the test's length), and that the listing holds no other job.
func (w *world) checkCancelled() {
	listed := map[string]bool{}
	for _, q := range w.queues {
		jobs, _ := workertest.ListAll(w.t, w.op, admin.JobListParams{Queue: q.name, State: worker.StateCancelled})
		for _, j := range jobs {
			listed[q.name+"/"+j.ID] = true
		}
	}
	want := 0
	for k, js := range w.jobs {
		if j := js[0]; len(js) == 1 && j.cancelled {
			want++
			got, err := w.op.Get(w.t.Context(), j.queue, j.id)
			switch {
			case err != nil:
				w.violation("%s: cancelled, then Get: %v", k, err)
			case got.State != worker.StateCancelled || got.FinishedAt.IsZero():
				w.violation("%s: cancelled, then in state %s (cancelled at %v)", k, got.State, got.FinishedAt)
			case !listed[k]:
				w.violation("%s: cancelled, yet not listed in the state cancelled", k)
			}
		}
	}
	if len(listed) != want {
		w.violation("%d jobs listed cancelled, the model cancelled %d", len(listed), want)
	}
}

// checkRate checks that no window of the limited queue's rate limit took
// more than its limit (claim times are the Redis clock's).
func (w *world) checkRate() {
	for _, q := range w.queues {
		if q.limit.N == 0 {
			continue
		}
		type claim struct {
			at     int64
			job    string
			daemon int
		}
		var claims []claim
		w.mu.Lock()
		for k, rs := range w.runs {
			if strings.HasPrefix(k, q.name+"/") {
				for _, r := range rs {
					claims = append(claims, claim{r.claimed, k, r.daemon})
				}
			}
		}
		w.mu.Unlock()
		slices.SortFunc(claims, func(a, b claim) int { return int(a.at - b.at) })
		// The claim time is the claim's token: a few µs after the clock
		// the window is counted on.
		window := q.limit.Per.Microseconds() - 1000
		j := 0
		for i := range claims {
			for j < len(claims) && claims[j].at < claims[i].at+window {
				j++
			}
			if j-i > q.limit.N {
				var in []string
				for _, c := range claims[i:j] {
					in = append(in, fmt.Sprintf("+%dµs %s by daemon %d", c.at-claims[i].at, c.job, c.daemon))
				}
				w.violation("%s: %d jobs claimed within %s under a limit of %d per %s, from %s (Redis clock): %s", q.name, j-i,
					time.Duration(window)*time.Microsecond, q.limit.N, q.limit.Per, time.UnixMicro(claims[i].at).Format("15:04:05.000000"), strings.Join(in, ", "))
				return
			}
		}
	}
}

// checkUnserved checks that every job of a kind no daemon serves ended
// dead, with an error naming its kind, and no handler ran it (checkOnce).
func (w *world) checkUnserved() {
	for k, js := range w.jobs {
		j := js[0]
		if len(js) != 1 || j.kind != modelUnserved || j.cancelled {
			continue
		}
		job, err := w.c.Get(w.t.Context(), j.queue, j.id)
		switch {
		case err != nil:
			w.violation("%s: a job of kind %q: Get = %v; want it dead", k, j.kind, err)
		case job.State != worker.StateDead || !strings.Contains(job.LastError, strconv.Quote(modelUnserved)):
			w.violation("%s: a job of kind %q is %s with last error %q; want dead, naming the kind", k, j.kind, job.State, job.LastError)
		}
	}
}

// checkKeys checks the job keys: no key ran more jobs at once than its cap
// but while it had jobs in two partitions (a change of the number of
// partitions moved its home, and jobs of it stayed behind); a job
// whose handler said worker.KeyLimited spent no attempt for it; and once
// every job ran, no key holds a slot or waits in any partition of any
// layout the queue had.
func (w *world) checkKeys() {
	w.mu.Lock()
	for _, o := range w.keyOver {
		if !o.spread {
			w.violation("key %s ran %d jobs at once at %s; its cap is %d", o.key, o.running, o.at.Format("15:04:05.000000"), w.queue(strings.SplitN(o.key, "/", 2)[0]).keyCap)
		}
	}
	w.mu.Unlock()
	for k, js := range w.jobs {
		if len(js) != 1 || js[0].jobKey == "" { // one job of the id, with a key
			continue
		}
		for _, r := range w.runsOf(k) {
			if r.payload == "limit-once" && r.attempt > 1 && !w.anyCut(k) {
				w.violation("%s: attempt %d after a worker.KeyLimited, which spends none", k, r.attempt)
			}
		}
	}
	for _, q := range w.queues {
		if q.keyCap == 0 {
			continue
		}
		for n := 1; n <= 4; n++ {
			for i := range n {
				k := rediskeys.PartitionKeys(w.cfg.Prefix, q.name, n, i)
				for f, v := range testkit.HGetAll(w.t, w.rdb, k.KeyState) {
					if strings.HasPrefix(f, "r:") || strings.HasPrefix(f, "p:") {
						w.violation("%s: after every job ran, %s holds %s = %s (a slot leaked)", q.name, k.KeyState, f, v)
					}
				}
				n, err := w.rdb.Do(w.t.Context(), w.rdb.B().Zcard().Key(k.KeyIDs).Build()).AsInt64()
				if err != nil || n != 0 {
					w.violation("%s: after every job ran, %s holds %d keyed jobs (%v)", q.name, k.KeyIDs, n, err)
				}
			}
		}
	}
}

// anyCut reports whether an attempt of k may have lost its outcome to a
// kill -9 (its next attempt then counts one more).
func (w *world) anyCut(k string) bool {
	for _, r := range w.runsOf(k) {
		if w.cut(r) {
			return true
		}
	}
	return false
}
