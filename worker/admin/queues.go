package admin

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/worker"
)

// QueuePage is a page of the known queue names (Client.Queues).
type QueuePage struct {
	// Names are sorted within the page; pages come in the order of the
	// set of queues, not by name.
	Names []string
	// Next is the cursor of the next page; "" after the last.
	Next string
}

// Bounds of QueueListParams.Limit.
const (
	// QueuesPerPageDefault is the page size of Queues when none is asked.
	QueuesPerPageDefault = 100
	// QueuesPerPageMax is the most queues a page holds.
	QueuesPerPageMax = 100
	// scansPerPage bounds the SSCAN calls of one page: a set left sparse
	// by deletions may answer a scan with few names, and the page is then
	// shorter than asked, with a cursor to go on.
	scansPerPage = 8
)

// QueueListParams selects a page of the known queues (Client.Queues),
// for tools that list queues: the CLI, the HTTP API, the web UI.
type QueueListParams struct {
	// Only, when not nil, limits the listing to these queues (sorted: the
	// queues a caller is limited to): the page holds those of them that
	// exist, by name. Nil lists every known queue.
	Only []string
	// Cursor is a previous QueuePage.Next of the same listing; "" starts
	// at the first page.
	Cursor string
	// Limit is the most queues on the page, 1 to QueuesPerPageMax. Default
	// QueuesPerPageDefault.
	Limit int
}

// Queues returns a page of the known queue names: the queues that were
// ever enqueued to or served (rediskeys.QueuesKey), a page at a time, so
// that a listing costs the same at 40,000 queues as at 40. With p.Only,
// the page holds those of them that exist, by name, in one SMISMEMBER;
// otherwise any queue, in the set's order, in at most 8 SSCAN calls of
// about Limit names each (SSCAN's promise: a queue that exists for the
// whole listing is on a page, at least once). A limit out of range or a
// cursor no page of this listing gave is a *worker.ValidationError naming
// "Limit" or "Cursor".
func (c *Client) Queues(ctx context.Context, p QueueListParams) (QueuePage, error) {
	limit := cmp.Or(p.Limit, QueuesPerPageDefault)
	if limit < 1 || limit > QueuesPerPageMax {
		return QueuePage{}, invalid("Limit", "must be 1 to %d, or 0 for %d (got %d)", QueuesPerPageMax, QueuesPerPageDefault, p.Limit)
	}
	own, scan, after, err := parseQueueCursor(p.Cursor)
	switch {
	case err != nil:
		return QueuePage{}, err
	case p.Cursor != "" && own != (p.Only != nil):
		return QueuePage{}, badQueueCursor()
	case p.Only != nil:
		return c.queuesOf(ctx, p.Only, after, limit)
	}
	return c.scanQueues(ctx, scan, after, limit)
}

// QueuesKnown reports, for each name, whether it is a known queue
// (listed by Queues): one SMISMEMBER.
func (c *Client) QueuesKnown(ctx context.Context, names ...string) ([]bool, error) {
	return c.core.St.QueuesKnown(ctx, names...)
}

// QueueCount returns how many queues are known (listed by Queues): one
// SCARD.
func (c *Client) QueueCount(ctx context.Context) (int64, error) { return c.core.St.QueueCount(ctx) }

// queuesOf pages through the sorted names only, after the name after,
// keeping those that are known.
func (c *Client) queuesOf(ctx context.Context, only []string, after string, limit int) (QueuePage, error) {
	i, found := slices.BinarySearch(only, after)
	if found {
		i++
	}
	names := only[i:min(i+limit, len(only))]
	var page QueuePage
	if i+limit < len(only) {
		page.Next = queueCursor(true, 0, names[len(names)-1])
	}
	if len(names) == 0 {
		return page, nil
	}
	known, err := c.core.St.QueuesKnown(ctx, names...)
	if err != nil {
		return QueuePage{}, err
	}
	for j, name := range names {
		if known[j] {
			page.Names = append(page.Names, name)
		}
	}
	return page, nil
}

// scanQueues reads names from SSCAN cursor cur on, skipping those of its
// first batch up to after (the names the previous page took from it).
func (c *Client) scanQueues(ctx context.Context, cur uint64, after string, limit int) (QueuePage, error) {
	var page QueuePage
	for range scansPerPage {
		names, next, err := c.core.St.ScanQueues(ctx, cur, limit)
		if err != nil {
			return QueuePage{}, err
		}
		batch := slices.Compact(slices.Sorted(slices.Values(names)))
		if after != "" {
			i, found := slices.BinarySearch(batch, after)
			if found {
				i++
			}
			batch, after = batch[i:], ""
		}
		if room := limit - len(page.Names); len(batch) > room {
			// The page ends inside this batch: the next page scans the
			// same cursor again and goes on after the last name taken.
			page.Names = append(page.Names, batch[:room]...)
			page.Next = queueCursor(false, cur, batch[room-1])
			break
		}
		page.Names = append(page.Names, batch...)
		if cur = next; cur == 0 {
			break
		}
		if len(page.Names) == limit {
			page.Next = queueCursor(false, cur, "")
			break
		}
	}
	if page.Next == "" && cur != 0 {
		page.Next = queueCursor(false, cur, "")
	}
	slices.Sort(page.Names)
	page.Names = slices.Compact(page.Names)
	return page, nil
}

// badQueueCursor is the error of a cursor no page of a listing of queues
// gave.
func badQueueCursor() error {
	return invalid("Cursor", "is not a cursor of this listing of queues; start from the first page")
}

// queueCursor returns the cursor of a listing of queues (see cursor.go):
// of a caller's own queues, or of every queue from SSCAN cursor scan on,
// after the name after.
func queueCursor(own bool, scan uint64, after string) string {
	if own {
		return encodeCursor("o:" + after)
	}
	return encodeCursor("q:" + strconv.FormatUint(scan, 10) + ":" + after)
}

// parseQueueCursor undoes queueCursor; "" is the start.
func parseQueueCursor(s string) (own bool, scan uint64, after string, err error) {
	if s == "" {
		return false, 0, "", nil
	}
	text, ok := decodeCursor(s)
	if !ok {
		return false, 0, "", badQueueCursor()
	}
	if after, own = strings.CutPrefix(text, "o:"); !own {
		rest, isScan := strings.CutPrefix(text, "q:")
		num, name, found := strings.Cut(rest, ":")
		if scan, err = strconv.ParseUint(num, 10, 64); !isScan || !found || err != nil {
			return false, 0, "", badQueueCursor()
		}
		after = name
	}
	if after != "" && worker.ValidateQueueName(after) != nil {
		return false, 0, "", badQueueCursor()
	}
	return own, scan, after, nil
}
