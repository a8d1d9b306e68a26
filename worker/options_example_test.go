package worker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Each queue gets its handler and its options; Register checks them at
// once, so a mistake fails the program's start rather than its first job.
func ExampleRegistry_Register() {
	handler := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error { return nil })
	reg := worker.NewRegistry()
	err := reg.Register("emails", handler, worker.QueueOptions{
		Concurrency:     20,
		MaxAttempts:     8,
		Backoff:         worker.FixedSteps{15 * time.Second, 3 * time.Minute, 10 * time.Minute, time.Hour},
		Timeout:         2 * time.Minute,
		RateLimit:       worker.RateLimit{N: 100, Per: time.Second},
		PriorityWeights: worker.PriorityWeights{High: 8, Normal: 3, Low: 1},
		RetainCompleted: worker.Retention{Count: 10_000, Age: 24 * time.Hour},
	})
	fmt.Println("emails:", err)

	err = reg.Register("reports", handler, worker.QueueOptions{Concurrency: -1})
	fmt.Println("reports:", err)
	fmt.Println(reg.Queues())
	// Output:
	// emails: <nil>
	// reports: register queue "reports": invalid Concurrency: must be at least 1 (got -1)
	// [emails]
}

// The leader of a queue enqueues its periodic jobs: once per fire across
// the fleet, every Every or at the times of a Cron expression.
func ExamplePeriodic() {
	reg := worker.NewRegistry()
	err := reg.Register("audit", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		return nil
	}), worker.QueueOptions{Periodic: []worker.Periodic{
		{Name: "heartbeat", Every: time.Minute, Payload: []byte(`{"check":"heartbeat"}`)},
		{Name: "nightly", Cron: "CRON_TZ=Europe/Paris 0 3 * * *", SkipMissed: true},
		{Name: "both", Every: time.Hour, Cron: "@daily"},
	}})
	var ve *worker.ValidationError
	if errors.As(err, &ve) {
		fmt.Printf("%s: %s\n", ve.Field, ve.Reason)
	}
	// Output: Periodic[2]: schedule "both" sets both every and cron; set one
}

// A rate limit as the configuration and the CLI write it.
func ExampleParseRateLimit() {
	for _, s := range []string{"100 per 1s", "5000/1m", "", "fast"} {
		l, err := worker.ParseRateLimit(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%q: %d per %s\n", s, l.N, l.Per)
	}
	// Output:
	// "100 per 1s": 100 per 1s
	// "5000/1m": 5000 per 1m0s
	// "": 0 per 0s
	// error: expected "N per DURATION" such as "100 per 1s" or "5000/1m" (got "fast")
}

// A priority as the CLI and the HTTP API write it.
func ExampleParsePriority() {
	for _, s := range []string{"high", "LOW", "", "urgent"} {
		p, err := worker.ParsePriority(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%q: %s\n", s, p)
	}
	// Output:
	// "high": high
	// "LOW": low
	// "": normal
	// error: invalid Priority: "urgent" is not a priority; use low, normal or high
}

// The default retry policy waits a random time up to an exponential bound
// (full jitter); Rand is set here so that the output is fixed.
func ExampleExponentialBackoff() {
	b := worker.ExponentialBackoff{Base: 5 * time.Second, Cap: time.Hour, Rand: func() float64 { return 0.5 }}
	for _, attempt := range []int{1, 2, 3, 10, 20} {
		fmt.Printf("after failed attempt %d: wait %s\n", attempt, b.Delay(attempt))
	}
	// Output:
	// after failed attempt 1: wait 2.5s
	// after failed attempt 2: wait 5s
	// after failed attempt 3: wait 10s
	// after failed attempt 10: wait 21m20s
	// after failed attempt 20: wait 30m0s
}

// doubling is a RetryPolicy of one's own: 1s, 2s, 4s... up to a minute.
type doubling struct{}

func (doubling) Delay(attempt int) time.Duration {
	return min(time.Second<<min(attempt-1, 6), time.Minute)
}

// Any type with a Delay method is a RetryPolicy, for QueueOptions.Backoff.
func ExampleRetryPolicy() {
	var p worker.RetryPolicy = doubling{}
	for _, attempt := range []int{1, 2, 3, 7, 8} {
		fmt.Println(p.Delay(attempt))
	}
	// Output:
	// 1s
	// 2s
	// 4s
	// 1m0s
	// 1m0s
}
