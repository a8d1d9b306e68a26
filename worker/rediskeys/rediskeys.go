// Package rediskeys names the Redis keys Courier writes, for Courier's own
// tools (the benchmark, the chaos harness, the tests) and for the curious
// who back up, inspect or delete a queue by hand. It makes no stability
// promise: the key layout may change between any two versions (see
// docs/upgrading.md for what a rolling upgrade may mix). Applications and
// operators' tools use packages worker and worker/admin instead.
package rediskeys

import "github.com/seed-53d105c9/courier/worker/internal/store"

// Queue names the Redis keys that hold one queue (or one partition of a
// partitioned queue) under a key prefix. They share one hash slot: every
// key carries the hash tag {<queue>}.
type Queue struct {
	Jobs   string // hash: id → the job's record
	Due    string // zset: id → run-at (ms) of the jobs of normal priority
	Active string // zset: id → lease deadline (ms) of the running jobs
	Dead   string // zset: id → time of death (ms)
	Claims string // hash: id → claim token of a running job
	State  string // hash: id → attempts, max attempts and last error
	Rate   string // zset: the rate limit's window
	Paused string // string: "1" while the queue is paused
	// DueHigh and DueLow are the due sets of the high and low priority
	// levels.
	DueHigh, DueLow string
	Opts            string // hash: id → a job's priority, unique key and window
	// Unique holds the unique keys and retained ids with their holders;
	// UniqueExp their windows' ends.
	Unique, UniqueExp string
	Settings          string // hash: the queue's record (layout, id retention, pause)
	// History counts each minute's jobs succeeded, retried and died and
	// the lag of those started; HistoryIndex lists its minutes.
	History, HistoryIndex string
	// Completed and Results hold the finished jobs a queue retains
	// (worker.QueueOptions.RetainCompleted) and their results.
	Completed, Results string
	// Cancelled holds the cancelled jobs (admin.Client.Cancel): id → cancel
	// time, ms. Their records stay in Jobs until trimmed, requeued or purged.
	Cancelled string
	// Job keys (worker.JobSpec.Key, lua/keys.lua): KeyIDs holds the keyed
	// jobs that wait (id → run-at, ms), KeyDue the same by key, level and
	// run-at, KeyReady the keys that may start a job, KeyWait those that
	// may later, KeyState the slots each key holds ("r:<key>" → running
	// jobs) and whether it is parked at its cap, KeyCount each key's
	// waiting jobs, KeyConf the keys' own caps and weights.
	KeyIDs, KeyDue, KeyReady, KeyWait, KeyState, KeyCount, KeyConf string
}

// All returns q's keys in the order of Queue's fields, for a tool that
// deletes, copies or dumps them all.
func (q Queue) All() []string {
	return []string{q.Jobs, q.Due, q.Active, q.Dead, q.Claims, q.State, q.Rate, q.Paused,
		q.DueHigh, q.DueLow, q.Opts, q.Unique, q.UniqueExp, q.Settings, q.History, q.HistoryIndex,
		q.Completed, q.Results, q.Cancelled,
		q.KeyIDs, q.KeyDue, q.KeyReady, q.KeyWait, q.KeyState, q.KeyCount, q.KeyConf}
}

// QueueKeys returns the keys of queue under prefix: those of its partition
// 0, which are all of a queue never split.
func QueueKeys(prefix, queue string) Queue {
	k := store.QueueKeys(prefix, queue)
	return Queue{
		Jobs: k.Jobs, Due: k.Due, Active: k.Active, Dead: k.Dead, Claims: k.Claims, State: k.State,
		Rate: k.Rate, Paused: k.Paused, DueHigh: k.DueHigh, DueLow: k.DueLow, Opts: k.Opts,
		Unique: k.Unique, UniqueExp: k.UniqueExp, Settings: k.Settings, History: k.History,
		HistoryIndex: k.HistoryIndex, Completed: k.Completed, Results: k.Results,
		Cancelled: k.Cancelled,
		KeyIDs:    k.KeyIDs, KeyDue: k.KeyDue, KeyReady: k.KeyReady, KeyWait: k.KeyWait,
		KeyState: k.KeyState, KeyCount: k.KeyCount, KeyConf: k.KeyConf,
	}
}

// PartitionKeys returns the keys of partition i (0-based) of queue split
// into partitions; the zero Queue when i is not one of them. Partition 0's are
// QueueKeys(prefix, queue): a queue of one partition is laid out as before
// partitions existed. Partition i ≥ 1 has the hash tag "<queue>#<i>[.<k>]",
// k chosen so that the partitions are spaced evenly over the Cluster's
// 16,384 slots.
func PartitionKeys(prefix, queue string, partitions, i int) Queue {
	names := store.PartitionNames(queue, partitions)
	if i < 0 || i >= len(names) {
		return Queue{}
	}
	return QueueKeys(prefix, names[i])
}

// PartitionOf returns the partition, of partitions, that holds a job whose
// partition key is key: its job key when it has one, else its unique key,
// else its id. It is
// FNV-1a (64 bits) of key modulo partitions, so every producer and tool
// agrees on it.
func PartitionOf(key string, partitions int) int { return store.PartitionOf(key, partitions) }

// QueuesKey returns the key of the set of known queue names under prefix:
// the queues admin.Client.Queues lists, recorded when a worker.Client
// enqueues to a queue (at most once a minute) and when a Daemon starts
// serving one. It is not one of a queue's keys: a tool that deletes
// everything under a prefix deletes it as well.
func QueuesKey(prefix string) string { return store.QueuesKey(prefix) }

// PrefixesKey is the one key Courier writes outside its prefix: a zset of
// the key prefixes live daemons run on (member: a prefix; score: the Redis
// clock in ms of a daemon's last report on it), which
// admin.Client.CheckPrefix reads. A Redis user restricted to its prefix's
// keys (an ACL with ~<prefix>:*) needs this key as well, with TIME, ZADD,
// ZRANGEBYSCORE and ZREMRANGEBYSCORE.
const PrefixesKey = store.PrefixesKey
