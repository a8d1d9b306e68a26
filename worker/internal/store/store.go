// Package store is the only code that reads and writes job data in Redis: the
// key builders, one typed wrapper per script in package lua, and the record
// codec. Callers validate names and values first; the scripts validate again
// before their first write, because Lua does not roll back.
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/lua"
	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// MaxBatch is the most jobs one script call handles; larger batches are split.
const MaxBatch = 1000

// Scripts are loaded once per process. Read-only scripts may be retried by
// rueidis; the others may not, so each is written to be safe to repeat. The
// read-only ones are sent as EVALSHA, not EVALSHA_RO: the embedded store of
// courier dev refuses TIME in a read-only script.
var (
	scriptClaim   = rueidis.NewLuaScript(lua.Claim)
	scriptAck     = rueidis.NewLuaScript(lua.Ack)
	scriptRetry   = rueidis.NewLuaScript(lua.Retry)
	scriptSnooze  = rueidis.NewLuaScript(lua.Snooze)
	scriptCancel  = rueidis.NewLuaScript(lua.Cancel)
	scriptRequeue = rueidis.NewLuaScript(lua.Requeue)
	scriptGet     = rueidis.NewLuaScriptRetryable(lua.Get)
	scriptStats   = rueidis.NewLuaScriptRetryable(lua.Stats)

	// Enqueue and Extend send several calls per round trip (package script).
	scriptEnqueueMulti = script.New(lua.Enqueue, false)
	scriptExtendMulti  = script.New(lua.Extend, false)
)

// Store runs Courier's scripts against one Redis deployment under one prefix.
type Store struct {
	c      rueidis.Client
	prefix string
}

// New returns a Store using client c and key prefix.
func New(c rueidis.Client, prefix string) *Store { return &Store{c: c, prefix: prefix} }

// Keys returns the keys of queue.
func (s *Store) Keys(queue string) Keys { return QueueKeys(s.prefix, queue) }

// NewJob is one job to enqueue. Exactly one of At (absolute run-at) and Delay
// applies: At when it is not zero.
type NewJob struct {
	ID          string
	At          time.Time
	Delay       time.Duration
	MaxAttempts int           // 0 = the queue's default
	Timeout     time.Duration // 0 = the queue's default
	Payload     []byte
}

// Enqueue adds jobs to queue, MaxBatch per script call, all calls in one
// round trip. added[i] reports whether jobs[i] was written; false means its
// id exists and that job was left untouched. On error some batches may have
// been written: enqueueing the same ids again is safe.
func (s *Store) Enqueue(ctx context.Context, queue string, jobs []NewJob) (added []bool, err error) {
	k := s.Keys(queue)
	var calls []script.Call
	for start := 0; start < len(jobs); start += MaxBatch {
		batch := jobs[start:min(start+MaxBatch, len(jobs))]
		args := make([]string, 0, 2+len(batch)*6)
		args = append(args, k.Wake, strconv.Itoa(len(batch)))
		for _, j := range batch {
			at := int64(-1)
			if !j.At.IsZero() {
				at = j.At.UnixMilli()
			}
			args = append(args, j.ID, strconv.FormatInt(at, 10), strconv.FormatInt(j.Delay.Milliseconds(), 10),
				strconv.Itoa(j.MaxAttempts), strconv.FormatInt(j.Timeout.Milliseconds(), 10), string(j.Payload))
		}
		calls = append(calls, script.Call{Keys: []string{k.Jobs, k.Due}, Args: args})
	}
	added = make([]bool, 0, len(jobs))
	for i, res := range scriptEnqueueMulti.ExecMulti(ctx, s.c, calls...) {
		flags, err := res.AsIntSlice()
		if err != nil {
			return added, fmt.Errorf("enqueue batch %d: %w", i+1, err)
		}
		for _, f := range flags {
			added = append(added, f == 1)
		}
	}
	return added, nil
}

