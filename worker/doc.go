// Package worker is Courier's Go library: put jobs on named queues in Redis,
// to run now or at a given time, and run them with Go handlers — with leases,
// retries with backoff and a dead set.
//
// # Producing
//
// A Client enqueues jobs and inspects them:
//
//	rdb, _ := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
//	client, _ := worker.NewClient(rdb, worker.Config{})
//	id, err := client.Enqueue(ctx, worker.JobSpec{
//		Queue:   "emails",
//		Payload: []byte(`{"to":"ada@example.com"}`),
//		Delay:   10 * time.Minute,
//	})
//
// Give a job an ID to make enqueueing idempotent: while a job with that id
// exists in the queue, enqueueing it again returns ErrDuplicate and changes
// nothing. EnqueueMany sends up to 1,000 jobs per script call.
//
// # Consuming
//
// Register a Handler per queue in a Registry and run a Daemon:
//
//	reg := worker.NewRegistry()
//	reg.Register("emails", worker.JSONHandler(sendEmail), worker.QueueOptions{Concurrency: 20})
//	d, _ := worker.NewDaemon(rdb, reg, worker.Config{})
//	err := d.Run(ctx) // until ctx ends; then drains
//
// A handler returns nil when the job is done. Any other error spends the
// attempt and schedules a retry after the queue's RetryPolicy (exponential
// backoff with full jitter by default) until MaxAttempts (default 25) are
// used, after which the job moves to the dead set with its last error.
// Permanent(err) moves it to the dead set at once. Snooze(d) puts it back,
// due in d, without spending an attempt. A panic is recovered, logged with
// its stack, and counts as a failed attempt.
//
// # Guarantees
//
//   - At least once: a job is deleted only when its handler returned nil.
//     If a worker dies, the job's lease (Config.Lease) expires and the job is
//     recovered with its attempt counted, so a job that kills its worker
//     every time ends in the dead set instead of looping. Handlers should be
//     idempotent.
//   - Never early: jobs are due by the Redis server's clock; a job never
//     starts before its run-at.
//   - Stale workers are harmless: every claim gets a new token, and a
//     worker whose claim is stale cannot ack, retry or extend the job.
//   - Graceful stop: when Run's context ends, claiming stops and running
//     jobs get Config.ShutdownTimeout to finish; the rest are cancelled (their
//     context's cause is ErrShutdown) and put back due without spending an
//     attempt.
//
// # Redis
//
// Every key of a queue shares the hash tag {queue}, so the same code runs on
// a single Redis and on Redis Cluster. All job changes happen in Lua scripts
// (package lua) that use the Redis clock and do bounded work per call.
// Persistence is Redis's: run it with appendonly yes and maxmemory-policy
// noeviction.
package worker
