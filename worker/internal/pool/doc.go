// Package pool runs claimed jobs: per queue, a claim loop that takes as many
// due jobs as there are free slots in one script call, a fixed set of worker
// goroutines, and for the whole process one lease extender and one acker.
//
// Idle queues do not poll: a claim loop sleeps until the earliest of a wake-up
// message (published by the scripts when a job becomes the earliest due), the
// run-at of the queue's head job, and a slow safety poll.
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
//	                    ──► acks flushed ──► Run returns nil
//
// Nothing claimed is lost: a job is acked, retried, snoozed, killed or handed
// back, and if the process dies first its lease expires and it is recovered.
package pool
