package store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestServed: daemons' kinds add up in a queue's record (one handler
// serves every kind, and stays so), a queue no daemon served has none, and
// ForgetServed deletes one record only.
func TestServed(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		for _, rec := range []struct {
			queue string
			kinds []string
		}{
			{"kq", []string{"", "b"}},
			{"kq", []string{"a", "b"}},
			{"kq", []string{"a"}}, // nothing new: no write
			{"one", nil},
			{"one", []string{"a"}}, // one handler served it: every kind
			{"other", []string{"x"}},
		} {
			if err := s.RecordServed(ctx, rec.queue, rec.kinds); err != nil {
				t.Fatal(err)
			}
		}
		served, found, err := s.ServedOf(ctx, []string{"kq", "one", "never", "other"})
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Served{{Kinds: []string{"", "a", "b"}}, {All: true}, {}, {Kinds: []string{"x"}}}
		if !reflect.DeepEqual(served, want) || !reflect.DeepEqual(found, []bool{true, true, false, true}) {
			t.Errorf("ServedOf = %+v, %v; want %+v, [true true false true]", served, found, want)
		}
		if !served[0].Serves("") || !served[0].Serves("a") || served[0].Serves("c") || !served[1].Serves("anything") {
			t.Errorf("Serves disagrees with %+v and %+v", served[0], served[1])
		}
		if got := testkit.HGetAll(t, c, store.ServedKey(testPrefix(s))); len(got) != 3 || got["kq"] != ",a,b" || got["one"] != "*" {
			t.Errorf("served hash %q", got)
		}
		if err := s.ForgetServed(ctx, "kq"); err != nil {
			t.Fatal(err)
		}
		if _, found, err := s.ServedOf(ctx, []string{"kq", "other"}); err != nil || found[0] || !found[1] {
			t.Errorf("after ForgetServed(kq): found %v, %v", found, err)
		}
	})
}

// testPrefix is the key prefix of s.
func testPrefix(s *store.Store) string { return strings.TrimSuffix(s.Keys("x").Jobs, ":{x}:jobs") }
