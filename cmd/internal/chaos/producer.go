package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Producer timing: a batch every tick; each Redis call gets callTimeout;
// an enqueue whose outcome is unknown is settled within settleTimeout,
// looked up again at most settleWaitMax apart (so that the producer is
// back soon after Redis is: a failover's figures are Courier's, not the
// producer's).
const (
	producerTick  = 50 * time.Millisecond
	callTimeout   = 5 * time.Second
	settleTimeout = 60 * time.Second
	settleWaitMax = 250 * time.Millisecond
)

// Producer enqueues jobs with known ids at a steady rate through the Go
// client, as users do, and records in the ledger which enqueues Redis
// acknowledged. A call that fails is settled before the next: the ids are
// looked up (Get, then the receiver), and those Redis does not hold are
// enqueued again under the same ids (a stored id is refused as a
// duplicate, so nothing is enqueued twice). While it settles, it enqueues
// nothing new: a producer blocked by its Redis.
type Producer struct {
	client     *worker.Client
	queue      string
	ledger     *Ledger
	rate       int               // jobs per second
	durability worker.Durability // asked of every enqueue
	rng        *rand.Rand
	seq        int
	keyed      bool // give each job a job key (Scenario.KeyCap)
}

// chaosKeys is how many job keys a scenario with keys spreads its jobs
// over.
const chaosKeys = 20

// newProducer returns a producer of rate jobs per second whose enqueues
// ask for d; seed makes the handling times of its jobs repeatable.
func newProducer(client *worker.Client, queue string, l *Ledger, rate int, d worker.Durability, seed uint64) *Producer {
	return &Producer{client: client, queue: queue, ledger: l, rate: rate, durability: d, rng: rand.New(rand.NewPCG(seed, 12))}
}

// Run enqueues until ctx ends; settling a failed call may outlast ctx by up
// to settleTimeout (settle uses base for that).
func (p *Producer) Run(ctx, base context.Context) {
	tick := time.NewTicker(producerTick)
	defer tick.Stop()
	owed := 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		owed += float64(p.rate) * producerTick.Seconds()
		n := int(owed)
		owed -= float64(n)
		if n == 0 {
			continue
		}
		specs := p.next(n)
		cctx, cancel := context.WithTimeout(base, callTimeout)
		res, err := p.client.EnqueueMany(cctx, specs)
		cancel()
		if err != nil {
			p.ledger.ProducerError()
			p.settle(base, specs, err)
			continue
		}
		p.record(specs, res, false)
	}
}

// next returns n new job specs: ids j000001, ...; 88 in 100 take
// 20-200 ms to handle, 10 take 0.5-2 s (longer than a blip), 2 take 4-6 s
// (longer than the lease, so their leases must be renewed).
func (p *Producer) next(n int) []worker.JobSpec {
	specs := make([]worker.JobSpec, n)
	for i := range specs {
		p.seq++
		var ms int
		switch k := p.rng.IntN(100); {
		case k < 2:
			ms = 4000 + p.rng.IntN(2001)
		case k < 12:
			ms = 500 + p.rng.IntN(1501)
		default:
			ms = 20 + p.rng.IntN(181)
		}
		specs[i] = worker.JobSpec{
			Queue:      p.queue,
			ID:         fmt.Sprintf("j%06d", p.seq),
			Payload:    fmt.Appendf(nil, `{"ms":%d}`, ms),
			Durability: p.durability,
		}
		if p.keyed {
			// A quarter of the jobs are one key's, which its cap holds
			// back when jobs pile up (after a kill, a blip); the rest
			// spread over the other keys.
			k := 1 + p.rng.IntN(chaosKeys-1)
			if p.rng.IntN(4) == 0 {
				k = 0
			}
			specs[i].Key = fmt.Sprintf("tenant-%02d", k)
		}
	}
	return specs
}

// record books the results of an enqueue call that returned: a job
// stored and, when asked, confirmed by replicas; stored but not confirmed
// (ErrNotReplicated); or, when resolved (sent again after a failed call),
// a duplicate: stored by the failed call after all, confirmed or not.
func (p *Producer) record(specs []worker.JobSpec, res []worker.EnqueueResult, resolved bool) {
	now := time.Now()
	var ok, unsure []string
	for i, r := range res {
		switch {
		case r.Err == nil:
			ok = append(ok, specs[i].ID)
		case errors.Is(r.Err, worker.ErrNotReplicated):
			ok, unsure = append(ok, specs[i].ID), append(unsure, specs[i].ID)
		case errors.Is(r.Err, worker.ErrDuplicate):
			ok, unsure = append(ok, specs[i].ID), append(unsure, specs[i].ID)
			if !resolved { // the ids are new: a duplicate is a defect
				p.ledger.ProducerError()
			}
		default:
			p.ledger.ProducerError()
		}
	}
	p.ledger.Unconfirmed(unsure...)
	p.ledger.Acked(now, resolved, ok...)
}

// settle finds out which of specs Redis stored after a failed call, and
// enqueues the others again, until every one is acknowledged or ctx ends.
// Even a refusal (OOM) is looked up: only Redis knows what it wrote.
func (p *Producer) settle(ctx context.Context, specs []worker.JobSpec, err error) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	wait := 50 * time.Millisecond
	pending := specs
	for {
		if errors.Is(err, worker.ErrRedisOOM) {
			p.ledger.Refused(1)
		}
		var unknown bool
		pending, unknown = p.lookUp(ctx, pending)
		if len(pending) == 0 {
			return
		}
		if !pause(ctx, wait) {
			break
		}
		wait = min(2*wait, settleWaitMax)
		if unknown { // Redis did not answer: look again
			continue
		}
		cctx, cc := context.WithTimeout(ctx, callTimeout)
		var res []worker.EnqueueResult
		res, err = p.client.EnqueueMany(cctx, pending)
		cc()
		if err == nil {
			p.record(pending, res, true)
			return
		}
		p.ledger.ProducerError()
	}
	ids := make([]string, len(pending))
	for i, s := range pending {
		ids[i] = s.ID
	}
	p.ledger.Abandoned(ids...)
}

// lookUp books the specs Redis holds (Get finds them, or the receiver has
// had them: delivered and deleted) and returns the rest; unknown when a
// lookup failed, so that the rest may be stored too.
func (p *Producer) lookUp(ctx context.Context, specs []worker.JobSpec) (rest []worker.JobSpec, unknown bool) {
	now := time.Now()
	var stored []string
	for i, s := range specs {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := p.client.Get(cctx, p.queue, s.ID)
		cancel()
		switch {
		case err == nil:
			stored = append(stored, s.ID)
		// Get first, then the receiver: a job acked (deleted) between the
		// two was delivered before its ack.
		case errors.Is(err, worker.ErrNotFound) && p.ledger.Delivered(s.ID):
			stored = append(stored, s.ID)
		case errors.Is(err, worker.ErrNotFound):
			rest = append(rest, s)
		default:
			p.ledger.ProducerError()
			p.ledger.Unconfirmed(stored...)
			p.ledger.Acked(now, true, stored...)
			return append(rest, specs[i:]...), true
		}
	}
	// Found stored: no replica is known to have confirmed them.
	p.ledger.Unconfirmed(stored...)
	p.ledger.Acked(now, true, stored...)
	return rest, false
}
