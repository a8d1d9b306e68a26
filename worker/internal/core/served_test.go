package core

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestServedRemembers: a Served answers from the record in Redis, keeps a
// queue served for servedFresh without reading (the record may go
// meanwhile), never keeps a miss for Check, and keeps one for missFresh
// for Warn; on single Redis and a Cluster.
func TestServedRemembers(t *testing.T) {
	t.Parallel()
	for name, connect := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rdb := connect(t)
			st := store.New(rdb, testkit.Prefix(t), nil)
			s := NewServed(st)
			now := time.Unix(1000, 0)
			s.now = func() time.Time { return now }
			ctx := t.Context()
			answer := func(warn bool, queue, kind string) string {
				t.Helper()
				f := s.Check
				if warn {
					f = s.Warn
				}
				out, err := f(ctx, []string{queue}, []string{kind})
				if err != nil {
					t.Fatal(err)
				}
				return out[0]
			}

			if w := answer(true, "q", "a"); w != `no daemon has ever served queue "q"` {
				t.Fatalf("a queue never served: %q", w)
			}
			if err := st.RecordServed(ctx, "q", []string{"", "a"}); err != nil {
				t.Fatal(err)
			}
			if w := answer(true, "q", "a"); w == "" {
				t.Errorf("Warn read a miss again within missFresh")
			}
			if w := answer(false, "q", "a"); w != "" {
				t.Errorf("Check kept a miss: %q", w)
			}
			now = now.Add(missFresh)
			if w := answer(true, "q", "b"); w != `no daemon has ever served kind "b" of queue "q" (kinds served: (none), a)` {
				t.Errorf("a kind never served: %q", w)
			}
			if err := st.ForgetServed(ctx, "q"); err != nil {
				t.Fatal(err)
			}
			if w := answer(false, "q", "a"); w != "" {
				t.Errorf("a queue served was read again within servedFresh: %q", w)
			}
			now = now.Add(servedFresh)
			if w := answer(false, "q", "a"); w == "" {
				t.Errorf("a queue served was kept past servedFresh")
			}
			s.Forget("q")
			if _, ok := s.seen["q"]; ok {
				t.Errorf("Forget kept the queue")
			}
		})
	}
}
