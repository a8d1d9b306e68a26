package script

import (
	"strconv"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestServersWithoutFlagsGetPlainScripts runs flagged scripts on the
// embedded store of courier dev (miniredis, whose gopher-lua refuses the
// "#!lua" line as Redis before 7.0 does): the first call learns it and
// sends the script without its flags line, and so does every later call,
// Exec and ExecMulti alike.
func TestServersWithoutFlagsGetPlainScripts(t *testing.T) {
	t.Parallel()
	rdb := testkit.Embedded(t)
	c := NewConn(rdb, nil)
	ctx := t.Context()
	k := keysOf("dev", "q")

	if err := LockAcquire.Exec(ctx, c, []string{"dev:lock"}, []string{"60000", "me:h"}).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("lock_acquire on the embedded store: %v, want a nil reply (taken)", err)
	}
	if !c.flagless.Load() {
		t.Fatal("the Conn did not learn that the server refuses flags")
	}
	if n, err := LockRenew.Exec(ctx, c, []string{"dev:lock"}, []string{"60000", "me:h"}).AsInt64(); err != nil || n != 1 {
		t.Fatalf("lock_renew = %d, %v; want 1", n, err)
	}
	enqueueRaw(t, c, k, "j1", "j2")
	vals, err := claimRaw(c, k, t, 2).ToArray()
	if err != nil || len(vals) != 3+2*5 {
		t.Fatalf("claim: %d values, %v", len(vals), err)
	}
	tok, err := vals[5].AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	// A fresh Conn learns it within an ExecMulti too.
	fresh := NewConn(rdb, nil)
	calls := []Call{
		{Keys: []string{k.active, k.claims, k.dead, k.state}, Args: []string{"60000", "0", "j1", strconv.FormatInt(tok, 10)}},
		{Keys: []string{k.active, k.claims, k.dead, k.state}, Args: []string{"60000", "0", "j2", strconv.FormatInt(tok, 10)}},
	}
	for i, res := range Extend.ExecMulti(ctx, fresh, calls...) {
		if lost, err := res.ToArray(); err != nil || len(lost) != 0 {
			t.Errorf("extend call %d: lost %d, %v; want none lost", i, len(lost), err)
		}
	}
	if !fresh.flagless.Load() {
		t.Error("the fresh Conn did not learn that the server refuses flags")
	}
}
