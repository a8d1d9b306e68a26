package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

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
	// Paused reports that the queue is paused (Store.Pause): the claim took
	// nothing and changed nothing, whatever is due; Next is zero. A
	// resume publishes a wake-up.
	Paused  bool
	Corrupt int // records that did not decode and were moved to dead
	// Weight is the partition's share when a process's claims take turns
	// over a queue's partitions (ClaimOptions.Weigh; else 1): 1 without job
	// keys; with them, the weights of the keys ready to start a job
	// summed, plus 1 while unkeyed jobs are due (lua/claim.lua). At least 1.
	Weight int
	Jobs   []Record
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

// claimHead is how many values claim.lua returns before the jobs, and
// claimWidth how many per job.
const (
	claimHead  = 4
	claimWidth = 5
)

// claimPaused is claim.lua's next_ms when the queue is paused.
const claimPaused = -2

// Claim moves up to n due jobs of queue to active with the given lease and
// returns them with their attempt spent. It ignores any rate limit.
func (s *Store) Claim(ctx context.Context, queue string, n int, lease time.Duration) (Claimed, error) {
	return s.ClaimLimited(ctx, queue, n, lease, Rate{})
}

// ClaimLimited is Claim within the queue's rate limit: it takes no more jobs
// than limit leaves room for, counting the claims of every process.
func (s *Store) ClaimLimited(ctx context.Context, queue string, n int, lease time.Duration, limit Rate) (Claimed, error) {
	return s.ClaimWith(ctx, queue, n, lease, ClaimOptions{Rate: limit})
}

// ClaimOptions are the queue's settings a claim applies.
type ClaimOptions struct {
	Rate Rate
	// Weights, when set, share each claim among the priority levels that
	// have jobs due, in proportion (lua/claim.lua); the zero value is
	// strict priority: a higher level first, always.
	Weights Weights
	// Process is the claiming process's id, recorded with each job's claim
	// (Record.Worker); "" records none. At most 256 bytes, without '@'.
	Process string
	// KeyCap is the default cap of a job key: at most this many jobs of
	// one key run at once, across every process (lua/keys.lua); a key's
	// own cap (SetKeyCap) replaces it. 0 = none. At most MaxKeyCap.
	KeyCap int
	// KeyRate is the default rate limit of a job key: at most N jobs of one
	// key start in any window Per, across every process; a key's own limit
	// (SetKeyLimits) replaces it. The zero Rate is none.
	KeyRate Rate
	// Weigh asks for the partition's weight (Claimed.Weight): its claims
	// take turns with the other partitions of its queue. Without it the
	// weight is 1, and a queue of one partition pays nothing for it.
	Weigh bool
}

// weighArg is ClaimOptions.Weigh as claim.lua's ARGV[9] takes it.
func weighArg(on bool) string {
	if on {
		return "1"
	}
	return ""
}

// keyArg is the rate as claim.lua's ARGV[8] and key_conf.lua's ARGV[5]
// take it: "<n>;<ms>", "" for none.
func (r Rate) keyArg() string {
	if r == (Rate{}) {
		return ""
	}
	return strconv.Itoa(r.N) + ";" + strconv.FormatInt(r.Per.Milliseconds(), 10)
}

// MaxKeyCap is the largest cap of a job key.
const MaxKeyCap = 1_000_000

// Weights are the shares of the high, normal and low priority levels, each
// 0 to MaxWeight, not all 0; the zero Weights is strict priority.
type Weights struct{ High, Normal, Low int }

// MaxWeight is the largest weight of a level.
const MaxWeight = 1000

func (w Weights) arg() string {
	if w == (Weights{}) {
		return ""
	}
	return strconv.Itoa(w.High) + "," + strconv.Itoa(w.Normal) + "," + strconv.Itoa(w.Low)
}

// ClaimWith is Claim with the queue's rate limit and priority weights.
func (s *Store) ClaimWith(ctx context.Context, queue string, n int, lease time.Duration, o ClaimOptions) (Claimed, error) {
	limit := o.Rate
	k := s.Keys(queue)
	rateN, rateMs := "0", "0"
	if limit != (Rate{}) {
		rateN, rateMs = strconv.Itoa(limit.N), strconv.FormatInt(limit.Per.Milliseconds(), 10)
	}
	vals, err := script.Claim.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex, k.Settings,
		k.KeyIDs, k.KeyDue, k.KeyReady, k.KeyWait, k.KeyState, k.KeyCount, k.KeyConf},
		[]string{strconv.Itoa(min(n, MaxBatch)), strconv.FormatInt(lease.Milliseconds(), 10), rateN, rateMs, o.Weights.arg(), o.Process, strconv.Itoa(o.KeyCap), o.KeyRate.keyArg(), weighArg(o.Weigh)}).ToArray()
	if err != nil {
		return Claimed{}, fmt.Errorf("claim %s: %w", queue, err)
	}
	if len(vals) < claimHead || (len(vals)-claimHead)%claimWidth != 0 {
		return Claimed{}, fmt.Errorf("claim %s: unexpected reply of %d values", queue, len(vals))
	}
	var head [claimHead]int64
	for i := range head {
		if head[i], err = vals[i].AsInt64(); err != nil {
			return Claimed{}, fmt.Errorf("claim %s: reply value %d: %w", queue, i+1, err)
		}
	}
	c := Claimed{Now: time.UnixMicro(head[0]), Corrupt: int(head[2]), Weight: max(int(head[3]), 1)}
	switch next := head[1]; {
	case next >= 0:
		c.Next = time.UnixMilli(next)
	case next == claimPaused:
		c.Paused = true
	case next < claimPaused: // negated: when the rate window frees capacity
		c.Next, c.Limited = time.UnixMilli(-next), true
	}
	c.Jobs = make([]Record, 0, (len(vals)-claimHead)/claimWidth)
	for i := claimHead; i < len(vals); i += claimWidth {
		id, _ := vals[i].ToString()
		runAtStr, _ := vals[i+1].ToString()
		level := ""
		if runAtStr != "" && (runAtStr[0] == 'h' || runAtStr[0] == 'l') {
			level, runAtStr = runAtStr[:1], runAtStr[1:]
		}
		runAtStr, key, _ := strings.Cut(runAtStr, " ") // a keyed job's key follows
		runAt, _ := strconv.ParseInt(runAtStr, 10, 64)
		claim, _ := vals[i+2].AsInt64()
		raw, _ := vals[i+3].ToString()
		st, _ := vals[i+4].ToString()
		r, err := decodeJob(id, raw, st)
		r.Claim, r.Attempt, r.RunAt, r.Priority, r.Worker = claim, r.Attempt+1, time.UnixMilli(runAt), priorityOf(level), o.Process
		r.Key = key
		if err != nil {
			c.Bad = append(c.Bad, BadRecord{Token: Token{ID: id, Claim: r.Claim}, Err: err})
			continue
		}
		c.Jobs = append(c.Jobs, r)
	}
	return c, nil
}
