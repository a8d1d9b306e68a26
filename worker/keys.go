package worker

import "github.com/seed-53d105c9/courier/worker/internal/store"

// QueueKeys returns the Redis keys that hold the jobs of queue under prefix
// (the jobs, claims and state hashes, the due, active and dead sets, and the
// rate limit window), its pause flag (Client.Pause), the due sets of the high
// and low priority levels, the options of jobs that have a priority or a
// unique key, the unique keys and retained ids with their windows, the
// queue's settings (id retention), its per-minute history with the index
// of its minutes (Client.History), and the completed set with the results
// of the finished jobs it retains (QueueOptions.RetainCompleted), in that
// order, for tools that back up, inspect or delete a queue. They share one
// hash slot.
func QueueKeys(prefix, queue string) []string {
	k := store.QueueKeys(prefix, queue)
	return []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused,
		k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings, k.History, k.HistoryIndex,
		k.Completed, k.Results}
}

// QueuesKey returns the Redis key of the set of known queue names under
// prefix: the queues Client.Queues lists, recorded when a Client enqueues
// to a queue (at most once a minute) and when a Daemon starts serving one.
// A Daemon forgets, within the hour, a queue that holds no job and that no
// process serves. It is not one
// of a queue's keys (QueueKeys): a tool that deletes everything under a
// prefix deletes it as well.
func QueuesKey(prefix string) string { return store.QueuesKey(prefix) }
