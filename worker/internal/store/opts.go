package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Priority is a job's priority level (lua/options.lua): among due jobs, a
// higher level is claimed first. The zero value is PriorityNormal.
type Priority int8

// The priority levels.
const (
	PriorityLow    Priority = -1
	PriorityNormal Priority = 0
	PriorityHigh   Priority = 1
	// LevelKeyed is not a priority: it is where a ListReady cursor stands
	// when it is among the keyed jobs, which list.lua reads after the low
	// level (letter k).
	LevelKeyed Priority = 2
)

// Letter is the level's letter in the scripts (and in the cursors of
// ready jobs): h, n or l.
func (p Priority) Letter() string {
	switch p {
	case PriorityHigh:
		return "h"
	case PriorityLow:
		return "l"
	case LevelKeyed:
		return "k"
	}
	return "n"
}

// ParseLetter is the inverse of Letter; ok is false for any other text.
func ParseLetter(letter string) (p Priority, ok bool) {
	switch letter {
	case "h":
		return PriorityHigh, true
	case "n":
		return PriorityNormal, true
	case "l":
		return PriorityLow, true
	case "k":
		return LevelKeyed, true
	}
	return PriorityNormal, false
}

// priorityOf reads a letter the scripts wrote; anything else, "" included,
// is the normal level.
func priorityOf(letter string) Priority {
	p, _ := ParseLetter(letter)
	return p
}

// Unique is a job's unique key (lua/options.lua): while the job has not
// finished (acked, dead or cancelled), and for For after its enqueue (or
// after it finished, with AfterFinish), an enqueue with the same Key in the
// queue is refused and told the id of the job holding it. The zero Unique
// is no uniqueness.
type Unique struct {
	Key         string
	For         time.Duration // whole ms; 0 = until the job finishes
	AfterFinish bool          // For counts from the finish, not the enqueue
}

// MaxUniqueFor is the longest window a Unique may have, and the longest id
// retention (SetIDRetention).
const MaxUniqueFor = 365 * 24 * time.Hour

// options is the options value enqueue.lua takes for a job: "" for a job
// with none, else "<level>;<since>;<for_ms>;<caller>;<unique key>", or
// for a keyed job "<level>;<since>;<for_ms>;<caller+2>;<keylen>;<key><unique key>".
func (j *NewJob) options() string {
	if j.Priority == PriorityNormal && j.Unique.Key == "" && !j.CallerID && j.Key == "" {
		return ""
	}
	since := "-"
	if j.Unique.For > 0 {
		since = "e"
		if j.Unique.AfterFinish {
			since = "f"
		}
	}
	caller := 0
	if j.CallerID {
		caller = 1
	}
	key := ""
	if j.Key != "" {
		caller += 2
		key = strconv.Itoa(len(j.Key)) + ";" + j.Key
	}
	return j.Priority.Letter() + ";" + since + ";" + strconv.FormatInt(j.Unique.For.Milliseconds(), 10) + ";" + strconv.Itoa(caller) + ";" + key + j.Unique.Key
}

// decodeOpts fills r's Priority and Unique from its options entry ("" when
// it has none).
func decodeOpts(r *Record, s string) error {
	if s == "" {
		return nil
	}
	parts := strings.SplitN(s, ";", 5)
	if len(parts) != 5 || len(parts[0]) != 1 {
		return fmt.Errorf("job %q: options entry %q: %w", r.ID, s, ErrCorrupt)
	}
	w, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return fmt.Errorf("job %q: options entry %q: %w", r.ID, s, ErrCorrupt)
	}
	unique := parts[4]
	if lv := parts[0]; lv != strings.ToLower(lv) { // a keyed job's: "<keylen>;<key>" first
		n, rest, ok := strings.Cut(unique, ";")
		l, err := strconv.Atoi(n)
		if !ok || err != nil || l < 1 || l > len(rest) {
			return fmt.Errorf("job %q: options entry %q: %w", r.ID, s, ErrCorrupt)
		}
		r.Key, unique = rest[:l], rest[l:]
		parts[0] = strings.ToLower(lv)
	}
	r.Priority = priorityOf(parts[0])
	r.Unique = Unique{Key: unique}
	if parts[1] != "-" {
		r.Unique.For, r.Unique.AfterFinish = time.Duration(w)*time.Millisecond, parts[1] == "f"
	}
	return nil
}
