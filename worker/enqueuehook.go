package worker

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// EnqueueHook runs on each job a Client enqueues (Enqueue, EnqueueMany,
// Producer), before the job is validated: it may change spec, such as add
// a header (a tenant or a request id taken from ctx), and an error refuses
// the call, which then writes nothing. spec and its Headers are the call's
// copies, free to change; Payload's bytes are the caller's: replace the
// slice rather than write into it.
type EnqueueHook func(ctx context.Context, spec *JobSpec) error

// Use adds hooks that run, in the order given, on every job c enqueues
// from then on. Add them before c is shared; c stays safe for concurrent
// use.
func (c *Client) Use(hooks ...EnqueueHook) {
	c.hookMu.Lock()
	defer c.hookMu.Unlock()
	all := append(slices.Clone(c.hookList()), hooks...)
	c.hooks.Store(&all)
}

// hookList returns the hooks Use added.
func (c *Client) hookList() []EnqueueHook {
	if h := c.hooks.Load(); h != nil {
		return *h
	}
	return nil
}

// runHooks returns specs as the hooks left them, in a copy: the caller's
// specs and their headers are never changed. The first error of a hook
// refuses the whole call.
func (c *Client) runHooks(ctx context.Context, specs []JobSpec) ([]JobSpec, error) {
	hooks := c.hookList()
	if len(hooks) == 0 {
		return specs, nil
	}
	out := slices.Clone(specs)
	for i := range out {
		out[i].Headers = maps.Clone(out[i].Headers)
		for k, h := range hooks {
			if h == nil {
				return nil, fmt.Errorf("worker: enqueue hook %d is nil", k)
			}
			if err := h(ctx, &out[i]); err != nil {
				if len(out) == 1 {
					return nil, fmt.Errorf("enqueue hook %d refused the job: %w", k, err)
				}
				return nil, fmt.Errorf("enqueue hook %d refused specs[%d]: %w", k, i, err)
			}
		}
	}
	return out, nil
}
