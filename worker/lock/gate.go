package lock

import (
	"context"
	"sync"
	"time"
)

// A gate lets one write of one field's holds on one lock (an acquire, a
// release, a give-back of stale holds) run at a time in this process, each
// to its end. Redis counts a field's holds and the Client counts the same
// holds in its entry; writes applied in the order the Client learns of
// them keep the two counts equal, so a reply can tell when Redis counts
// holds that no Held here stands for, and which ones may be given back
// (see stale.go). Renewals change no count and are not gated.
type gate struct {
	turn  chan struct{} // holds a token while a write runs
	users int           // writes waiting or running; the gate is dropped at 0
}

// enter waits for ref's gate. It returns ctx's cause, having entered
// nothing, when ctx ends first (or had ended).
func (c *Client) enter(ctx context.Context, ref lockRef) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	c.mu.Lock()
	g := c.gates[ref]
	if g == nil {
		g = &gate{turn: make(chan struct{}, 1)}
		c.gates[ref] = g
	}
	g.users++
	c.mu.Unlock()
	select {
	case g.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		c.leaveGate(ref, g)
		c.mu.Unlock()
		return context.Cause(ctx)
	}
}

// exit lets the next write of ref through.
func (c *Client) exit(ref lockRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gates[ref]
	<-g.turn
	c.leaveGate(ref, g)
}

// leaveGate drops a user of g. c.mu must be held.
func (c *Client) leaveGate(ref lockRef, g *gate) {
	if g.users--; g.users == 0 {
		delete(c.gates, ref)
	}
}

// gated runs op in ref's gate, which the caller has entered, and exits the
// gate when op returns. A script once sent runs whether or not its caller
// still waits, and the next write of ref must know its outcome, so op runs
// to its end under a context detached from ctx (each call in it bounded by
// a lease): when ctx ends first, gated returns ctx's cause at once and
// hands op's result, when it comes, to abandon (nil: nothing to undo).
func gated[T any](ctx context.Context, c *Client, ref lockRef, op func(context.Context) (T, error), abandon func(context.Context, T)) (T, error) {
	if ctx.Done() == nil { // ctx cannot end: nothing is ever abandoned
		defer c.exit(ref)
		return op(ctx)
	}
	type result struct {
		v   T
		err error
	}
	results := make(chan result, 1)
	var mu sync.Mutex
	left := false // the caller returned without the result
	detached := context.WithoutCancel(ctx)
	go func() {
		defer c.exit(ref)
		v, err := op(detached)
		mu.Lock()
		gone := left
		if !gone {
			results <- result{v, err}
		}
		mu.Unlock()
		if gone && abandon != nil {
			abandon(detached, v)
		}
	}()
	select {
	case r := <-results:
		return r.v, r.err
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case r := <-results: // it finished meanwhile: nothing is abandoned
		return r.v, r.err
	default:
	}
	left = true
	var zero T
	return zero, context.Cause(ctx)
}

// sendAcquire runs the acquire script, bounded by the lease it sets.
func (c *Client) sendAcquire(ctx context.Context, ref lockRef, lease time.Duration) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, lease)
	defer cancel()
	return c.b.acquire(ctx, ref.name, ref.field, lease)
}

// sendRelease runs the release script, bounded by the lease it sets.
func (c *Client) sendRelease(ctx context.Context, ref lockRef, lease time.Duration) (releaseResult, error) {
	ctx, cancel := context.WithTimeout(ctx, lease)
	defer cancel()
	return c.b.release(ctx, ref.name, Channel(ref.name), ref.field, lease)
}
