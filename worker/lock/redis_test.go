package lock_test

import (
	"maps"
	"regexp"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

func TestReentrantHoldsCountInOneField(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	c := newClient(t, rdb, lock.Options{})
	name := testkit.Prefix(t) + ":lock"
	field := c.Field("worker-1")

	h1 := acquire(t, c, name, "worker-1", lock.AcquireOptions{})
	h2 := acquire(t, c, name, "worker-1", lock.AcquireOptions{})
	if got := testkit.HGetAll(t, rdb, name); !maps.Equal(got, map[string]string{field: "2"}) {
		t.Fatalf("after two acquires: HGETALL = %v, want %s = 2", got, field)
	}
	if ttl := testkit.PTTL(t, rdb, name); ttl <= 0 || ttl > lock.LeaseDefault {
		t.Errorf("PTTL = %v, want in (0, %v]", ttl, lock.LeaseDefault)
	}
	if h1.Field() != field || h1.Name() != name {
		t.Errorf("Held names %s / %s, want %s / %s", h1.Name(), h1.Field(), name, field)
	}

	// Another process using the same holder name is another holder.
	other := newClient(t, testkit.Single(t), lock.Options{})
	if _, err := other.Acquire(t.Context(), name, "worker-1", lock.AcquireOptions{}); !isNotAcquired(err) {
		t.Fatalf("same holder name from another Client: %v, want ErrNotAcquired", err)
	}

	release(t, h2)
	if got := testkit.HGetAll(t, rdb, name); !maps.Equal(got, map[string]string{field: "1"}) {
		t.Fatalf("after one release: HGETALL = %v, want %s = 1", got, field)
	}
	if ttl := testkit.PTTL(t, rdb, name); ttl <= 0 {
		t.Errorf("PTTL after one release = %v, want the lease kept", ttl)
	}
	if h1.Context().Err() != nil {
		t.Fatal("the first hold ended with the second")
	}
	release(t, h1)
	if testkit.Exists(t, rdb, name) {
		t.Fatalf("after the last release the key still exists: %v", testkit.HGetAll(t, rdb, name))
	}
}

// TestRedissonLayout checks what a Java service using Redisson's
// getLock(name) sees and does: the key, its type and field, the channel
// and the unlock message, for names with and without a hash tag.
func TestRedissonLayout(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, tc := range []struct {
		name, suffix string
		channel      func(name string) string
	}{
		{"plain", ":lock", func(n string) string { return "redisson_lock__channel:{" + n + "}" }},
		{"hash tag", ":{queue}:leader", func(n string) string { return "redisson_lock__channel:" + n }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdb := testkit.Single(t)
			c := newClient(t, rdb, lock.Options{})
			name := testkit.Prefix(t) + tc.suffix
			channel := tc.channel(name)
			if got := lock.Channel(name); got != channel {
				t.Fatalf("Channel(%q) = %q, want %q", name, got, channel)
			}
			if !uuid.MatchString(c.ID()) {
				t.Errorf("default ID %q is not a UUID v4", c.ID())
			}
			if want := c.ID() + ":h"; c.Field("h") != want {
				t.Errorf("Field = %q, want %q", c.Field("h"), want)
			}

			msgs := subscribeRaw(t, testkit.Single(t), channel)
			h := acquire(t, c, name, "h", lock.AcquireOptions{})
			typ, err := rdb.Do(t.Context(), rdb.B().Type().Key(name).Build()).ToString()
			if err != nil || typ != "hash" {
				t.Fatalf("TYPE %s = %q (%v), want hash", name, typ, err)
			}
			if got := testkit.HGetAll(t, rdb, name); !maps.Equal(got, map[string]string{c.ID() + ":h": "1"}) {
				t.Fatalf("HGETALL = %v, want %s:h = 1", got, c.ID())
			}
			release(t, h)
			select {
			case m := <-msgs:
				if m.Channel != channel || m.Message != "0" {
					t.Errorf("unlock message %q on %q, want \"0\" on %q", m.Message, m.Channel, channel)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no unlock message on the channel")
			}

			// A Redisson holder: its hash excludes us; its unlock (DEL +
			// PUBLISH "0") wakes our waiter long before its 30s lease ends.
			java := "8743c9c0-0795-4907-87fd-6c719a112fbf:57"
			cmds := rueidis.Commands{
				rdb.B().Hset().Key(name).FieldValue().FieldValue(java, "1").Build(),
				rdb.B().Pexpire().Key(name).Milliseconds(30000).Build(),
			}
			for _, r := range rdb.DoMulti(t.Context(), cmds...) {
				if err := r.Error(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Acquire(t.Context(), name, "h", lock.AcquireOptions{}); !isNotAcquired(err) {
				t.Fatalf("Acquire while a Redisson holder has it = %v, want ErrNotAcquired", err)
			}
			got := make(chan error, 1)
			start := time.Now()
			go func() {
				h, err := c.Acquire(t.Context(), name, "h", lock.AcquireOptions{Wait: 20 * time.Second})
				if err == nil {
					err = h.Release(t.Context())
				}
				got <- err
			}()
			testkit.Eventually(t, 10*time.Second, "our waiter's subscription", func() bool { return numsub(t, rdb, channel) >= 2 })
			cmds = rueidis.Commands{
				rdb.B().Del().Key(name).Build(),
				rdb.B().Publish().Channel(channel).Message("0").Build(),
			}
			for _, r := range rdb.DoMulti(t.Context(), cmds...) {
				if err := r.Error(); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-got; err != nil {
				t.Fatalf("waiter: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("waiter took %v after the Redisson unlock, want it woken by the message", d)
			}
		})
	}
}

// subscribeRaw subscribes to channel with its own connection, as a
// Redisson waiter would, and returns the messages; it returns once the
// subscription is confirmed.
func subscribeRaw(t *testing.T, rdb rueidis.Client, channel string) <-chan rueidis.PubSubMessage {
	t.Helper()
	msgs := make(chan rueidis.PubSubMessage, 16)
	ready := make(chan struct{})
	ctx := rueidis.WithOnSubscriptionHook(t.Context(), func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" {
			close(ready)
		}
	})
	go rdb.Receive(ctx, rdb.B().Subscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) { msgs <- m })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatalf("SUBSCRIBE %s not confirmed", channel)
	}
	return msgs
}

// numsub returns the number of subscribers of channel.
func numsub(t testing.TB, rdb rueidis.Client, channel string) int64 {
	t.Helper()
	return testkit.Subscribers(t, rdb, channel)
}
