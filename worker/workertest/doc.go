// Package workertest is the test kit for programs that use Courier: it is
// for users writing the tests of their own handlers and producers, with
// no Redis server, no Docker and no options to know.
//
//   - Run runs a handler on a job made in the test, as a Daemon would, and
//     returns what it did (an Attempt): its outcome classified as the
//     daemon classifies it (Done, Retried, Dead, Snoozed, with the delay
//     and the error; a panic is a failed attempt), its result
//     (Job.SetResult, decoded by ResultJSON) and every progress report
//     (Job.ReportProgress). Job.SetResult and Job.ReportProgress work as
//     in a Daemon, limits and validation included.
//   - New starts an in-memory store (miniredis) that runs Courier's real
//     Lua scripts, with a ready worker.Client (Store.Client), an
//     admin.Client (Store.Admin), a Config with test timings
//     (Store.Config) and a clock the test moves (Store.Now,
//     Store.Advance). NewRedis is the same store as a bare
//     rueidis.Client, on the real clock.
//   - RequireEnqueued, RequireNotEnqueued and Enqueued assert what a
//     producer enqueued, read back through the store, with matchers
//     (Queue, Kind, Payload, PayloadEqual, RunAt, Priority, UniqueKey,
//     State, ID, Header).
//   - Store.Drain runs every due job with a Registry's handlers on a real
//     worker.Daemon, until nothing is due or running, and returns every
//     attempt; Store.Start runs a Daemon for the rest of the test.
//
// This is a module of its own (github.com/seed-53d105c9/courier/worker/workertest),
// so that the embedded store stays out of the programs that import
// package worker: require it in your tests' module only.
//
// The package worker/internal/workertest is another audience's: the
// harness of Courier's own tests, against real Redis servers. This one is
// for you.
//
// See docs/testing.md for complete tests to start from.
package workertest
