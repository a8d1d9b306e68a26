package api

import (
	"fmt"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// A producer token without a queue list may enqueue to any queue name,
// and an enqueue to a new name creates the queue: listed, sampled, led.
// Options.MaxQueues bounds what such tokens create: their enqueue to a
// queue that does not exist is refused once the set of queues holds
// MaxQueues names. A queue that exists is never refused; admin tokens,
// and producers limited to their queues (their list bounds them), are not
// counted against. Enqueues in flight at the same moment may each pass
// the check, so the set may pass the cap by that many.

// knownTTL is how long an existing queue is remembered, so that a
// producer's enqueues to it cost no extra Redis call; a queue forgotten
// meanwhile (the leader forgets unused queues) is created again, within
// the cap's slack.
const knownTTL = time.Minute

// maxKnown bounds the queues remembered; past it the memory starts over.
const maxKnown = 10_000

// knownQueues are the queues seen to exist, each until a time.
type knownQueues struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func (k *knownQueues) has(queue string, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return now.Before(k.until[queue])
}

func (k *knownQueues) add(queue string, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.until == nil || len(k.until) >= maxKnown {
		k.until = make(map[string]time.Time)
	}
	k.until[queue] = now.Add(knownTTL)
}

// mayCreate refuses c's enqueue to queue when c's token is a producer
// without a queue list, the queue does not exist and the set of queues
// holds Options.MaxQueues: 403 naming the cap.
func (h *Handler) mayCreate(c *call, queue string) error {
	if h.opts.MaxQueues <= 0 || c.ident.role != RoleProducer || c.ident.queues != nil || h.known.has(queue, c.now) {
		return nil
	}
	page, err := c.backend.Queues(c.ctx, admin.QueueListParams{Only: []string{queue}, Limit: 1})
	if err != nil {
		return err
	}
	if len(page.Names) == 0 {
		counter, ok := c.backend.(QueueCounter)
		if !ok {
			return fmt.Errorf("api: Options.MaxQueues is set, but the backend %T cannot count queues (QueueCounter)", c.backend)
		}
		n, err := counter.QueueCount(c.ctx)
		if err != nil {
			return err
		}
		if n >= int64(h.opts.MaxQueues) {
			return apiError(wire.CodeForbidden, "queue", fmt.Sprintf(
				"queue %q does not exist, and there are %d queues: a producer token may not create queues past the cap of %d "+
					"(admin.max_queues); enqueue to an existing queue, or ask an admin to raise the cap or forget unused queues",
				queue, n, h.opts.MaxQueues))
		}
		return nil // created by this enqueue; remembered from the next one
	}
	h.known.add(queue, c.now)
	return nil
}
