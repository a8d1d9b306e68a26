package worker

import "fmt"

// Middleware wraps a Handler with code that runs around each attempt:
// logging, a value taken from the job's headers into the context, a panic
// policy. It returns the Handler the Daemon calls; next is the handler it
// wraps, to call or not.
type Middleware func(next Handler) Handler

// Use adds middleware for every queue of r, registered before or after
// the call. The first given is the outermost: Use(a, b) runs a, then b,
// then the queue's handler. The Daemon wraps the handlers when NewDaemon
// builds it, inside its own tracing, metrics, timeout and panic recovery:
// a middleware runs within the attempt's span and timeout, and a panic it
// does not recover is a failed attempt. For one queue only, wrap its
// handler at Register: r.Register("emails", mw(h), opts).
func (r *Registry) Use(mw ...Middleware) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.middleware = append(r.middleware, mw...)
}

// wrapped returns the registrations of r with every handler wrapped in
// r's middleware; it fails on a nil middleware, or one that returns a nil
// Handler.
func (r *Registry) wrapped() (map[string]registration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]registration, len(r.queues))
	for name, reg := range r.queues {
		for i := len(r.middleware) - 1; i >= 0; i-- {
			mw := r.middleware[i]
			if mw == nil {
				return nil, fmt.Errorf("worker: Registry.Use: middleware %d is nil", i)
			}
			reg.handler = mw(reg.handler)
			if isNil(reg.handler) {
				return nil, fmt.Errorf("worker: Registry.Use: middleware %d returned a nil Handler for queue %q", i, name)
			}
		}
		out[name] = reg
	}
	return out, nil
}
