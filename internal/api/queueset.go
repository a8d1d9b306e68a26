package api

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// QueueSet reads the set of known queue names (worker.QueuesKey) a page
// at a time, never whole, so that a listing costs the same at 40,000
// queues as at 40: the HTTP API's GET /v1/queues and the web UI's pages
// across queues read it, and the cap on queues producers create asks it
// whether a queue exists and how many there are. Plain commands (SSCAN,
// SMISMEMBER, SCARD) through the daemon's client.
type QueueSet struct {
	rdb rueidis.Client
	key string
}

// NewQueueSet returns the QueueSet of the queues under prefix, read
// through rdb.
func NewQueueSet(rdb rueidis.Client, prefix string) *QueueSet {
	return &QueueSet{rdb: rdb, key: worker.QueuesKey(prefix)}
}

// QueuePage is a page of queue names.
type QueuePage struct {
	// Names are sorted within the page; pages come in the set's own
	// order, not by name.
	Names []string
	// Next is the cursor of the next page; "" after the last.
	Next string
}

// Paging bounds.
const (
	// QueuesPerPageDefault is a page's size when none is asked.
	QueuesPerPageDefault = 100
	// QueuesPerPageMax is the most queues a page holds (each costs its
	// reads of stats and fleet).
	QueuesPerPageMax = 100
	// scansPerPage bounds the SSCAN calls of one page: a set left sparse
	// by deletions may answer a scan with few names, and the page is
	// then shorter than asked, with a cursor to go on.
	scansPerPage = 8
)

// ErrBadCursor is returned for a cursor that no page gave.
var ErrBadCursor = errors.New("not a cursor of this listing; start from the first page")

// QueuesPage returns a page of at most limit (1 to QueuesPerPageMax) of
// the queue names, from cursor ("" for the first page). With only set
// (a token limited to those queues, sorted), the page holds those of them
// that exist, by name; otherwise any queue, in the set's order, at most
// scansPerPage SSCAN calls of about limit names each (SSCAN's promise: a
// queue that exists for the whole listing is on a page, at least once).
func (s *QueueSet) QueuesPage(ctx context.Context, only []string, cursor string, limit int) (QueuePage, error) {
	if limit < 1 || limit > QueuesPerPageMax {
		return QueuePage{}, fmt.Errorf("api: queue page limit %d out of 1 to %d", limit, QueuesPerPageMax)
	}
	kind, scan, after, err := decodeQueueCursor(cursor)
	if err != nil {
		return QueuePage{}, err
	}
	if only != nil {
		if kind == 's' {
			return QueuePage{}, ErrBadCursor
		}
		return s.pageOf(ctx, only, after, limit)
	}
	if kind == 'n' {
		return QueuePage{}, ErrBadCursor
	}
	return s.scan(ctx, scan, after, limit)
}

// pageOf pages through the sorted names only, after the name after,
// keeping those in the set: one SMISMEMBER a page.
func (s *QueueSet) pageOf(ctx context.Context, only []string, after string, limit int) (QueuePage, error) {
	i, _ := slices.BinarySearch(only, after)
	if i < len(only) && only[i] == after {
		i++
	}
	names := only[i:min(i+limit, len(only))]
	var page QueuePage
	if i+limit < len(only) {
		page.Next = encodeQueueCursor('n', 0, names[len(names)-1])
	}
	if len(names) == 0 {
		return page, nil
	}
	known, err := s.QueuesKnown(ctx, names...)
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

// scan reads names from SSCAN cursor cur on, skipping those of its first
// batch up to after (the names the previous page took from that batch).
func (s *QueueSet) scan(ctx context.Context, cur uint64, after string, limit int) (QueuePage, error) {
	var page QueuePage
	for range scansPerPage {
		e, err := s.rdb.Do(ctx, s.rdb.B().Sscan().Key(s.key).Cursor(cur).Count(int64(limit)).Build()).AsScanEntry()
		if err != nil {
			return QueuePage{}, fmt.Errorf("list queues: %w", err)
		}
		batch := slices.Compact(slices.Sorted(slices.Values(e.Elements)))
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
			page.Next = encodeQueueCursor('s', cur, batch[room-1])
			break
		}
		page.Names = append(page.Names, batch...)
		if cur = e.Cursor; cur == 0 {
			break
		}
		if len(page.Names) == limit {
			page.Next = encodeQueueCursor('s', cur, "")
			break
		}
	}
	if page.Next == "" && cur != 0 {
		page.Next = encodeQueueCursor('s', cur, "")
	}
	slices.SortFunc(page.Names, cmp.Compare[string])
	page.Names = slices.Compact(page.Names)
	return page, nil
}

// QueuesKnown reports, for each name, whether it is in the set: one
// SMISMEMBER.
func (s *QueueSet) QueuesKnown(ctx context.Context, names ...string) ([]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	n, err := s.rdb.Do(ctx, s.rdb.B().Smismember().Key(s.key).Member(names...).Build()).AsIntSlice()
	if err != nil {
		return nil, fmt.Errorf("look queues up: %w", err)
	}
	out := make([]bool, len(n))
	for i, v := range n {
		out[i] = v == 1
	}
	return out, nil
}

// QueueCount is the number of known queues: one SCARD.
func (s *QueueSet) QueueCount(ctx context.Context) (int64, error) {
	n, err := s.rdb.Do(ctx, s.rdb.B().Scard().Key(s.key).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("count queues: %w", err)
	}
	return n, nil
}

// A queue cursor is base64url("s|<SSCAN cursor>|<after>") for a listing
// of every queue, "n||<after>" for a listing of a token's own; after is
// the last name taken from the batch (s) or the list (n).
func encodeQueueCursor(kind byte, scan uint64, after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(string(kind) + "|" + strconv.FormatUint(scan, 10) + "|" + after))
}

func decodeQueueCursor(cursor string) (kind byte, scan uint64, after string, err error) {
	if cursor == "" {
		return 0, 0, "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, 0, "", ErrBadCursor
	}
	parts := strings.SplitN(string(raw), "|", 3)
	if len(parts) != 3 || (parts[0] != "s" && parts[0] != "n") {
		return 0, 0, "", ErrBadCursor
	}
	if scan, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return 0, 0, "", ErrBadCursor
	}
	if after = parts[2]; after != "" && worker.ValidateQueueName(after) != nil {
		return 0, 0, "", ErrBadCursor
	}
	return parts[0][0], scan, after, nil
}
