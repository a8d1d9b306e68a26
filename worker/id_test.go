package worker

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// decodeIDMillis decodes the millisecond timestamp in the first 10 characters
// of an id.
func decodeIDMillis(t *testing.T, id string) time.Time {
	t.Helper()
	var ms int64
	for i := range 10 {
		v := strings.IndexByte(crockford, id[i])
		if v < 0 {
			t.Fatalf("id %q has %q at %d, not in the Crockford alphabet", id, id[i], i)
		}
		ms = ms<<5 | int64(v)
	}
	return time.UnixMilli(ms)
}

// requireULIDShape fails t unless id is 26 characters of the Crockford alphabet.
func requireULIDShape(t *testing.T, id string) {
	t.Helper()
	if len(id) != 26 {
		t.Fatalf("id %q is %d characters; want 26", id, len(id))
	}
	for i := range len(id) {
		if strings.IndexByte(crockford, id[i]) < 0 {
			t.Fatalf("id %q has %q at %d, not in the Crockford alphabet %s", id, id[i], i, crockford)
		}
	}
	if err := ValidateID(id); err != nil {
		t.Fatalf("generated id %q does not validate: %v", id, err)
	}
}

func TestIDNextShapeAndTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		now  time.Time
	}{
		{"now", time.Now()},
		{"one ms after the epoch", time.UnixMilli(1)},
		{"2023", time.UnixMilli(1_700_000_000_123)},
		{"sub-millisecond part dropped", time.UnixMilli(1_700_000_000_123).Add(999 * time.Microsecond)},
		{"largest 48-bit ms", time.UnixMilli(1<<48 - 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var g idGen
			id := g.next(tt.now)
			requireULIDShape(t, id)
			if got, want := decodeIDMillis(t, id), time.UnixMilli(tt.now.UnixMilli()); !got.Equal(want) {
				t.Fatalf("id %q encodes %s (%d ms); want %s (%d ms)", id, got, got.UnixMilli(), want, want.UnixMilli())
			}
			// 50 bits of timestamp with the top 2 zero: the first character is 0-7.
			if id[0] > '7' {
				t.Fatalf("id %q starts with %q; want 0-7", id, id[0])
			}
		})
	}
}

func TestIDNextStrictlyIncreasing(t *testing.T) {
	t.Parallel()
	base := time.UnixMilli(1_700_000_000_000)
	tests := []struct {
		name string
		at   func(i int) time.Time
		// wantTime returns the timestamp the i-th id must encode.
		wantTime func(i int) time.Time
	}{
		{
			name:     "same time",
			at:       func(int) time.Time { return base },
			wantTime: func(int) time.Time { return base },
		},
		{
			name: "increasing, ten per millisecond",
			at:   func(i int) time.Time { return base.Add(time.Duration(i) * 100 * time.Microsecond) },
			wantTime: func(i int) time.Time {
				return time.UnixMilli(base.Add(time.Duration(i) * 100 * time.Microsecond).UnixMilli())
			},
		},
		{
			name:     "one per millisecond",
			at:       func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) },
			wantTime: func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) },
		},
		{
			// The clock steps back 5s every 1,000 ids: the generator keeps the
			// latest timestamp and counts up.
			name: "clock steps back",
			at: func(i int) time.Time {
				return base.Add(time.Duration(i%1000)*time.Millisecond - time.Duration(i/1000)*5*time.Second)
			},
			wantTime: func(i int) time.Time {
				if i < 1000 {
					return base.Add(time.Duration(i) * time.Millisecond)
				}
				return base.Add(999 * time.Millisecond)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var g idGen
			prev := ""
			for i := range 100_000 {
				id := g.next(tt.at(i))
				if len(id) != 26 {
					t.Fatalf("id %d = %q; want 26 characters", i, id)
				}
				if id <= prev {
					t.Fatalf("id %d = %q; want greater than the previous %q", i, id, prev)
				}
				if got, want := decodeIDMillis(t, id), tt.wantTime(i); !got.Equal(want) {
					t.Fatalf("id %d = %q encodes %d ms; want %d ms", i, id, got.UnixMilli(), want.UnixMilli())
				}
				prev = id
			}
			requireULIDShape(t, prev)
		})
	}
}

func TestIDNextEarlierTimeAfterLater(t *testing.T) {
	t.Parallel()
	laterMS := time.UnixMilli(1_700_000_000_000)
	later := laterMS.Add(500 * time.Microsecond)
	tests := []struct {
		name    string
		earlier time.Time
	}{
		{"1ms back", later.Add(-time.Millisecond)},
		{"1h back", later.Add(-time.Hour)},
		{"same ms, earlier µs", laterMS.Add(100 * time.Microsecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var g idGen
			a := g.next(later)
			b := g.next(tt.earlier)
			if b <= a {
				t.Fatalf("next(earlier) = %q; want greater than next(later) = %q", b, a)
			}
			if got := decodeIDMillis(t, b); !got.Equal(laterMS) {
				t.Fatalf("next(earlier) encodes %s; want the later time %s kept", got, laterMS)
			}
			if a[:10] != b[:10] {
				t.Fatalf("timestamps differ: %q vs %q", a[:10], b[:10])
			}
		})
	}
}

func TestIDNextUniqueAcrossGoroutines(t *testing.T) {
	t.Parallel()
	const goroutines, perGoroutine = 8, 10_000
	tests := []struct {
		name string
		now  func() time.Time
	}{
		{"fixed time", func() time.Time { return time.UnixMilli(1_700_000_000_000) }},
		{"wall clock", time.Now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var g idGen
			ids := make([][]string, goroutines)
			var wg sync.WaitGroup
			for w := range goroutines {
				wg.Go(func() {
					out := make([]string, perGoroutine)
					for i := range out {
						out[i] = g.next(tt.now())
					}
					ids[w] = out
				})
			}
			wg.Wait()
			seen := make(map[string]int, goroutines*perGoroutine)
			for w, out := range ids {
				for i, id := range out {
					if prev, dup := seen[id]; dup {
						t.Fatalf("id %q made twice (goroutine %d and %d)", id, prev, w)
					}
					seen[id] = w
					// One goroutine's ids come from later and later calls
					// under the generator's lock, so they increase.
					if i > 0 && id <= out[i-1] {
						t.Fatalf("goroutine %d: id %q after %q; want increasing", w, id, out[i-1])
					}
				}
			}
			if len(seen) != goroutines*perGoroutine {
				t.Fatalf("%d unique ids; want %d", len(seen), goroutines*perGoroutine)
			}
		})
	}
}

func BenchmarkIDNext(b *testing.B) {
	var g idGen
	now := time.Now()
	for b.Loop() {
		_ = g.next(now)
	}
}
