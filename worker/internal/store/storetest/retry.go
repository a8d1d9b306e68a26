package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Retry is retry.lua with to = due.
func (f *Fake) Retry(_ context.Context, queue string, tok store.Token, delay time.Duration, errText string) (bool, error) {
	return f.move("Retry", queue, tok, store.SetDue, delay, errText)
}

// Kill is retry.lua with to = dead.
func (f *Fake) Kill(_ context.Context, queue string, tok store.Token, errText string) (bool, error) {
	return f.move("Kill", queue, tok, store.SetDead, 0, errText)
}

func (f *Fake) move(method, queue string, tok store.Token, to store.Set, delay time.Duration, errText string) (bool, error) {
	f.sleep(method)
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := Call{Method: method, Queue: queue, At: time.Now(), Toks: []store.Token{tok}, Delay: delay, ErrText: errText}
	if delay.Milliseconds() < 0 {
		f.t.Errorf("fake: %s(%s, delay=%v): the script rejects this", method, queue, delay)
	}
	if f.downLocked(&c, fmt.Sprintf("move %s job %q to %s", queue, tok.ID, to)) {
		return false, c.Err
	}
	j := f.heldLocked(queue, tok)
	if j == nil {
		f.record(c)
		return false, nil
	}
	j.Rec.LastError = errText
	if to == store.SetDead {
		j.leave(store.SetDead, ms(now))
	} else {
		prev, hadPrev := f.headLocked(queue)
		j.leave(store.SetDue, after(now, delay))
		f.publishLocked(queue, prev, hadPrev, j.Score)
	}
	c.Got = 1
	f.record(c)
	return true, nil
}
