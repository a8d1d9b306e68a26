package api

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// addQueues records n queue names q-0000… in the set under prefix, as
// enqueues would, in one call.
func addQueues(t *testing.T, rdb rueidis.Client, prefix string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("q-%04d", i)
	}
	testkit.Do(t, rdb, rdb.B().Sadd().Key(rediskeys.QueuesKey(prefix)).Member(names...).Build())
	return names
}

// TestListQueuesPaged: GET /v1/queues answers a page of at most limit
// queues with a next_cursor, whose Redis calls do not grow with the
// number of queues; following the cursors lists each queue once. (Before
// paging it read every queue: 640,000 Redis calls at 40,000 queues.)
func TestListQueuesPaged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	all := addQueues(t, b.rdb, b.prefix, 3000)

	// The calls of one queue's view, to bound a page by.
	before := b.calls.n.Load()
	b.want(b.do("GET", "/v1/queues/q-0000", adminSecret, ""), 200)
	perQueue := b.calls.n.Load() - before

	var seen []string
	path, pages := "/v1/queues?limit=50", 0
	for {
		before := b.calls.n.Load()
		var out struct {
			Queues     []wire.Queue
			NextCursor *string `json:"next_cursor"`
		}
		b.want(b.do("GET", path, adminSecret, ""), 200).json(t, &out)
		if n, most := b.calls.n.Load()-before, 50*perQueue+8; n > most { // 8: the SSCAN calls of a page
			t.Fatalf("a page of 50 queues took %d Redis calls; want at most %d (%d per queue)", n, most, perQueue)
		}
		if len(out.Queues) > 50 {
			t.Fatalf("a page of %d queues, limit 50", len(out.Queues))
		}
		for _, q := range out.Queues {
			seen = append(seen, q.Name)
		}
		if pages++; out.NextCursor == nil {
			break
		}
		path = "/v1/queues?" + url.Values{"limit": {"50"}, "cursor": {*out.NextCursor}}.Encode()
	}
	slices.Sort(seen)
	if !slices.Equal(seen, all) {
		t.Errorf("%d queues over %d pages; want each of %d once", len(seen), pages, len(all))
	}

	for _, bad := range []string{"limit=0", "limit=101", "limit=x", "cursor=garbage!"} {
		r := b.want(b.do("GET", "/v1/queues?"+bad, adminSecret, ""), 400)
		if e := r.apiErr(t); e.Code != wire.CodeInvalidField {
			t.Errorf("%s: %+v", bad, e)
		}
	}
	var def struct{ Queues []wire.Queue }
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 200).json(t, &def)
	if len(def.Queues) != admin.QueuesPerPageDefault {
		t.Errorf("a page without limit holds %d queues, want %d", len(def.Queues), admin.QueuesPerPageDefault)
	}
}

// TestProducerQueueCap: a producer token without a queue list creates
// queues by enqueueing until MaxQueues exist; then its enqueue (single or
// batch) to a new queue is refused with 403 naming the cap, while queues
// that exist are never refused, and admins and producers limited to
// their queues are not capped.
func TestProducerQueueCap(t *testing.T) {
	t.Parallel()
	const limitedSecret = "limited-producer-0123456789"
	b := setup(t, func(o *Options) {
		o.MaxQueues = 3
		o.Tokens = append(o.Tokens, Token{Name: "billing", Secret: limitedSecret, Role: RoleProducer, Queues: []string{"billing"}})
	})
	for _, q := range []string{"a", "b", "c"} {
		b.want(b.do("POST", "/v1/queues/"+q+"/jobs", producerSecret, `{}`), 201)
	}
	before := b.snapshot()
	r := b.want(b.do("POST", "/v1/queues/d/jobs", producerSecret, `{}`), 403)
	if e := r.apiErr(t); e.Field != "queue" || !strings.Contains(e.Message, "admin.max_queues") || !strings.Contains(e.Message, "cap of 3") {
		t.Errorf("refusal %+v: want field queue and a message naming the cap", e)
	}
	b.want(b.do("POST", "/v1/queues/e/jobs/batch", producerSecret, `{"jobs": [{}]}`), 403)
	if !maps.Equal(b.snapshot(), before) {
		t.Error("refused enqueues changed Redis")
	}
	for range 3 { // existing queues: never refused (and remembered)
		b.want(b.do("POST", "/v1/queues/a/jobs", producerSecret, `{}`), 201)
		b.want(b.do("POST", "/v1/queues/b/jobs/batch", producerSecret, `{"jobs": [{}]}`), 200)
	}
	b.want(b.do("POST", "/v1/queues/by-admin/jobs", adminSecret, `{}`), 201)
	b.want(b.do("POST", "/v1/queues/billing/jobs", limitedSecret, `{}`), 201)
	b.want(b.do("POST", "/v1/queues/f/jobs", producerSecret, `{}`), 403)
}
