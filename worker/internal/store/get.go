package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Set names the sorted set a job is in.
type Set string

// The sets a job can be in. SetNone means a record without a set, which the
// scripts never leave behind.
const (
	SetDue    Set = "due"
	SetActive Set = "active"
	SetDead   Set = "dead"
	SetNone   Set = "none"
)

// Snapshot is one job as Get found it.
type Snapshot struct {
	Record Record
	Set    Set
	Score  time.Time // run-at (due), lease deadline (active), time of death (dead), finish time (completed) or cancel time (cancelled)
	Now    time.Time // the Redis clock when it was read
}

// ErrNotFound reports that a job does not exist.
var ErrNotFound = errors.New("job not found")

// Get reads job id of queue. It returns ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, queue, id string) (Snapshot, error) {
	k := s.Keys(queue)
	keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.DueHigh, k.DueLow, k.Opts, k.Completed, k.Results, k.Cancelled, k.KeyIDs}
	vals, err := script.Get.Exec(ctx, s.c, keys, []string{id}).ToArray()
	if rueidis.IsRedisNil(err) {
		return Snapshot{}, ErrNotFound
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("get %s job %q: %w", queue, id, err)
	}
	if len(vals) != 9 {
		return Snapshot{}, fmt.Errorf("get %s job %q: unexpected reply of %d values", queue, id, len(vals))
	}
	raw, _ := vals[0].ToString()
	claim, _ := vals[1].AsInt64()
	set, _ := vals[2].ToString()
	score, _ := vals[3].AsInt64()
	now, _ := vals[4].AsInt64()
	st, _ := vals[5].ToString()
	opts, _ := vals[6].ToString()
	worker, _ := vals[7].ToString()
	result, _ := vals[8].ToString()
	snap := Snapshot{Set: Set(set), Now: time.UnixMilli(now)}
	if score >= 0 {
		snap.Score = time.UnixMilli(score)
	}
	snap.Record, err = decodeJob(id, raw, st)
	if err == nil {
		err = decodeOpts(&snap.Record, opts)
	}
	if snap.Set == SetActive && claim > 0 {
		snap.Record.Claim = claim
		snap.Record.Worker, snap.Record.Progress = splitWorker(worker)
		snap.Record.Attempt++ // the running attempt
	}
	if snap.Set == SetCompleted && err == nil {
		completed(&snap.Record, result)
	}
	return snap, err
}
