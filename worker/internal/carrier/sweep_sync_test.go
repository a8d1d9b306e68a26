package carrier

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// pacedStore answers the upkeep's calls: each method comes back full
// (a whole batch done, more left) as many times as full says, then short.
// It records every call, in order, with its time. The embedded Store is
// nil: the loops under test call only what pacedStore defines.
type pacedStore struct {
	Store
	mu    sync.Mutex
	full  map[string]int
	order []string
	at    map[string][]time.Time
}

func newPacedStore(full map[string]int) *pacedStore {
	return &pacedStore{full: full, at: map[string][]time.Time{}}
}

// call records a call of method and reports whether it comes back full.
func (s *pacedStore) call(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order = append(s.order, method)
	s.at[method] = append(s.at[method], time.Now())
	if s.full[method] > 0 {
		s.full[method]--
		return true
	}
	return false
}

func (s *pacedStore) times(method string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.at[method])
}

func (s *pacedStore) Recover(context.Context, string, string, int, int) (store.Recovered, error) {
	if s.call("Recover") {
		return store.Recovered{Due: batchLimit - 1, Dead: 1}, nil
	}
	return store.Recovered{Due: 3}, nil
}

func (s *pacedStore) TrimDead(context.Context, string, string, int, time.Duration, int) (store.Trimmed, error) {
	if s.call("TrimDead") {
		return store.Trimmed{ByAge: 400, ByCount: batchLimit - 400}, nil
	}
	return store.Trimmed{}, nil
}

func (s *pacedStore) TrimCancelled(context.Context, string, string, int, time.Duration, int) (store.Trimmed, error) {
	if s.call("TrimCancelled") {
		return store.Trimmed{ByCount: batchLimit}, nil
	}
	return store.Trimmed{}, nil
}

func (s *pacedStore) ExpireUnique(context.Context, string, string, int) (store.ExpiredUnique, error) {
	if s.call("ExpireUnique") {
		return store.ExpiredUnique{Forgotten: 7, Looked: batchLimit}, nil
	}
	return store.ExpiredUnique{Looked: 12}, nil
}

func (s *pacedStore) TrimHistory(context.Context, string, string, time.Duration) (int, error) {
	if s.call("TrimHistory") {
		return store.HistoryTrimBatch, nil
	}
	return 1, nil
}

func (s *pacedStore) Stats(context.Context, string) (store.Stats, error) { return store.Stats{}, nil }

// TestUpkeepPacing walks the leader's cleanup loops on a fake clock (issue
// 29, item 9): at each tick, a call that comes back full is followed at
// once by the next, with no cap on their number, the duties of the trim
// taking turns; once every duty came back short, the next call waits for
// the next tick.
func TestUpkeepPacing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const trimEvery, recoverEvery = time.Minute, time.Second
		st := newPacedStore(map[string]int{"TrimDead": 5, "TrimCancelled": 5, "ExpireUnique": 30, "TrimHistory": 3, "Recover": 25})
		c, err := New(st, nil, nil, nil, Config{
			RecoverInterval: recoverEvery, TrimInterval: trimEvery,
			DeadMaxJobs: 10, DeadMaxAge: time.Hour, HistoryRetention: time.Hour,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		log := slog.New(slog.DiscardHandler)
		q := Queue{Name: "q", MaxAttempts: 3}
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.trimLoop(ctx, q, "f", log) })
		wg.Go(func() { _ = c.recoverLoop(ctx, q, "f", log) })
		t0 := time.Now()
		synctest.Wait()

		// The first tick: every full call followed at once by the next.
		for method, want := range map[string]int{"TrimDead": 6, "TrimCancelled": 6, "ExpireUnique": 31, "TrimHistory": 4, "Recover": 26} {
			at := st.times(method)
			if len(at) != want {
				t.Errorf("%s: %d calls in the first tick, want %d (each full one followed by the next)", method, len(at), want)
			}
			for i, a := range at {
				if !a.Equal(t0) {
					t.Errorf("%s: call %d at +%v, want at once", method, i+1, a.Sub(t0))
					break
				}
			}
		}
		// The trim's duties take turns while they are behind.
		st.mu.Lock()
		var trims []string
		for _, m := range st.order {
			if m != "Recover" {
				trims = append(trims, m)
			}
		}
		st.mu.Unlock()
		turns := []string{"TrimDead", "TrimCancelled", "ExpireUnique", "TrimHistory"}
		if want := slices.Concat(turns, turns, turns, turns); !slices.Equal(trims[:16], want) {
			t.Errorf("the first trim calls: %v; want turns %v", trims[:16], want)
		}

		// Caught up: one call each per tick from now on.
		time.Sleep(recoverEvery)
		synctest.Wait()
		if at := st.times("Recover"); len(at) != 27 || !at[26].Equal(t0.Add(recoverEvery)) {
			t.Errorf("recover: %d calls, the last at +%v; want the 27th at +%v", len(at), at[len(at)-1].Sub(t0), recoverEvery)
		}
		if n := len(st.times("ExpireUnique")); n != 31 {
			t.Errorf("ExpireUnique: %d calls before the next trim tick, want 31", n)
		}
		time.Sleep(trimEvery - recoverEvery)
		synctest.Wait()
		for method, want := range map[string]int{"TrimDead": 7, "TrimCancelled": 7, "ExpireUnique": 32, "TrimHistory": 5} {
			if at := st.times(method); len(at) != want || !at[want-1].Equal(t0.Add(trimEvery)) {
				t.Errorf("%s: %d calls, the last at +%v; want %d, the last at +%v", method, len(at), at[len(at)-1].Sub(t0), want, trimEvery)
			}
		}
		cancel()
		wg.Wait()
	})
}
