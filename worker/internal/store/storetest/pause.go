package storetest

import (
	"context"
	"time"
)

// Pause is queue_set.lua pausing queue, recorded as "Pause": claims of a
// paused queue take nothing and report Claimed.Paused. A change publishes
// a message that reaches onWake as run-at 0, as store.PausedMessage does.
func (f *Fake) Pause(_ context.Context, queue string) (bool, error) {
	return f.setPaused("Pause", queue, true)
}

// Resume is queue_set.lua resuming queue, recorded as "Resume". A change
// publishes a wake-up at the Redis clock.
func (f *Fake) Resume(_ context.Context, queue string) (bool, error) {
	return f.setPaused("Resume", queue, false)
}

// Paused reports whether queue is paused, recorded as "Paused".
func (f *Fake) Paused(_ context.Context, queue string) (bool, error) {
	f.sleep("Paused")
	f.mu.Lock()
	defer f.mu.Unlock()
	c := Call{Method: "Paused", Queue: queue, At: time.Now()}
	if f.downLocked(&c, "paused "+queue) {
		return false, c.Err
	}
	f.record(c)
	return f.paused[queue], nil
}

func (f *Fake) setPaused(method, queue string, on bool) (bool, error) {
	f.sleep(method)
	f.mu.Lock()
	defer f.unlock()
	c := Call{Method: method, Queue: queue, At: time.Now()}
	what := "resume " + queue // as store's wrappers word it
	if on {
		what = "pause " + queue
	}
	if f.downLocked(&c, what) {
		return false, c.Err
	}
	changed := f.paused[queue] != on
	if changed {
		if f.paused == nil {
			f.paused = make(map[string]bool)
		}
		f.paused[queue] = on
		at := int64(0) // "paused" is not a time
		if !on {
			at = ms(f.nowLocked()).UnixMilli()
		}
		if f.subscribed[queue] {
			f.outbox = append(f.outbox, wakeMsg{queue: queue, at: at})
		}
		c.Got = 1
	}
	f.record(c)
	return changed, nil
}
