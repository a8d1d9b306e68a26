package lock

import (
	"maps"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// These tests run the script wrappers on real Redis; TestMain is in
// main_test.go.

func hash(t *testing.T, rdb rueidis.Client, key string) map[string]string {
	t.Helper()
	m, err := rdb.Do(t.Context(), rdb.B().Hgetall().Key(key).Build()).AsStrMap()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScriptsLeaveOtherFieldsAlone(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	b := redisBackend{c: script.NewConn(rdb, nil)}
	name := testkit.Prefix(t)
	const owner, stranger = "uuid-1:owner", "uuid-2:stranger"

	if ok, _, err := b.acquire(t.Context(), name, owner, time.Minute); !ok || err != nil {
		t.Fatalf("acquire = %v, %v", ok, err)
	}
	want := map[string]string{owner: "1"}

	ok, ttl, err := b.acquire(t.Context(), name, stranger, time.Minute)
	if ok || err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("acquire by another field = %v, ttl %v, %v; want refused with the TTL", ok, ttl, err)
	}
	res, err := b.release(t.Context(), name, Channel(name), stranger, time.Minute)
	if res != releaseNotHeld || err != nil {
		t.Errorf("release by another field = %v, %v; want releaseNotHeld", res, err)
	}
	r := b.renew(t.Context(), time.Minute, []lockRef{{name, stranger}, {name + ":absent", owner}, {name, owner}})
	if r[0].held || r[1].held || !r[2].held || r[0].err != nil || r[1].err != nil || r[2].err != nil {
		t.Errorf("renew of another field, an absent lock, the holder = %+v; want false, false, true", r)
	}
	if got := hash(t, rdb, name); !maps.Equal(got, want) {
		t.Errorf("HGETALL = %v after the other field's calls, want %v", got, want)
	}

	// A lease below 1ms would delete the key (PEXPIRE 0): refused before
	// any write.
	if _, _, err := b.acquire(t.Context(), name, owner, 0); err == nil {
		t.Error("acquire with lease 0 succeeded")
	}
	if _, err := b.release(t.Context(), name, Channel(name), owner, 0); err == nil {
		t.Error("release with lease 0 succeeded")
	}
	if r := b.renew(t.Context(), 0, []lockRef{{name, owner}}); r[0].err == nil {
		t.Error("renew with lease 0 succeeded")
	}
	if got := hash(t, rdb, name); !maps.Equal(got, want) {
		t.Errorf("HGETALL = %v after refused calls, want %v", got, want)
	}
}
