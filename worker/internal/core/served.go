package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// servedFresh is how long a Served remembers that daemons served a queue
// (store.Served) before it reads the record again. Check never remembers
// a miss, so a queue or kind served since is seen at once; Warn remembers
// one for missFresh, so that a producer sending to a queue no daemon
// serves yet (a bench, a queue whose consumers are still rolling out) pays
// its read once every missFresh, not on every call.
const (
	servedFresh = 30 * time.Second
	missFresh   = 5 * time.Second
	// maxSeen bounds what a Served remembers: producers may name any
	// queue. Past it, the entries no longer fresh go.
	maxSeen = 1000
)

// Served answers whether daemons ever served the queues and kinds a
// producer enqueues to (store.ServedKey), for the operator's warning and
// worker.Config.RefuseUnserved: one HMGET per call for the queues it does
// not remember, none for those it does.
type Served struct {
	st  *store.Store
	now func() time.Time

	mu   sync.Mutex
	seen map[string]servedAt // queue → its record, while fresh
}

type servedAt struct {
	rec   store.Served
	found bool // a daemon served the queue
	at    time.Time
}

// knows reports whether e answers for kind at now without a read.
func (e servedAt) knows(kind string, now time.Time, trustMisses bool) bool {
	age := now.Sub(e.at)
	return e.found && e.rec.Serves(kind) && age < servedFresh || trustMisses && age < missFresh
}

// NewServed returns a Served that reads through st.
func NewServed(st *store.Store) *Served {
	return &Served{st: st, now: time.Now, seen: make(map[string]servedAt)}
}

// Check returns, for the jobs of queues[i] of kinds[i], "" when a daemon
// ever served that queue and kind, else a sentence saying what no daemon
// served: for a refusal (worker.Config.RefuseUnserved), so a miss is
// always read afresh.
func (s *Served) Check(ctx context.Context, queues, kinds []string) ([]string, error) {
	return s.check(ctx, queues, kinds, false)
}

// Warn is Check for a warning (admin.Client.Enqueue): a miss read within
// missFresh is trusted.
func (s *Served) Warn(ctx context.Context, queues, kinds []string) ([]string, error) {
	return s.check(ctx, queues, kinds, true)
}

func (s *Served) check(ctx context.Context, queues, kinds []string, trustMisses bool) ([]string, error) {
	out := make([]string, len(queues))
	now := s.now()
	var read []string
	s.mu.Lock()
	for i, q := range queues {
		if e, ok := s.seen[q]; (!ok || !e.knows(kinds[i], now, trustMisses)) && !slices.Contains(read, q) {
			read = append(read, q)
		}
	}
	s.mu.Unlock()
	recs, found, err := s.st.ServedOf(ctx, read)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range read {
		s.seen[q] = servedAt{recs[i], found[i], now}
	}
	if len(s.seen) > maxSeen {
		for q, e := range s.seen {
			if now.Sub(e.at) >= servedFresh || !e.found {
				delete(s.seen, q)
			}
		}
	}
	for i, q := range queues {
		e := s.seen[q]
		switch {
		case !e.found:
			out[i] = fmt.Sprintf("no daemon has ever served queue %q", q)
		case !e.rec.Serves(kinds[i]):
			out[i] = fmt.Sprintf("no daemon has ever served %s of queue %q (kinds served: %s)", kindName(kinds[i]), q, kindList(e.rec.Kinds))
		}
	}
	return out, nil
}

// Forget drops what s remembers of queue: it was forgotten.
func (s *Served) Forget(queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, queue)
}

// kindName names a kind in a sentence.
func kindName(kind string) string {
	if kind == "" {
		return "jobs without a kind"
	}
	return "kind " + strconv.Quote(kind)
}

// kindList lists kinds for a sentence, "" as (none).
func kindList(kinds []string) string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k
		if k == "" {
			out[i] = "(none)"
		}
	}
	return strings.Join(out, ", ")
}
