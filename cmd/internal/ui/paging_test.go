package ui_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// countingRedis counts the calls made through it.
type countingRedis struct {
	rueidis.Client
	n atomic.Int64
}

func (c *countingRedis) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *countingRedis) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.DoMulti(ctx, cmds...)
}

var rowQueueRE = regexp.MustCompile(`<tr data-queue="([^"]+)">`)

// TestPagesAcrossQueuesArePaged: with 2,500 queues, the overview and the
// fleet, locks and periodic pages each read and show a page of at most
// 100 queues, in Redis calls that do not grow with the number of queues,
// and their Next links visit every queue once. (Before, each load read
// every queue: /ui/fleet took 125,000 calls at 40,000 queues, refreshed
// every 5 s.)
func TestPagesAcrossQueuesArePaged(t *testing.T) {
	t.Parallel()
	calls := &countingRedis{Client: testkit.Single(t)}
	b := setup(t, config{rdb: calls})
	names := make([]string, 2500)
	for i := range names {
		names[i] = fmt.Sprintf("q-%04d", i)
	}
	testkit.Do(t, calls.Client, calls.Client.B().Sadd().Key(rediskeys.QueuesKey(b.prefix)).Member(names...).Build())
	br := b.login(adminSecret)

	// Redis calls per queue of a page, as the library makes them today:
	// stats, fleet and history on the overview, the fleet on the locks
	// page; a page may cost 100 of them plus a few of its own.
	cost := func(read func(ctx context.Context, q string) error) int64 {
		before := calls.n.Load()
		if err := read(t.Context(), "q-0000"); err != nil {
			t.Fatal(err)
		}
		return calls.n.Load() - before
	}
	fleet := cost(func(ctx context.Context, q string) error { _, err := b.client.Fleet(ctx, q); return err })
	stats := cost(func(ctx context.Context, q string) error { _, err := b.client.Stats(ctx, q); return err })
	history := cost(func(ctx context.Context, q string) error {
		_, err := b.client.History(ctx, q, time.Now().Add(-time.Hour), time.Now())
		return err
	})
	periodic := cost(func(ctx context.Context, q string) error { _, err := b.client.Periodic(ctx, q); return err })
	perQueue := map[string]int64{"/ui/": fleet + stats + history, "/ui/locks": fleet, "/ui/fleet": fleet, "/ui/periodic": periodic}
	for _, path := range []string{"/ui/", "/ui/locks"} {
		var seen []string
		next, pages := path, 0
		for next != "" {
			before := calls.n.Load()
			p := br.get(next).want(t, http.StatusOK)
			if n := calls.n.Load() - before; n > 100*perQueue[path]+20 {
				t.Fatalf("%s took %d Redis calls for a page of at most 100 queues", next, n)
			}
			rows := rowQueueRE.FindAllStringSubmatch(p.body, -1)
			if len(rows) > 100 {
				t.Fatalf("%s shows %d queues, want at most 100", next, len(rows))
			}
			for _, m := range rows {
				seen = append(seen, m[1])
			}
			next = ""
			if m := nextRE.FindStringSubmatch(p.body); m != nil {
				next = html.UnescapeString(m[1])
			}
			pages++
		}
		slices.Sort(seen)
		if !slices.Equal(seen, names) {
			t.Errorf("%s: %d queues over %d pages, want each of %d once", path, len(seen), pages, len(names))
		}
	}
	for _, path := range []string{"/ui/fleet", "/ui/periodic"} {
		before := calls.n.Load()
		p := br.get(path).want(t, http.StatusOK, `id="next-page"`)
		if n := calls.n.Load() - before; n > 100*perQueue[path]+20 {
			t.Errorf("%s took %d Redis calls for a page of at most 100 queues", path, n)
		}
		if !strings.Contains(p.body, "?cursor=") {
			t.Errorf("%s has no link to its next page", path)
		}
	}
	br.get("/ui/?cursor=garbage!").want(t, http.StatusBadRequest, "cursor is not valid")
}
