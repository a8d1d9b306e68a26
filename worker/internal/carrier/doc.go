// Package carrier runs a queue's carrier duties on the one process that leads
// the queue: recovering jobs whose lease expired, trimming the dead set and
// the completed set, sampling the queue's sizes and pause flag for the metrics, and firing
// periodic jobs.
//
// Leadership of a queue is the queue's leader lock, <prefix>:{<queue>}:leader,
// a worker/lock lock in watchdog mode. Every process that serves the queue
// runs an elector for it; the ones that do not hold the lock wait on the
// lock's unlock channel, so a released lock is taken within milliseconds.
//
//	          Acquire (waits on the unlock channel)
//	follower ───────────────────────────────────────► leader: duties run
//	   ▲                                                 │
//	   │  lock lost (renewal found it gone), expired     │
//	   │  (no renewal confirmed within lease − margin),  │
//	   └──── or a fenced duty call said "not leader" ────┤
//	                                                     │ ctx ends (SIGTERM)
//	                              released at once ◄─────┘  (duties stopped first)
//
// Whatever ends a term, the elector releases its hold before it competes
// again: a hold that ended here (expired) may still be counted in Redis,
// and giving it back wakes the followers at once and keeps the next term
// to one hold, so its release at shutdown hands over at once too.
//
// Each duty is a small loop started when the process gains leadership and
// stopped, through the leadership's context, when it loses it. Every duty's
// script checks in Redis, in the same call and hash slot as its writes, that
// the caller's field is still in the leader hash (fencing): a leader that was
// deposed without knowing it yet changes nothing, and learns it from the
// reply.
package carrier
