package admin_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
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

// countingClient counts the round trips to Redis.
type countingClient struct {
	rueidis.Client
	n atomic.Int64
}

func (c *countingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *countingClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.DoMulti(ctx, cmds...)
}

// TestQueuesPage: paging through the set visits every queue once, each
// page at most limit names in at most 8 SSCAN calls, on single
// Redis and on a Cluster; a token's own list pages by name, keeping the
// queues that exist; a cursor of another listing, or garbage, is refused.
func TestQueuesPage(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			calls := &countingClient{Client: rdb(t)}
			set := workertest.NewClient(t, calls, worker.Config{Prefix: prefix})
			all := addQueues(t, calls.Client, prefix, 1500)
			for _, limit := range []int{1, 7, 100} {
				var seen []string
				cursor, pages := "", 0
				for {
					before := calls.n.Load()
					page, err := set.Queues(t.Context(), admin.QueueListParams{Only: nil, Cursor: cursor, Limit: limit})
					if err != nil {
						t.Fatal(err)
					}
					if n := calls.n.Load() - before; n > 8 {
						t.Fatalf("limit %d: a page took %d Redis calls, want at most 8", limit, n)
					}
					if len(page.Names) > limit || !slices.IsSorted(page.Names) {
						t.Fatalf("limit %d: page %v", limit, page.Names)
					}
					seen = append(seen, page.Names...)
					if pages++; page.Next == "" {
						break
					}
					cursor = page.Next
				}
				slices.Sort(seen)
				if !slices.Equal(seen, all) {
					t.Errorf("limit %d: %d names seen over %d pages, want each of %d once", limit, len(seen), pages, len(all))
				}
			}

			own := []string{"q-0001", "q-0002", "q-0003", "zz-none"}
			page, err := set.Queues(t.Context(), admin.QueueListParams{Only: own, Cursor: "", Limit: 2})
			if err != nil || !slices.Equal(page.Names, []string{"q-0001", "q-0002"}) || page.Next == "" {
				t.Fatalf("own list, first page: %+v, %v", page, err)
			}
			page, err = set.Queues(t.Context(), admin.QueueListParams{Only: own, Cursor: page.Next, Limit: 2})
			if err != nil || !slices.Equal(page.Names, []string{"q-0003"}) || page.Next != "" {
				t.Fatalf("own list, second page (zz-none does not exist): %+v, %v", page, err)
			}

			first, _ := set.Queues(t.Context(), admin.QueueListParams{Only: nil, Cursor: "", Limit: 5})
			for _, tc := range []struct {
				only   []string
				cursor string
			}{
				{nil, "garbage!"},
				{nil, "bm9wZQ"}, // "nope"
				{own, first.Next},
				{nil, base64.RawURLEncoding.EncodeToString([]byte("o:q-0001"))},
			} {
				var ve *worker.ValidationError
				if _, err := set.Queues(t.Context(), admin.QueueListParams{Only: tc.only, Cursor: tc.cursor, Limit: 5}); !errors.As(err, &ve) || ve.Field != "Cursor" {
					t.Errorf("cursor %q (own list %v): %v, want a bad Cursor", tc.cursor, tc.only != nil, err)
				}
			}
		})
	}
}
