package limiter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// unsubscribeTimeout bounds the UNSUBSCRIBE sent when a waiter group ends.
const unsubscribeTimeout = 5 * time.Second

// redisBackend runs the limiter scripts (limiter_acquire, limiter_extend,
// limiter_release, limiter_take, declared in the script layer) on a single
// Redis or a Redis Cluster alike: every script touches one key, and the
// channel, which shares the key's hash tag, travels in ARGV.
type redisBackend struct {
	c script.Conn
	// plain is set once the server refused SSUBSCRIBE (Redis 6, the
	// embedded store of courier dev): its scripts PUBLISH (record.lua's
	// announce), and waiters SUBSCRIBE.
	plain *atomic.Bool
}

var _ backend = redisBackend{}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func (r redisBackend) acquire(ctx context.Context, key, holder string, max int, lease time.Duration) (reply, error) {
	v, err := script.LimiterAcquire.Exec(ctx, r.c, []string{key}, []string{strconv.Itoa(max), ms(lease), holder}).AsIntSlice()
	if err != nil {
		return reply{}, err
	}
	return decodeReply(v)
}

func (r redisBackend) extend(ctx context.Context, key, holder string, lease time.Duration) (bool, error) {
	v, err := script.LimiterExtend.Exec(ctx, r.c, []string{key}, []string{ms(lease), holder}).AsIntSlice()
	if err != nil {
		return false, err
	}
	if len(v) != 3 {
		return false, fmt.Errorf("unexpected limiter_extend reply %v", v)
	}
	return v[0] == 1, nil
}

func (r redisBackend) release(ctx context.Context, key, channel, holder string) (bool, error) {
	n, err := script.LimiterRelease.Exec(ctx, r.c, []string{key}, []string{channel, holder}).AsInt64()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

func (r redisBackend) take(ctx context.Context, key string, n int, per time.Duration, k int) (reply, error) {
	v, err := script.LimiterTake.Exec(ctx, r.c, []string{key}, []string{strconv.Itoa(n), ms(per), strconv.Itoa(k)}).AsIntSlice()
	if err != nil {
		return reply{}, err
	}
	return decodeReply(v)
}

// decodeReply reads {taken, now_ms, at_ms, n}.
func decodeReply(v []int64) (reply, error) {
	if len(v) != 4 {
		return reply{}, fmt.Errorf("unexpected reply %v", v)
	}
	return reply{ok: v[0] == 1, at: localTime(v[1], v[2]), n: int(v[3])}, nil
}

// subscribe listens on channel with SSUBSCRIBE, as the release script
// announces with SPUBLISH, or SUBSCRIBE on a server without sharded
// pub/sub.
func (r redisBackend) subscribe(ctx context.Context, channel string, onSubscribed, onMessage func()) error {
	if !r.plain.Load() {
		err := r.receive(ctx, true, channel, onSubscribed, onMessage)
		if !isUnknownCommand(err) || ctx.Err() != nil {
			return err
		}
		r.plain.Store(true)
	}
	return r.receive(ctx, false, channel, onSubscribed, onMessage)
}

func (r redisBackend) receive(ctx context.Context, sharded bool, channel string, onSubscribed, onMessage func()) error {
	kind, sub := "subscribe", r.c.B().Subscribe().Channel(channel).Build()
	if sharded {
		kind, sub = "ssubscribe", r.c.B().Ssubscribe().Channel(channel).Build()
	}
	hooked := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
		if s.Kind == kind && s.Channel == channel {
			onSubscribed()
		}
	})
	// Receive does not unsubscribe when its context ends; without this the
	// shared connection would stay subscribed to every limit ever waited on.
	hooked = rueidis.WithOnReceiveReturnHook(hooked, func(err error, cc rueidis.CommandClient) error {
		if ctx.Err() != nil {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unsubscribeTimeout)
			defer cancel()
			unsub := cc.B().Unsubscribe().Channel(channel).Build()
			if sharded {
				unsub = cc.B().Sunsubscribe().Channel(channel).Build()
			}
			_ = cc.Do(uctx, unsub).Error() // best effort: a broken connection drops it anyway
		}
		return err
	})
	return r.c.Receive(hooked, sub, func(rueidis.PubSubMessage) { onMessage() })
}

// isUnknownCommand reports whether err is the server's answer to a command
// it does not know.
func isUnknownCommand(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.Contains(strings.ToLower(re.Error()), "unknown command")
}
