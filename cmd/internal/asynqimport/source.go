package asynqimport

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"
)

// asynq's key layout (its internal/base): every key of a queue carries the
// queue's hash tag.
const (
	allQueuesKey = "asynq:queues" // set of queue names
)

func queuePrefix(q string) string     { return "asynq:{" + q + "}:" }
func taskKey(q, id string) string     { return queuePrefix(q) + "t:" + id }
func stateKey(q, state string) string { return queuePrefix(q) + state }
func uniquePrefix(q string) string    { return queuePrefix(q) + "unique:" }

// The states the import moves, in the order it moves them: pending is a
// list (LPUSH at the head, taken from the tail), the others sorted sets
// scored by Unix seconds (run-at for scheduled and retry, the time of
// archiving for archived). Active tasks are never moved.
var states = []string{"pending", "scheduled", "retry", "archived"}

// entry is one task id read from a state's key, with its score (0 for
// pending).
type entry struct {
	id    string
	score int64
}

// page reads up to n entries of a state from offset off, oldest first:
// for pending, counted from the list's tail.
func page(ctx context.Context, c rueidis.Client, q, state string, off, n int64) ([]entry, error) {
	key := stateKey(q, state)
	if state == "pending" {
		ids, err := c.Do(ctx, c.B().Lrange().Key(key).Start(-(off + n)).Stop(-(off + 1)).Build()).AsStrSlice()
		if err != nil {
			return nil, fmt.Errorf("read asynq's %s: %w", key, err)
		}
		out := make([]entry, len(ids))
		for i := range ids {
			out[i] = entry{id: ids[len(ids)-1-i]} // the tail first
		}
		return out, nil
	}
	zs, err := c.Do(ctx, c.B().Zrange().Key(key).Min(strconv.FormatInt(off, 10)).Max(strconv.FormatInt(off+n-1, 10)).Withscores().Build()).AsZScores()
	if err != nil {
		return nil, fmt.Errorf("read asynq's %s: %w", key, err)
	}
	out := make([]entry, len(zs))
	for i, z := range zs {
		out[i] = entry{id: z.Member, score: int64(z.Score)}
	}
	return out, nil
}

// stored is what the import reads of a task besides its state entry: its
// hash (asynq:{q}:t:<id>: msg, state, unique_key) and, for a task that
// holds a uniqueness lock, the lock's remaining time in ms (0: none).
type stored struct {
	msg, state string
	found      bool
	uniqueKey  string
	uniqueMs   int64
}

// readTasks reads the hashes of ids, then the locks of those that hold
// one, in two round trips.
func readTasks(ctx context.Context, c rueidis.Client, q string, ids []entry) ([]stored, error) {
	cmds := make(rueidis.Commands, len(ids))
	for i, e := range ids {
		cmds[i] = c.B().Hmget().Key(taskKey(q, e.id)).Field("msg", "state", "unique_key").Build()
	}
	out := make([]stored, len(ids))
	var locks rueidis.Commands
	var lockOf []int
	for i, r := range c.DoMulti(ctx, cmds...) {
		vals, err := r.ToArray()
		if err != nil {
			return nil, fmt.Errorf("read asynq task %s: %w", ids[i].id, err)
		}
		msg, err := vals[0].ToString()
		if err != nil {
			continue // no hash: the task left while it was read
		}
		out[i].msg, out[i].found = msg, true
		out[i].state, _ = vals[1].ToString()
		out[i].uniqueKey, _ = vals[2].ToString()
		if out[i].uniqueKey != "" {
			locks = append(locks, c.B().Get().Key(out[i].uniqueKey).Build(), c.B().Pttl().Key(out[i].uniqueKey).Build())
			lockOf = append(lockOf, i)
		}
	}
	if len(locks) == 0 {
		return out, nil
	}
	res := c.DoMulti(ctx, locks...)
	for k, i := range lockOf {
		holder, _ := res[2*k].ToString()
		ttl, err := res[2*k+1].AsInt64()
		if err != nil {
			return nil, fmt.Errorf("read asynq's uniqueness lock %s: %w", out[i].uniqueKey, err)
		}
		if holder == ids[i].id && ttl > 0 { // the lock is this task's and expires
			out[i].uniqueMs = ttl
		}
	}
	return out, nil
}

// removeScript deletes tasks from asynq once Courier holds them: each
// only while its hash still says the state it was read in and its id is
// still in that state's key, with its hash and the uniqueness lock it
// holds. One call per batch; every key is of the queue's hash tag.
// KEYS[1] the state's key; KEYS[1 + i] the hash of ARGV[2 + i]
// ARGV[1] the state; then the ids. Returns how many it deleted.
var removeScript = rueidis.NewLuaScript(`
local removed = 0
for i = 2, #ARGV do
  local id, tk = ARGV[i], KEYS[i]
  if redis.call('HGET', tk, 'state') == ARGV[1] then
    local n
    if ARGV[1] == 'pending' then n = redis.call('LREM', KEYS[1], -1, id) else n = redis.call('ZREM', KEYS[1], id) end
    if n > 0 then
      local uk = redis.call('HGET', tk, 'unique_key')
      if uk and uk ~= '' and redis.call('GET', uk) == id then redis.call('DEL', uk) end
      redis.call('DEL', tk)
      removed = removed + 1
    end
  end
end
return removed
`)

// remove deletes ids of state from asynq's queue q (removeScript) and
// returns how many it deleted.
func remove(ctx context.Context, c rueidis.Client, q, state string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	keys := make([]string, 0, 1+len(ids))
	keys = append(keys, stateKey(q, state))
	for _, id := range ids {
		keys = append(keys, taskKey(q, id))
	}
	args := append([]string{state}, ids...)
	n, err := removeScript.Exec(ctx, c, keys, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("delete imported tasks from asynq's %s: %w", stateKey(q, state), err)
	}
	return int(n), nil
}

// counts reads the size of each state of q, and of active.
func counts(ctx context.Context, c rueidis.Client, q string) (map[string]int64, error) {
	names := append(append([]string(nil), states...), "active")
	cmds := make(rueidis.Commands, len(names))
	for i, s := range names {
		if s == "pending" || s == "active" {
			cmds[i] = c.B().Llen().Key(stateKey(q, s)).Build()
		} else {
			cmds[i] = c.B().Zcard().Key(stateKey(q, s)).Build()
		}
	}
	out := map[string]int64{}
	for i, r := range c.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("count asynq's %s: %w", stateKey(q, names[i]), err)
		}
		out[names[i]] = n
	}
	return out, nil
}

// queues returns asynq's queue names (its asynq:queues set).
func queues(ctx context.Context, c rueidis.Client) ([]string, error) {
	qs, err := c.Do(ctx, c.B().Smembers().Key(allQueuesKey).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("read asynq's queue set %s: %w", allQueuesKey, err)
	}
	return qs, nil
}
