package lock

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// unlockMessage is what the release script publishes: Redisson's
// LockPubSub.UNLOCK_MESSAGE.
const unlockMessage = "0"

// unsubscribeTimeout bounds the UNSUBSCRIBE sent when a waiter group ends.
const unsubscribeTimeout = 5 * time.Second

// Channel returns the pub/sub channel on which the lock name's unlock
// message is published, by Redisson's rule: redisson_lock__channel:{name},
// or redisson_lock__channel:name when name already contains a '{' (so the
// channel keeps the name's own hash tag).
func Channel(name string) string {
	if strings.Contains(name, "{") {
		return "redisson_lock__channel:" + name
	}
	return "redisson_lock__channel:{" + name + "}"
}

// redisBackend runs the lock scripts (lock_acquire, lock_release,
// lock_renew, declared in the script layer) on a single Redis or a Redis
// Cluster alike: every script touches one key, and the channel travels in
// ARGV.
type redisBackend struct {
	c script.Conn
}

var _ backend = redisBackend{}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func (r redisBackend) acquire(ctx context.Context, name, field string, lease time.Duration) (bool, time.Duration, error) {
	ttl, err := script.LockAcquire.Exec(ctx, r.c, []string{name}, []string{ms(lease), field}).AsInt64()
	if rueidis.IsRedisNil(err) {
		return true, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	return false, time.Duration(ttl) * time.Millisecond, nil
}

func (r redisBackend) release(ctx context.Context, name, channel, field string, lease time.Duration) (releaseResult, error) {
	n, err := script.LockRelease.Exec(ctx, r.c, []string{name}, []string{channel, unlockMessage, ms(lease), field}).AsInt64()
	switch {
	case rueidis.IsRedisNil(err):
		return releaseNotHeld, nil
	case err != nil:
		return 0, err
	case n == 0:
		return releaseDecremented, nil
	case n == 1:
		return releaseDeleted, nil
	}
	return 0, fmt.Errorf("unexpected release reply %d", n)
}

// renew sends every renewal in one round trip (EVALSHA in one DoMulti,
// EVAL for a node that has not cached the script).
func (r redisBackend) renew(ctx context.Context, lease time.Duration, locks []lockRef) []renewResult {
	leaseArg := ms(lease)
	calls := make([]script.Call, len(locks))
	for i, l := range locks {
		calls[i] = script.Call{Keys: []string{l.name}, Args: []string{leaseArg, l.field}}
	}
	out := make([]renewResult, len(locks))
	for i, res := range script.LockRenew.ExecMulti(ctx, r.c, calls...) {
		n, err := res.AsInt64()
		out[i] = renewResult{held: err == nil && n == 1, err: err}
	}
	return out
}

func (r redisBackend) subscribe(ctx context.Context, channel string, onSubscribed, onMessage func()) error {
	hooked := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == "subscribe" && s.Channel == channel {
			onSubscribed()
		}
	})
	// Receive does not unsubscribe when its context ends; without this the
	// shared connection would stay subscribed to every lock ever waited on.
	hooked = rueidis.WithOnReceiveReturnHook(hooked, func(err error, cc rueidis.CommandClient) error {
		if ctx.Err() != nil {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unsubscribeTimeout)
			defer cancel()
			_ = cc.Do(uctx, cc.B().Unsubscribe().Channel(channel).Build()).Error() // best effort: a broken connection drops it anyway
		}
		return err
	})
	return r.c.Receive(hooked, r.c.B().Subscribe().Channel(channel).Build(), func(rueidis.PubSubMessage) { onMessage() })
}
