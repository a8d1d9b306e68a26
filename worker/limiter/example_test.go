package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/limiter"
)

// Hold one of ten fleet-wide slots for calls to a provider that allows ten
// at once, and make the call under the slot's context, which ends if the
// slot is lost. (Compiled, not run: it needs a Redis.)
func ExampleLimiter_Acquire() {
	ctx := context.Background()
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rdb.Close()
	lim, err := limiter.New(rdb, limiter.Options{}) // one per process
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lim.Close()

	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	slot, err := lim.Acquire(wait, "geocoder", 10, 30*time.Second)
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Println("ten calls in flight for 5s: try later")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer slot.Release(context.WithoutCancel(ctx))

	req, _ := http.NewRequestWithContext(slot.Context(), http.MethodGet, "https://geocoder.example.com/v1?q=Paris", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
}

// Keep every process together under 100 calls a second.
// (Compiled, not run: it needs a Redis.)
func ExampleLimiter_Wait() {
	ctx := context.Background()
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rdb.Close()
	lim, err := limiter.New(rdb, limiter.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lim.Close()

	for _, q := range []string{"Paris", "Lyon", "Nice"} {
		if err := lim.Wait(ctx, "geocoder", 100, time.Second); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("geocode", q)
	}
}

// Take without waiting: refuse the request, and tell the client when to
// come back. (Compiled, not run: it needs a Redis.)
func ExampleLimiter_Take() {
	var lim *limiter.Limiter // from limiter.New
	handler := func(w http.ResponseWriter, r *http.Request) {
		ok, retryAt, err := lim.Take(r.Context(), "exports", 10, time.Minute)
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case !ok:
			w.Header().Set("Retry-After", fmt.Sprint(int(time.Until(retryAt).Seconds())+1))
			http.Error(w, "ten exports a minute", http.StatusTooManyRequests)
		default:
			fmt.Fprintln(w, "export started")
		}
	}
	_ = handler
}
