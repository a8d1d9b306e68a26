package admin

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Cursors (JobListParams.Cursor, TriageParams.Cursor, QueueListParams.Cursor) are
// base64url, without padding, of a text that names what it is a cursor of, so that one of
// another state or walk is refused:
//
//	s:<ms>:<id>             scheduled: the last job's run-at and id
//	r:<level>:<ms>:<id>     ready: and its level, h, n or l
//	a:<ms>:<id>             active: lease deadline and id
//	d:<ms>:<id>             dead: time of death and id ("<ms>:<id>" too,
//	                        as the dead set's pages were before Jobs)
//	c:<ms>:<id>             completed: finish time and id
//	t:<until>:[<ms>:<id>]   a triage walk of a filter: its bound (the Redis
//	                        clock in ms when it started) and where it is
//	i:<n>                   a triage of ids: how many distinct ids are done
//	q:<scan>:[<queue>]      a listing of the queues (Queues): its SSCAN
//	                        cursor, and the last queue taken from it
//	o:[<queue>]             a listing of a caller's own queues: the last one
//	P<i>;<inner>            a page of partition i of a partitioned queue:
//	                        the cursor of that partition's pages inside
//
// A position's ms are at most 15 digits and its id passes ValidateID.

// maxCursorLen bounds a cursor's text: the longest is a triage walk's, two
// 15-digit times, three ':', "t" and an id, in unpadded base64.
const maxCursorLen = (4*(1+3+15+15+worker.MaxIDLen) + 2) / 3

// cursorKind returns the letter of the cursors of a listed state.
func cursorKind(state worker.State) string {
	switch state {
	case worker.StateScheduled:
		return "s"
	case worker.StateReady:
		return "r"
	case worker.StateActive:
		return "a"
	case worker.StateCompleted:
		return "c"
	case worker.StateCancelled:
		return "x"
	}
	return "d"
}

// encodeCursor returns the opaque form of text.
func encodeCursor(text string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(text))
}

// decodeCursor returns the text of cursor s and whether it is one.
func decodeCursor(s string) (string, bool) {
	if s == "" || len(s) > maxCursorLen {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	return string(raw), err == nil
}

// position formats a position in a sorted set: "<ms>:<id>".
func position(at time.Time, id string) string {
	return strconv.FormatInt(at.UnixMilli(), 10) + ":" + id
}

// parsePosition is the inverse of position.
func parsePosition(s string) (time.Time, string, bool) {
	ms, id, ok := strings.Cut(s, ":")
	if !ok || ms == "" || len(ms) > 15 || strings.Trim(ms, "0123456789") != "" || worker.ValidateID(id) != nil {
		return time.Time{}, "", false
	}
	n, _ := strconv.ParseInt(ms, 10, 64) // 15 digits always fit
	return time.UnixMilli(n), id, true
}

// listCursor is a parsed JobListParams.Cursor.
type listCursor struct {
	level store.Priority // ready only
	at    time.Time
	id    string // "" = the start
}

// formatListCursor returns the cursor of the position c in the jobs of
// state.
func formatListCursor(state worker.State, c listCursor) string {
	text := cursorKind(state) + ":"
	if state == worker.StateReady {
		text += c.level.Letter() + ":"
	}
	return encodeCursor(text + position(c.at, c.id))
}

// parseListCursor reads a cursor of the jobs of state; "" is the start.
func parseListCursor(state worker.State, s string) (listCursor, error) {
	if s == "" {
		return listCursor{}, nil
	}
	bad := invalid("Cursor", "is not a cursor from a previous page of %s jobs", state)
	text, ok := decodeCursor(s)
	if !ok {
		return listCursor{}, bad
	}
	kind, rest, _ := strings.Cut(text, ":")
	var c listCursor
	switch {
	case state == worker.StateDead && kind != "" && strings.Trim(kind, "0123456789") == "":
		rest = text // a dead cursor of before the listing of every state: "<ms>:<id>"
	case kind != cursorKind(state):
		return listCursor{}, bad
	case state == worker.StateReady:
		var letter string
		letter, rest, _ = strings.Cut(rest, ":")
		if c.level, ok = store.ParseLetter(letter); !ok {
			return listCursor{}, bad
		}
	}
	if c.at, c.id, ok = parsePosition(rest); !ok {
		return listCursor{}, bad
	}
	return c, nil
}

// triageCursor is a parsed TriageParams.Cursor.
type triageCursor struct {
	done  int              // ids: how many distinct ids are done
	until time.Time        // filter: the walk's bound; zero before it started
	after store.DeadCursor // filter: where the walk is
}

// formatTriageCursor returns the cursor of a walk of ids (ids true) or of
// a filter.
func formatTriageCursor(ids bool, c triageCursor) string {
	if ids {
		return encodeCursor("i:" + strconv.Itoa(c.done))
	}
	text := "t:" + strconv.FormatInt(c.until.UnixMilli(), 10) + ":"
	if !c.after.IsZero() {
		text += position(c.after.DiedAt, c.after.ID)
	}
	return encodeCursor(text)
}

// parseTriageCursor reads a cursor of a walk of n distinct ids (ids true)
// or of a filter; "" is the start.
func parseTriageCursor(ids bool, n int, s string) (triageCursor, error) {
	if s == "" {
		return triageCursor{}, nil
	}
	bad := invalid("Cursor", "is not a cursor from a previous call with the same selection")
	text, ok := decodeCursor(s)
	if !ok {
		return triageCursor{}, bad
	}
	kind, rest, _ := strings.Cut(text, ":")
	var c triageCursor
	switch {
	case ids && kind == "i":
		d, err := strconv.Atoi(rest)
		if err != nil || d < 0 || d > n || strconv.Itoa(d) != rest {
			return triageCursor{}, bad
		}
		c.done = d
	case !ids && kind == "t":
		until, pos, _ := strings.Cut(rest, ":")
		ms, err := strconv.ParseInt(until, 10, 64)
		if err != nil || ms < 0 || len(until) > 15 || strconv.FormatInt(ms, 10) != until {
			return triageCursor{}, bad
		}
		c.until = time.UnixMilli(ms)
		if pos != "" {
			at, id, ok := parsePosition(pos)
			if !ok {
				return triageCursor{}, bad
			}
			c.after = store.DeadCursor{DiedAt: at, ID: id}
		}
	default:
		return triageCursor{}, bad
	}
	return c, nil
}

// partitionIndexCursor wraps the cursor of one partition's pages (inner,
// "" for its first page) with the partition's place in the queue's list of
// partitions, for a queue of several: "P<i>;<inner>".
func partitionIndexCursor(i int, inner string) string {
	return encodeCursor("P" + strconv.Itoa(i) + ";" + inner)
}

// parsePartitionCursor undoes partitionIndexCursor; "" is the start.
func parsePartitionCursor(s string, partitions int) (int, string, error) {
	if s == "" {
		return 0, "", nil
	}
	text, ok := decodeCursor(s)
	rest, isPart := strings.CutPrefix(text, "P")
	idx, inner, found := strings.Cut(rest, ";")
	i, err := strconv.Atoi(idx)
	if !ok || !isPart || !found || err != nil || i < 0 || i >= partitions {
		return 0, "", invalid("Cursor", "is not a cursor of this partitioned queue's pages")
	}
	return i, inner, nil
}
