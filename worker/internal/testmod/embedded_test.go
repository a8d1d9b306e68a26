package testmod_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// TestServersWithoutFlagsGetPlainScripts runs flagged scripts on the
// embedded store of courier dev (miniredis, whose gopher-lua refuses the
// "#!lua" line as Redis before 7.0 does): the first call learns it and
// sends the script without its flags line, and so does every later call,
// Exec and ExecMulti alike.
func TestServersWithoutFlagsGetPlainScripts(t *testing.T) {
	t.Parallel()
	rdb := embedded(t)
	c := script.NewConn(rdb, nil)
	ctx := t.Context()

	if err := script.LockAcquire.Exec(ctx, c, []string{"dev:lock"}, []string{"60000", "me:h"}).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("lock_acquire on the embedded store: %v, want a nil reply (taken)", err)
	}
	if !c.Flagless() {
		t.Fatal("the Conn did not learn that the server refuses flags")
	}
	if n, err := script.LockRenew.Exec(ctx, c, []string{"dev:lock"}, []string{"60000", "me:h"}).AsInt64(); err != nil || n != 1 {
		t.Fatalf("lock_renew = %d, %v; want 1", n, err)
	}

	// A fresh store learns it too, and its claim and its extend (one
	// ExecMulti) run.
	s := store.New(rdb, "dev", nil)
	const queue = "q"
	if _, err := s.Enqueue(ctx, queue, []store.NewJob{{ID: "j1"}, {ID: "j2"}}); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	claimed, err := s.Claim(ctx, queue, 2, time.Minute)
	if err != nil || len(claimed.Jobs) != 2 {
		t.Fatalf("claim = %d jobs, %v; want 2", len(claimed.Jobs), err)
	}
	var toks []store.Token
	for _, r := range claimed.Jobs {
		toks = append(toks, r.Token())
	}
	lost, err := s.Extend(ctx, storetest.Renewals(map[string][]store.Token{queue: toks}), time.Minute)
	if err != nil || len(lost[queue]) != 0 {
		t.Errorf("extend: lost %v, %v; want none lost", lost, err)
	}
}

// TestWakeUpsOnAServerWithoutShardedPubSub: the embedded store of courier
// dev (miniredis) knows neither SSUBSCRIBE nor SPUBLISH; subscribers and
// scripts both fall back to plain pub/sub, and wake-ups still arrive.
func TestWakeUpsOnAServerWithoutShardedPubSub(t *testing.T) {
	t.Parallel()
	const queue = "q"
	s := store.New(embedded(t), testkit.Prefix(t), nil)
	wakes := make(chan int64, 16)
	subscribed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(ctx, []string{queue}, func(_ string, runAt int64) { wakes <- runAt }, nil, func() {
			select {
			case subscribed <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatalf("Subscribe: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("not subscribed within 5s")
	}
	if _, err := s.Enqueue(t.Context(), queue, []store.NewJob{{ID: "j"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wakes:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up within 5s")
	}
}

// TestReportPrefixEmbedded: the embedded store of courier dev answers the
// commands of the prefix report (TIME, ZRANGEBYSCORE, ZADD,
// ZREMRANGEBYSCORE), so a dev daemon records its prefix as well.
func TestReportPrefixEmbedded(t *testing.T) {
	t.Parallel()
	s := store.New(embedded(t), "dev", nil)
	if _, err := s.ReportPrefix(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if live, err := s.LivePrefixes(t.Context(), time.Minute); err != nil || !slices.Equal(live, []string{"dev"}) {
		t.Errorf("LivePrefixes = %v, %v; want [dev]", live, err)
	}
}