// Claimed is the result of one claim.
type Claimed struct {
	Now time.Time // the Redis clock when the claim ran
	// Next is when a claim may find work again: the run-at of the earliest
	// job still due, or, when Limited, the time the rate window frees
	// capacity. Zero when no job is due.
	Next time.Time
	// Limited reports that the rate limit is used up and holds back a job
	// due by Next: claims before Next take nothing.
	Limited bool
	Corrupt int // records that did not decode and were moved to dead
	Jobs    []Record
	// Bad holds claimed jobs whose records the script accepted but Go could
	// not decode; the caller should fail them to the dead set.
	Bad []BadRecord
}

// BadRecord is a claimed job whose record did not decode.
type BadRecord struct {
	Token Token
	Err   error
}

// Rate is a queue's rate limit: at most N jobs claimed, by every process
// together, in any window of length Per (a sliding window). The zero Rate
// is no limit.
type Rate struct {
	N   int
	Per time.Duration // whole milliseconds
}

// Limits of a Rate, as lua/claim.lua enforces them.
const (
	MaxRateN   = 1_000_000
	MaxRatePer = 366 * 24 * time.Hour
)

// Claim moves up to n due jobs of queue to active with the given lease and
// returns them with their attempt spent. It ignores any rate limit.
func (s *Store) Claim(ctx context.Context, queue string, n int, lease time.Duration) (Claimed, error) {
	return s.ClaimLimited(ctx, queue, n, lease, Rate{})
}

// ClaimLimited is Claim within the queue's rate limit: it takes no more jobs
// than limit leaves room for, counting the claims of every process.
func (s *Store) ClaimLimited(ctx context.Context, queue string, n int, lease time.Duration, limit Rate) (Claimed, error) {
	k := s.Keys(queue)
	rateN, rateMs := "0", "0"
	if limit != (Rate{}) {
		rateN, rateMs = strconv.Itoa(limit.N), strconv.FormatInt(limit.Per.Milliseconds(), 10)
	}
	vals, err := scriptClaim.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.Rate},
		[]string{strconv.Itoa(min(n, MaxBatch)), strconv.FormatInt(lease.Milliseconds(), 10), rateN, rateMs}).ToArray()
	if err != nil {
		return Claimed{}, fmt.Errorf("claim %s: %w", queue, err)
	}
	if len(vals) < 3 || (len(vals)-3)%4 != 0 {
		return Claimed{}, fmt.Errorf("claim %s: unexpected reply of %d values", queue, len(vals))
	}
	var head [3]int64
	for i := range head {
		if head[i], err = vals[i].AsInt64(); err != nil {
			return Claimed{}, fmt.Errorf("claim %s: reply value %d: %w", queue, i+1, err)
		}
	}
	c := Claimed{Now: time.UnixMicro(head[0]), Corrupt: int(head[2])}
	switch next := head[1]; {
	case next >= 0:
		c.Next = time.UnixMilli(next)
	case next < -1: // negated: when the rate window frees capacity
		c.Next, c.Limited = time.UnixMilli(-next), true
	}
	c.Jobs = make([]Record, 0, (len(vals)-3)/4)
	for i := 3; i < len(vals); i += 4 {
		id, _ := vals[i].ToString()
		runAtStr, _ := vals[i+1].ToString()
		runAt, _ := strconv.ParseInt(runAtStr, 10, 64)
		claim, _ := vals[i+2].AsInt64()
		raw, _ := vals[i+3].ToString()
		r, err := DecodeRecord(id, raw)
		r.Claim, r.Attempt, r.RunAt = claim, r.Attempt+1, time.UnixMilli(runAt)
		if err != nil {
			c.Bad = append(c.Bad, BadRecord{Token: Token{ID: id, Claim: r.Claim}, Err: err})
			continue
		}
		c.Jobs = append(c.Jobs, r)
	}
	return c, nil
}

// tokenArgs appends id, claim pairs to args.
func tokenArgs(args []string, toks []Token) []string {
	for _, t := range toks {
		args = append(args, t.ID, strconv.FormatInt(t.Claim, 10))
	}
	return args
}

// Ack deletes finished jobs of queue and returns how many were deleted; jobs
// not active under the given claim are skipped.
func (s *Store) Ack(ctx context.Context, queue string, toks []Token) (int, error) {
	k := s.Keys(queue)
	done := 0
	for start := 0; start < len(toks); start += MaxBatch {
		batch := toks[start:min(start+MaxBatch, len(toks))]
		n, err := scriptAck.Exec(ctx, s.c, []string{k.Jobs, k.Active, k.Claims}, tokenArgs(nil, batch)).AsInt64()
		if err != nil {
			return done, fmt.Errorf("ack %s: %w", queue, err)
		}
		done += int(n)
	}
	return done, nil
}

