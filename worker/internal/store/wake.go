package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/rueidis"
)

// Subscribe listens for wake-ups of the given queues until ctx ends or a
// subscription breaks. onWake gets the queue and the run-at of the job that
// became the earliest due one. onSubscribed runs each time a subscription
// is (re)established: messages sent while disconnected are lost, so the
// caller should look for due jobs then. Pause and Resume publish on the
// same channel: a resume the Redis clock (jobs may be due now), a pause
// PausedMessage, which reaches onWake as run-at 0. Cancel publishes there
// too (cancelOf): onCancel (may be nil) gets the queue and the token of
// the run cancelled (Claim 0 from a version that named no claim: any run
// of the id), whichever process holds it. Subscribe returns ctx's error when ctx
// ends, else the error that broke the subscription; callers loop.
//
// Wake-ups travel on sharded pub/sub (SSUBSCRIBE, Redis 7), as the scripts
// send them (lua/record.lua's wake): on a Cluster each queue's channel is
// subscribed on the node that serves its slot, one subscription per queue,
// and no other node carries its messages. A server that does not know
// SSUBSCRIBE (Redis 6, the embedded store of courier dev) gets SUBSCRIBE,
// as its scripts PUBLISH.
func (s *Store) Subscribe(ctx context.Context, queues []string, onWake func(queue string, runAtMs int64), onCancel func(queue string, tok Token), onSubscribed func()) error {
	byChannel := make(map[string]string, len(queues))
	channels := make([]string, 0, len(queues))
	for _, q := range queues {
		ch := s.Keys(q).Wake
		byChannel[ch] = q
		channels = append(channels, ch)
	}
	deliver := func(m rueidis.PubSubMessage) {
		q, ok := byChannel[m.Channel]
		if !ok {
			return
		}
		if tok, ok := cancelOf(m.Message); ok {
			if onCancel != nil {
				onCancel(q, tok)
			}
			return
		}
		at, err := strconv.ParseInt(m.Message, 10, 64)
		if err != nil {
			at = 0 // unknown run-at: treat as due now
		}
		onWake(q, at)
	}
	var err error
	if s.plainPubSub.Load() {
		err = s.receive(ctx, false, channels, deliver, onSubscribed)
	} else {
		err = s.receiveSharded(ctx, channels, deliver, onSubscribed)
		if isUnknownCommand(err) && ctx.Err() == nil {
			s.plainPubSub.Store(true)
			err = s.receive(ctx, false, channels, deliver, onSubscribed)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("subscribe to wake-ups: %w", err)
	}
	return nil
}

// receiveSharded subscribes to channels with SSUBSCRIBE: on a Cluster one
// subscription per channel (each on its slot's node), all ended when one
// breaks; else one for all.
func (s *Store) receiveSharded(ctx context.Context, channels []string, deliver func(rueidis.PubSubMessage), onSubscribed func()) error {
	if !s.c.Cluster() || len(channels) == 1 {
		return s.receive(ctx, true, channels, deliver, onSubscribed)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		mu    sync.Mutex // deliver and onSubscribed are called from one goroutine at a time
	)
	serial := func(m rueidis.PubSubMessage) { mu.Lock(); defer mu.Unlock(); deliver(m) }
	var subscribed func()
	if onSubscribed != nil {
		subscribed = func() { mu.Lock(); defer mu.Unlock(); onSubscribed() }
	}
	for _, ch := range channels {
		wg.Go(func() {
			err := s.receive(ctx, true, []string{ch}, serial, subscribed)
			once.Do(func() { first = err })
			cancel()
		})
	}
	wg.Wait()
	return first
}

// receive runs one subscription to channels, sharded or not.
func (s *Store) receive(ctx context.Context, sharded bool, channels []string, deliver func(rueidis.PubSubMessage), onSubscribed func()) error {
	kind, cmd := "subscribe", s.c.B().Subscribe().Channel(channels...).Build()
	if sharded {
		kind, cmd = "ssubscribe", s.c.B().Ssubscribe().Channel(channels...).Build()
	}
	hookCtx := rueidis.WithOnSubscriptionHook(ctx, func(sub rueidis.PubSubSubscription) {
		if sub.Kind == kind && onSubscribed != nil {
			onSubscribed()
		}
	})
	return s.c.Receive(hookCtx, cmd, deliver)
}

// isUnknownCommand reports whether err is the server's answer to a command
// it does not know.
func isUnknownCommand(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.Contains(strings.ToLower(re.Error()), "unknown command")
}
