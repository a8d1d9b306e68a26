// Package worker is Courier's Go library for applications: put jobs on
// named queues in Redis, to run now or at a given time, and run them with Go
// handlers — with leases, retries with backoff and a dead set. Operators'
// tools (lists, stats, triage, pause, cancel, the fleet) use package
// worker/admin; package worker/rediskeys names the keys.
//
// # Producing
//
// A Client enqueues jobs:
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
// or, in a service that does other work too, d.Start(ctx) and, at its
// end, d.Stop(ctx). Registry.Use adds middleware around every handler;
// Client.Use adds hooks that run on every job enqueued. A queue serves
// several kinds of job with a Kinds as its handler (JobSpec.Kind). Package
// worker/workertest unit-tests handlers and runs the scripts in memory.
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
//   - At least once: a job is deleted only when its handler returned nil;
//     a dead worker's job is recovered when its lease expires, the attempt
//     counted. Handlers should be idempotent.
//   - Never early: by the Redis clock, no job starts before its run-at.
//   - Stale workers are harmless: a worker whose claim is stale cannot ack,
//     retry or extend the job.
//   - Graceful stop: running jobs get Config.ShutdownTimeout to finish; the
//     rest go back due without spending an attempt.
//
// docs/guarantees.md details them, with the chaos suite that measures them.
//
// # Redis
//
// The same code runs on a single Redis and on Redis Cluster. Every job
// change is a Lua script on the Redis clock with bounded work per call. Run
// Redis with appendonly yes and maxmemory-policy noeviction.
package worker
