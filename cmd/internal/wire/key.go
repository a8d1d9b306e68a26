package wire

import "github.com/seed-53d105c9/courier/worker/admin"

// Key is what a queue holds of one job key (admin.KeyStats): its jobs
// waiting and running, and its own limits.
type Key struct {
	Key string `json:"key"`
	// Waiting counts the key's jobs that wait, due now or later; Running
	// those that run (the slots the key holds).
	Waiting int64 `json:"waiting"`
	Running int64 `json:"running"`
	// Concurrency is the key's own cap on its running jobs, across the
	// fleet: null when the queue's key_concurrency applies, 0 for no cap.
	Concurrency *int `json:"concurrency"`
	// Weight is the key's share of the starts among the keys with work
	// due, against theirs: 1 unless set.
	Weight int `json:"weight"`
	// AtCap is set while the key runs at its cap with jobs waiting: none
	// of them starts until one of its running jobs ends.
	AtCap bool `json:"at_cap"`
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
	k := Key{Key: s.Key, Waiting: s.Waiting, Running: s.Running, Weight: max(s.Limits.Weight, 1), AtCap: s.AtCap}
	if c := s.Limits.Concurrency; c >= 0 {
		k.Concurrency = &c
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

// Stats is the inverse of KeyOf (a weight of 1 stays 1: the default's).
func (k *Key) Stats() admin.KeyStats {
	s := admin.KeyStats{Key: k.Key, Waiting: k.Waiting, Running: k.Running, AtCap: k.AtCap,
		Limits: admin.KeyLimits{Concurrency: -1, Weight: k.Weight}}
	if k.Concurrency != nil {
		s.Limits.Concurrency = *k.Concurrency
	}
	return s
}

// List is the inverse of KeyListOf.
func (l *KeyList) List() admin.KeyList {
	out := admin.KeyList{Keys: make([]admin.KeyStats, len(l.Keys)), Total: l.Total}
	for i := range l.Keys {
		out.Keys[i] = l.Keys[i].Stats()
	}
	return out
}
