package script_test

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestExecMulti runs calls on keys of many hash slots, first with a script
// no server has cached (every EVALSHA answers NOSCRIPT and falls back to
// EVAL), then again from the cache.
func TestExecMulti(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := rdb(t)
			prefix := testkit.Prefix(t)
			// The prefix in a comment makes the script new to the server.
			s := script.New("-- "+prefix+"\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])", false)
			var calls []script.Call
			for _, tag := range []string{"a", "b", "c", "d", "e", "f"} {
				calls = append(calls, script.Call{Keys: []string{prefix + ":{" + tag + "}"}, Args: []string{"2"}})
			}
			for round := int64(1); round <= 2; round++ {
				for i, res := range s.ExecMulti(t.Context(), c, calls...) {
					if n, err := res.AsInt64(); err != nil || n != 2*round {
						t.Errorf("round %d call %d = %d, %v; want %d", round, i, n, err, 2*round)
					}
				}
			}
		})
	}
}
