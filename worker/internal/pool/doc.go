// Package pool runs claimed jobs: per queue, a claim loop that takes as many
// due jobs as there are free slots in one script call, a fixed set of worker
// goroutines and an acker; for the whole process one lease extender and
// one lease watch.
//
// A job is held from its claim until its outcome is stored: while its
// handler runs and while its ack or retry waits for Redis, its lease is
// renewed every Lease/3 (one call for every queue, each queue's result
// applied on its own). A write that fails is tried again with a backoff
// until it is stored, Redis refuses it as a bad call, or Redis reports the
// lease lost; so a blip shorter than the lease neither drops an ack nor
// re-runs a finished job. Each queue acks on its own, so one unreachable
// Cluster node delays no other queue.
//
// The lease watch cancels a running job (cause Config.LeaseLostCause)
// lock.Margin(Lease) before its lease can end in Redis when no renewal was
// confirmed: a worker cut off from Redis stops before another process may
// recover and start the job.
//
// Idle queues do not poll: a claim loop sleeps until the earliest of a wake-up
// message (published by the scripts when a job becomes the earliest due), the
// run-at of the queue's head job, and a slow safety poll.
//
// A paused queue (store.Pause) is idle too: its claims take nothing and
// report it, and the loop sleeps as for an empty queue, so a pause costs
// one claim per wake-up, head timer or safety poll and no more. The
// resume publishes a wake-up, on which every process claims at once.
//
// A queue with a rate limit claims only what the claim script's sliding
// window (kept in Redis, shared by every process) leaves room for. When the
// window is full and jobs are due, the claim loop sleeps until the time the
// script says it frees capacity; wake-ups, polls and freed slots do not make
// it claim before then.
//
// Stopping (the Run context ends):
//
//	claim loops stop ──► running jobs finish (up to ShutdownTimeout)
//	     └─ timeout ──► job contexts cancelled (cause Config.ShutdownCause)
//	                    ──► up to ReturnGrace for handlers to return
//	                    ──► jobs still held go back to due without spending an attempt
//	                    ──► acks flushed (leases still renewed) ──► Run returns nil
//
// Nothing claimed is lost: a job is acked, retried, snoozed, killed or handed
// back, and if the process dies first its lease expires and it is recovered.
package pool
