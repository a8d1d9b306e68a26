package store_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// sizing is a Redis client that records the bytes of the arguments of
// every script call (EVALSHA, EVAL) it sends.
type sizing struct {
	rueidis.Client
	mu    sync.Mutex
	calls []int
}

func (c *sizing) record(cmds ...rueidis.Completed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range cmds {
		args := cmd.Commands()
		if len(args) > 0 && strings.HasPrefix(strings.ToUpper(args[0]), "EVAL") {
			n := 0
			for _, a := range args {
				n += len(a)
			}
			c.calls = append(c.calls, n)
		}
	}
}

func (c *sizing) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.record(cmd)
	return c.Client.Do(ctx, cmd)
}

func (c *sizing) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.record(cmds...)
	return c.Client.DoMulti(ctx, cmds...)
}

func (c *sizing) sizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.calls...)
}

// TestCompleteBoundsResultBytes: a batch of completions is split so that
// one complete.lua call carries at most store.MaxCompleteBytes of results
// (a larger result goes alone), however many jobs fit the batch (issue 29,
// item 11b): 24 results of 1 MiB, one of 5 MiB and ten without, all
// stored.
func TestCompleteBoundsResultBytes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *store.Store, c rueidis.Client) {
		sc := &sizing{Client: c}
		s := store.New(sc, testkit.Prefix(t), nil)
		const mib = 1 << 20
		var jobs []store.NewJob
		results := map[string][]byte{}
		for i := range 35 {
			id := fmt.Sprintf("j%02d", i)
			jobs = append(jobs, job(id, "p"))
			switch {
			case i < 24:
				results[id] = bytes.Repeat([]byte{byte('a' + i%26)}, mib)
			case i == 24:
				results[id] = bytes.Repeat([]byte("L"), 5*mib)
			}
		}
		enqueue(t, s, jobs...)
		held := claim(t, s, len(jobs), time.Hour).Jobs
		done := make([]store.Completion, len(held))
		for i, r := range held {
			done[i] = store.Completion{Token: r.Token(), Result: results[r.ID]}
		}
		before := len(sc.sizes())
		if n, err := s.Complete(t.Context(), queue, done); err != nil || n != len(done) {
			t.Fatalf("Complete = %d, %v; want %d", n, err, len(done))
		}
		calls := sc.sizes()[before:]
		if len(calls) < 8 { // 29 MiB of results in calls of at most 4 MiB, the 5 MiB one alone
			t.Errorf("Complete made %d script calls of %v bytes; want at least 8, none over %d bytes of results but the 5 MiB one alone", len(calls), calls, store.MaxCompleteBytes)
		}
		for _, n := range calls {
			if n > store.MaxCompleteBytes+64<<10 && (n < 5*mib || n > 5*mib+64<<10) {
				t.Errorf("a complete call of %d bytes: over the bound of %d, and not the one large result alone", n, store.MaxCompleteBytes)
			}
		}
		for id, want := range results {
			r := get(t, s, id).Record
			if !bytes.Equal(r.Result, want) {
				t.Errorf("%s: result of %d bytes, want %d", id, len(r.Result), len(want))
			}
		}
		if st, err := s.Stats(t.Context(), queue); err != nil || st.Completed != int64(len(done)) {
			t.Errorf("Stats = %+v, %v; want %d completed", st, err, len(done))
		}
	})
}