// Retry returns a failed job to due after delay, recording errText as its
// last error. It reports false when the token is stale.
func (s *Store) Retry(ctx context.Context, queue string, tok Token, delay time.Duration, errText string) (bool, error) {
	return s.retry(ctx, queue, tok, "due", delay, errText)
}

// Kill moves a failed job to the dead set, recording errText as its last
// error. It reports false when the token is stale.
func (s *Store) Kill(ctx context.Context, queue string, tok Token, errText string) (bool, error) {
	return s.retry(ctx, queue, tok, "dead", 0, errText)
}

func (s *Store) retry(ctx context.Context, queue string, tok Token, to string, delay time.Duration, errText string) (bool, error) {
	k := s.Keys(queue)
	n, err := scriptRetry.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims},
		[]string{k.Wake, tok.ID, strconv.FormatInt(tok.Claim, 10), to, strconv.FormatInt(delay.Milliseconds(), 10), errText}).AsInt64()
	if err != nil {
		return false, fmt.Errorf("move %s job %q to %s: %w", queue, tok.ID, to, err)
	}
	return n == 1, nil
}

// Snooze returns active jobs to due at now+delay without spending their
// attempt, and returns how many moved.
func (s *Store) Snooze(ctx context.Context, queue string, toks []Token, delay time.Duration) (int, error) {
	k := s.Keys(queue)
	moved := 0
	for start := 0; start < len(toks); start += MaxBatch {
		batch := toks[start:min(start+MaxBatch, len(toks))]
		args := tokenArgs([]string{k.Wake, strconv.FormatInt(delay.Milliseconds(), 10)}, batch)
		n, err := scriptSnooze.Exec(ctx, s.c, []string{k.Due, k.Active, k.Claims}, args).AsInt64()
		if err != nil {
			return moved, fmt.Errorf("snooze %s: %w", queue, err)
		}
		moved += int(n)
	}
	return moved, nil
}

// Extend renews the leases of running jobs, grouped by queue, in one round
// trip. It returns, per queue, the tokens whose lease could not be renewed
// because the job is no longer held under that claim. A failed call does not
// stop the others: their results are returned with the joined errors.
func (s *Store) Extend(ctx context.Context, byQueue map[string][]Token, lease time.Duration) (lost map[string][]Token, err error) {
	var queues []string
	var calls []script.Call
	leaseArg := strconv.FormatInt(lease.Milliseconds(), 10)
	for queue, toks := range byQueue {
		k := s.Keys(queue)
		for start := 0; start < len(toks); start += MaxBatch {
			batch := toks[start:min(start+MaxBatch, len(toks))]
			queues = append(queues, queue)
			calls = append(calls, script.Call{Keys: []string{k.Active, k.Claims}, Args: tokenArgs([]string{leaseArg}, batch)})
		}
	}
	lost = make(map[string][]Token)
	var errs []error
	for i, res := range scriptExtendMulti.ExecMulti(ctx, s.c, calls...) {
		vals, err := res.AsStrSlice()
		if err == nil && len(vals)%2 != 0 {
			err = fmt.Errorf("unexpected reply of %d values", len(vals))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("extend %s: %w", queues[i], err))
			continue
		}
		for j := 0; j < len(vals); j += 2 {
			claim, _ := strconv.ParseInt(vals[j+1], 10, 64)
			lost[queues[i]] = append(lost[queues[i]], Token{ID: vals[j], Claim: claim})
		}
	}
	return lost, errors.Join(errs...)
}

// CancelResult says what Cancel found.
type CancelResult int

// Cancel outcomes.
const (
	CancelNotFound CancelResult = iota // no such job
	Cancelled                          // deleted before it started
	CancelRunning                      // running: untouched
	CancelDead                         // in the dead set: untouched
)

