package wire

import (
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Key is what a queue holds of one job key (admin.KeyStats): its jobs
// waiting and running, and its own limits.
type Key struct {
	Key string `json:"key"`
	// Waiting counts the key's jobs that wait, due now or later, Ready
	// those of them due now; Running those that run (the slots the key
	// holds).
	Waiting int64 `json:"waiting"`
	Ready   int64 `json:"ready"`
	Running int64 `json:"running"`
	// Concurrency is the key's own cap on its running jobs, across the
	// fleet: null when the queue's key_concurrency applies, 0 for no cap.
	Concurrency *int `json:"concurrency"`
	// Weight is the key's share of the starts among the keys with work
	// due, against theirs: 1 unless set.
	Weight int `json:"weight"`
	// RateLimit is the key's own limit on its starts, across the fleet
	// ("N per DURATION"): null when the queue's key_rate_limit applies,
	// "" for none.
	RateLimit *string `json:"rate_limit"`
	// AtCap is set while the key runs at its cap with jobs waiting: none
	// of them starts until one of its running jobs ends.
	AtCap bool `json:"at_cap"`
	// LimitedUntil is when the key's back-pressure ends (a handler said
	// its downstream takes no more work until then: worker.KeyLimited);
	// left out when it has none.
	LimitedUntil *time.Time `json:"limited_until,omitempty"`
}

// KeyList is a queue's keys with the most waiting jobs, most first.
type KeyList struct {
	Keys []Key `json:"keys"`
	// Total counts the queue's keys that have waiting jobs (more than
	// Keys when the list was cut).
	Total int64 `json:"total"`
}

// KeyOf is s as the API and the CLI show it: the weight of a key that
// has none of its own is 1.
func KeyOf(s admin.KeyStats) Key {
	k := Key{Key: s.Key, Waiting: s.Waiting, Ready: s.Ready, Running: s.Running, Weight: max(s.Limits.Weight, 1), AtCap: s.AtCap,
		LimitedUntil: Time(s.LimitedUntil)}
	if c := s.Limits.Concurrency; c >= 0 {
		k.Concurrency = &c
	}
	if r := s.Limits.RateLimit; r != nil {
		text := r.String()
		k.RateLimit = &text
	}
	return k
}

// KeyListOf is l as the API and the CLI show it.
func KeyListOf(l admin.KeyList) KeyList {
	out := KeyList{Keys: make([]Key, len(l.Keys)), Total: l.Total}
	for i, s := range l.Keys {
		out.Keys[i] = KeyOf(s)
	}
	return out
}

// Stats is the inverse of KeyOf (a weight of 1 stays 1: the default's;
// LimitedUntil in the local zone), or an error for a rate limit a server
// could not have written.
func (k *Key) Stats() (admin.KeyStats, error) {
	s := admin.KeyStats{Key: k.Key, Waiting: k.Waiting, Ready: k.Ready, Running: k.Running, AtCap: k.AtCap,
		Limits: admin.KeyLimits{Concurrency: -1, Weight: k.Weight}, LimitedUntil: localTime(k.LimitedUntil)}
	if k.Concurrency != nil {
		s.Limits.Concurrency = *k.Concurrency
	}
	if k.RateLimit != nil {
		r, err := worker.ParseRateLimit(*k.RateLimit)
		if err != nil {
			return admin.KeyStats{}, fmt.Errorf("key %q has rate_limit %q: %w", k.Key, *k.RateLimit, err)
		}
		s.Limits.RateLimit = &r
	}
	return s, nil
}

// List is the inverse of KeyListOf.
func (l *KeyList) List() (admin.KeyList, error) {
	out := admin.KeyList{Keys: make([]admin.KeyStats, len(l.Keys)), Total: l.Total}
	for i := range l.Keys {
		s, err := l.Keys[i].Stats()
		if err != nil {
			return admin.KeyList{}, err
		}
		out.Keys[i] = s
	}
	return out, nil
}

// CapPhrase says a key's cap (Key.Concurrency) in a sentence, for the
// CLI's and the web UI's messages: "the queue's cap", "no cap", "cap 20".
func CapPhrase(c *int) string {
	switch {
	case c == nil:
		return "the queue's cap"
	case *c == 0:
		return "no cap"
	}
	return fmt.Sprintf("cap %d", *c)
}

// CapCell shows a key's cap (Key.Concurrency) in a table of the CLI's or
// the web UI's: "queue's", "none", or the cap written by num.
func CapCell(c *int, num func(int64) string) string {
	switch {
	case c == nil:
		return "queue's"
	case *c == 0:
		return "none"
	}
	return num(int64(*c))
}

// RateCell shows a key's rate limit (Key.RateLimit) in a table of the
// CLI's or the web UI's: "queue's", "none", or the limit.
func RateCell(r *string) string {
	switch {
	case r == nil:
		return "queue's"
	case *r == "":
		return "none"
	}
	return *r
}

// RatePhrase says a key's rate limit (Key.RateLimit) in a sentence, for
// the CLI's and the web UI's messages: "the queue's rate limit", "no rate
// limit", "at most 100 per 1m0s".
func RatePhrase(r *string) string {
	switch {
	case r == nil:
		return "the queue's rate limit"
	case *r == "":
		return "no rate limit"
	}
	return "at most " + *r
}
