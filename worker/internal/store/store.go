package store

import (
	"strconv"
	"sync/atomic"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// MaxBatch is the most jobs one script call handles; larger batches are
// split into several calls.
const MaxBatch = 1000

// Store runs Courier's scripts against one Redis deployment under one prefix.
type Store struct {
	c      script.Conn
	prefix string
	// plainPubSub is set once the server refused SSUBSCRIBE as unknown
	// (Redis 6, the embedded store): wake-ups use PUBLISH there (wake.go).
	plainPubSub *atomic.Bool
}

// New returns a Store that runs the scripts on rdb under key prefix,
// recording every call in m (nil: no metrics), whose script series it
// creates at zero.
func New(rdb rueidis.Client, prefix string, m *metrics.Redis) *Store {
	m.Touch(script.Names()...)
	return &Store{c: script.NewConn(rdb, m), prefix: prefix, plainPubSub: new(atomic.Bool)}
}

// Keys returns the keys of queue.
func (s *Store) Keys(queue string) Keys { return QueueKeys(s.prefix, queue) }

// tokenArgs appends id, claim pairs to args.
func tokenArgs(args []string, toks []Token) []string {
	for _, t := range toks {
		args = append(args, t.ID, strconv.FormatInt(t.Claim, 10))
	}
	return args
}

// reportArgs appends to args the number of reports, the id/claim pairs of
// the tokens of items, then the position (1-based, into the pairs) and
// value of each item's report, for the items whose report is ok: the ARGV
// tail of extend.lua (progress) and complete.lua (results).
func reportArgs[T any](args []string, items []T, token func(T) Token, report func(T) (string, bool)) []string {
	m := len(args)
	args = append(args, "")
	var reports []string
	for i, it := range items {
		t := token(it)
		args = append(args, t.ID, strconv.FormatInt(t.Claim, 10))
		if v, ok := report(it); ok {
			reports = append(reports, strconv.Itoa(i+1), v)
		}
	}
	args[m] = strconv.Itoa(len(reports) / 2)
	return append(args, reports...)
}