// Cancel deletes a job of queue that has not started.
func (s *Store) Cancel(ctx context.Context, queue, id string) (CancelResult, error) {
	k := s.Keys(queue)
	n, err := scriptCancel.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead}, []string{id}).AsInt64()
	if err != nil {
		return CancelNotFound, fmt.Errorf("cancel %s job %q: %w", queue, id, err)
	}
	switch n {
	case 1:
		return Cancelled, nil
	case -1:
		return CancelRunning, nil
	case -2:
		return CancelDead, nil
	}
	return CancelNotFound, nil
}

// Requeue moves dead jobs of queue back to due now with their attempts reset.
// moved[i] reports whether ids[i] was in the dead set.
func (s *Store) Requeue(ctx context.Context, queue string, ids []string) (moved []bool, err error) {
	k := s.Keys(queue)
	moved = make([]bool, 0, len(ids))
	for start := 0; start < len(ids); start += MaxBatch {
		batch := ids[start:min(start+MaxBatch, len(ids))]
		flags, err := scriptRequeue.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Dead}, append([]string{k.Wake}, batch...)).AsIntSlice()
		if err != nil {
			return moved, fmt.Errorf("requeue %s: %w", queue, err)
		}
		for _, f := range flags {
			moved = append(moved, f == 1)
		}
	}
	return moved, nil
}

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
	Score  time.Time // run-at (due), lease deadline (active) or time of death (dead)
	Now    time.Time // the Redis clock when it was read
}

// ErrNotFound reports that a job does not exist.
var ErrNotFound = errors.New("job not found")

// Get reads job id of queue. It returns ErrNotFound when there is none.
func (s *Store) Get(ctx context.Context, queue, id string) (Snapshot, error) {
	k := s.Keys(queue)
	vals, err := scriptGet.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims}, []string{id}).ToArray()
	if rueidis.IsRedisNil(err) {
		return Snapshot{}, ErrNotFound
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("get %s job %q: %w", queue, id, err)
	}
	if len(vals) != 5 {
		return Snapshot{}, fmt.Errorf("get %s job %q: unexpected reply of %d values", queue, id, len(vals))
	}
	raw, _ := vals[0].ToString()
	claim, _ := vals[1].AsInt64()
	set, _ := vals[2].ToString()
	score, _ := vals[3].AsInt64()
	now, _ := vals[4].AsInt64()
	snap := Snapshot{Set: Set(set), Now: time.UnixMilli(now)}
	if score >= 0 {
		snap.Score = time.UnixMilli(score)
	}
	snap.Record, err = DecodeRecord(id, raw)
	if snap.Set == SetActive && claim > 0 {
		snap.Record.Claim = claim
		snap.Record.Attempt++ // the running attempt
	}
	return snap, err
}

// Stats counts the jobs of one queue by state.
type Stats struct {
	Ready     int64 // due now
	Scheduled int64 // due later
	Active    int64
	Dead      int64
}

// Stats counts the jobs of queue by state.
func (s *Store) Stats(ctx context.Context, queue string) (Stats, error) {
	k := s.Keys(queue)
	n, err := scriptStats.Exec(ctx, s.c, []string{k.Due, k.Active, k.Dead}, nil).AsIntSlice()
	if err != nil {
		return Stats{}, fmt.Errorf("stats %s: %w", queue, err)
	}
	if len(n) != 5 {
		return Stats{}, fmt.Errorf("stats %s: unexpected reply of %d values", queue, len(n))
	}
	return Stats{Ready: n[0], Scheduled: n[1], Active: n[2], Dead: n[3]}, nil
}

// AddQueues records queue names in the set of known queues.
func (s *Store) AddQueues(ctx context.Context, queues ...string) error {
	if len(queues) == 0 {
		return nil
	}
	if err := s.c.Do(ctx, s.c.B().Sadd().Key(QueuesKey(s.prefix)).Member(queues...).Build()).Error(); err != nil {
		return fmt.Errorf("record queue names: %w", err)
	}
	return nil
}

// Queues returns the known queue names.
func (s *Store) Queues(ctx context.Context) ([]string, error) {
	names, err := s.c.Do(ctx, s.c.B().Smembers().Key(QueuesKey(s.prefix)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	return names, nil
}
