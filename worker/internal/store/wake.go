package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"
)

// Subscribe listens for wake-ups of the given queues until ctx ends or the
// subscription breaks. onWake gets the queue and the run-at of the job that
// became the earliest due one. onSubscribed runs each time the subscription
// is (re)established: messages sent while disconnected are lost, so the
// caller should look for due jobs then. Subscribe returns ctx's error when ctx
// ends, else the error that broke the subscription; callers loop.
func (s *Store) Subscribe(ctx context.Context, queues []string, onWake func(queue string, runAtMs int64), onSubscribed func()) error {
	byChannel := make(map[string]string, len(queues))
	channels := make([]string, 0, len(queues))
	for _, q := range queues {
		ch := s.Keys(q).Wake
		byChannel[ch] = q
		channels = append(channels, ch)
	}
	hookCtx := rueidis.WithOnSubscriptionHook(ctx, func(sub rueidis.PubSubSubscription) {
		if sub.Kind == "subscribe" && onSubscribed != nil {
			onSubscribed()
		}
	})
	err := s.c.Receive(hookCtx, s.c.B().Subscribe().Channel(channels...).Build(), func(m rueidis.PubSubMessage) {
		q, ok := byChannel[m.Channel]
		if !ok {
			return
		}
		at, err := strconv.ParseInt(m.Message, 10, 64)
		if err != nil {
			at = 0 // unknown run-at: treat as due now
		}
		onWake(q, at)
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("subscribe to wake-ups: %w", err)
	}
	return nil
}
