package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestRateLimitValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit worker.RateLimit
		want  string // part of the reason; "" = valid
	}{
		{worker.RateLimit{}, ""},
		{worker.RateLimit{N: 100, Per: time.Second}, ""},
		{worker.RateLimit{N: 1, Per: time.Millisecond}, ""},
		{worker.RateLimit{N: 1_000_000, Per: 366 * 24 * time.Hour}, ""},
		{worker.RateLimit{N: 0, Per: time.Second}, "at least 1 job"},
		{worker.RateLimit{N: -5, Per: time.Second}, "at least 1 job"},
		{worker.RateLimit{N: 1_000_001, Per: time.Second}, "at most 1000000"},
		{worker.RateLimit{N: 10}, "at least 1ms"},
		{worker.RateLimit{N: 10, Per: 500 * time.Microsecond}, "at least 1ms"},
		{worker.RateLimit{N: 10, Per: 1500 * time.Microsecond}, "whole milliseconds"},
		{worker.RateLimit{N: 10, Per: 367 * 24 * time.Hour}, "at most 8784h"},
	} {
		err := worker.QueueOptions{RateLimit: tc.limit}.Validate()
		var v *worker.ValidationError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tc.limit, err)
		case tc.want != "" && (!errors.As(err, &v) || v.Field != "RateLimit" || !strings.Contains(v.Reason, tc.want)):
			t.Errorf("%+v: %v, want an invalid rate_limit saying %q", tc.limit, err, tc.want)
		}
	}
	if err := worker.NewRegistry().Register("q", worker.HandlerFunc(succeed),
		worker.QueueOptions{RateLimit: worker.RateLimit{N: 10}}); !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("Register with a rate limit without a window: %v, want ErrInvalid", err)
	}
	if s := (worker.RateLimit{N: 100, Per: time.Minute}).String(); s != "100 per 1m0s" {
		t.Errorf("String = %q", s)
	}
}

// claimTap is a Redis client that records every claim script reply: the
// Redis time the claim ran and the jobs it took.
type claimTap struct {
	rueidis.Client
	mu     sync.Mutex
	claims []tappedClaim
}

type tappedClaim struct {
	At  time.Time // the Redis clock, µs
	IDs []string
}

func (c *claimTap) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	// Read the command before Do: rueidis recycles it.
	args := cmd.Commands()
	isClaim := len(args) > 1 && (args[0] == "EVALSHA" && args[1] == script.Claim.SHA() || args[0] == "EVAL" && args[1] == script.Claim.Source())
	res := c.Client.Do(ctx, cmd)
	if !isClaim {
		return res
	}
	if vals, err := res.ToArray(); err == nil && len(vals) >= 4 {
		us, _ := vals[0].AsInt64()
		tc := tappedClaim{At: time.UnixMicro(us)}
		for i := 4; i < len(vals); i += 5 { // after now, next, corrupt and weight
			id, _ := vals[i].ToString()
			tc.IDs = append(tc.IDs, id)
		}
		c.mu.Lock()
		c.claims = append(c.claims, tc)
		c.mu.Unlock()
	}
	return res
}

func (c *claimTap) taken() []tappedClaim {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []tappedClaim
	for _, tc := range c.claims {
		if len(tc.IDs) > 0 {
			out = append(out, tc)
		}
	}
	return out
}

// mostInWindow returns the most events in one window [t, t+d), and the
// index of the event that starts it; times are sorted.
func mostInWindow(times []time.Time, d time.Duration) (most, at int) {
	j := 0
	for i := range times {
		for j < len(times) && times[j].Before(times[i].Add(d)) {
			j++
		}
		if j-i > most {
			most, at = j-i, i
		}
	}
	return most, at
}

// TestRateLimitAcrossDaemons: three daemons, each with its own Redis
// client, serve one queue limited to 100 jobs per second. 1,000 jobs start
// no faster than that in any one-second window, counted by the Redis clock
// of the claims that took them.
func TestRateLimitAcrossDaemons(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			const jobs = 1000
			limit := worker.RateLimit{N: 100, Per: time.Second}
			prefix := testkit.Prefix(t)
			cfg := testConfig(t, prefix)
			var mu sync.Mutex
			started := make(map[string][]time.Time)
			h := worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
				now := time.Now()
				mu.Lock()
				started[job.ID] = append(started[job.ID], now)
				mu.Unlock()
				return nil
			})
			taps := make([]*claimTap, 3)
			for i := range taps {
				taps[i] = &claimTap{Client: b.Connect(t)}
				startDaemon(t, taps[i], register(t, nil, "q", h, worker.QueueOptions{Concurrency: 10, RateLimit: limit}), cfg)
			}
			producer := b.Connect(t)
			enqueueAll(t, newClient(t, producer, cfg), specs("q", "r", jobs))
			count := func() int { mu.Lock(); defer mu.Unlock(); return len(started) }
			testkit.Eventually(t, 60*time.Second, "every job to start", func() bool { return count() == jobs })

			// The guarantee, on the Redis clock: the claims of all three
			// daemons together, every window [t, t+1s) opening at a claim.
			var claimTimes []time.Time // one per job
			claimedAt := make(map[string]time.Time, jobs)
			var shares []int
			for _, tap := range taps {
				n := 0
				for _, tc := range tap.taken() {
					for _, id := range tc.IDs {
						claimTimes = append(claimTimes, tc.At)
						claimedAt[id] = tc.At
						n++
					}
				}
				shares = append(shares, n)
			}
			slices.SortFunc(claimTimes, time.Time.Compare)
			if len(claimTimes) != jobs {
				t.Fatalf("the taps saw %d jobs claimed, want %d", len(claimTimes), jobs)
			}
			most, at := mostInWindow(claimTimes, limit.Per)
			if most > limit.N {
				t.Errorf("%d jobs claimed in the second from %v, limit %d", most, claimTimes[at].Format(time.StampMicro), limit.N)
			}
			claimSpan := claimTimes[jobs-1].Sub(claimTimes[0])
			if least := 9 * time.Second; claimSpan < least {
				t.Errorf("1000 jobs were claimed within %v; at 100 per second that takes at least %v", claimSpan, least)
			}

			// The handlers' start times, on the local clock: each job starts
			// some lag after its claim. Where the lags vary by spread, a
			// window of 1s - spread of start times holds only jobs claimed
			// within one second, so at most 100; a full second of start
			// times may hold a few more, from the next burst of claims.
			var starts []time.Time
			var minLag, maxLag time.Duration
			mu.Lock()
			for id, ss := range started {
				if len(ss) != 1 {
					t.Errorf("job %s started %d times, want once", id, len(ss))
				}
				lag := ss[0].Sub(claimedAt[id])
				if len(starts) == 0 || lag < minLag {
					minLag = lag
				}
				maxLag = max(maxLag, lag)
				starts = append(starts, ss[0])
			}
			mu.Unlock()
			slices.SortFunc(starts, time.Time.Compare)
			spread := maxLag - minLag
			if w := limit.Per - spread; w > 0 {
				if n, _ := mostInWindow(starts, w); n > limit.N {
					t.Errorf("%d jobs started within %v (1s less the spread of claim-to-start lags), limit %d", n, w, limit.N)
				}
			}
			startMost, _ := mostInWindow(starts, limit.Per)
			startSpan := starts[jobs-1].Sub(starts[0])
			t.Logf("%d jobs: claims over %v, starts over %v = %.1f jobs/s after the first window's burst "+
				"(%.1f jobs/s over span+1s); at most %d claims and %d starts in any 1s window; claim-to-start lag %v to %v; claims per daemon %v",
				jobs, claimSpan.Round(time.Millisecond), startSpan.Round(time.Millisecond),
				float64(jobs-limit.N)/startSpan.Seconds(), float64(jobs)/(startSpan+limit.Per).Seconds(),
				most, startMost, minLag.Round(time.Microsecond), maxLag.Round(time.Microsecond), shares)

			// Idle, the queue's rate window expires.
			rateKey := store.QueueKeys(prefix, "q").Rate
			testkit.Eventually(t, 5*time.Second, "the rate key to expire", func() bool { return !testkit.Exists(t, producer, rateKey) })
		})
	}
}

func ExampleRateLimit_String() {
	fmt.Println(worker.RateLimit{N: 100, Per: time.Second})
	// Output: 100 per 1s
}
