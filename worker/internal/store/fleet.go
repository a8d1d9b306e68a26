package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Member is what a process serving a queue reports about itself, as JSON
// at Keys.Fleet+":"+ID. Fields added later are omitted when empty and
// decode as their zero value from an older process's report, so processes
// of two versions read each other's reports during a rolling upgrade.
type Member struct {
	ID          string    `json:"id"` // also its leader locks' client id
	Concurrency int       `json:"concurrency"`
	RateN       int       `json:"rate_n,omitempty"`
	RatePerMs   int64     `json:"rate_per_ms,omitempty"`
	Reported    time.Time `json:"reported"` // the process's clock
	// Version is the process's version (worker.Config.Version).
	Version string `json:"version,omitempty"`
	// Started is when the process started serving (its clock).
	Started time.Time `json:"started,omitzero"`
	// Periodic lists the queue's periodic schedules the process fires
	// while it leads, sorted by name: enough to compute their fire times.
	Periodic []MemberSchedule `json:"periodic,omitempty"`
	// Kinds lists the kinds of job the process serves on the queue
	// (worker.Kinds), sorted, "" for jobs without a kind; nil when the
	// queue has one handler for every job.
	Kinds []string `json:"kinds,omitempty"`
	// Leader is set by Fleet: the member holds the queue's leader lock.
	Leader bool `json:"-"`
}

// MemberSchedule is one periodic schedule in a Member's report: its name
// and either its interval (EveryMs) or its cron expression (Cron).
type MemberSchedule struct {
	Name    string `json:"name"`
	EveryMs int64  `json:"every_ms,omitempty"`
	Cron    string `json:"cron,omitempty"`
}

// FleetInfo is a queue's fleet as Store.FleetInfo reads it.
type FleetInfo struct {
	// Members are the live reports, sorted by id, the leader's marked.
	Members []Member
	// LeaderID is the id of the process holding the queue's leader lock;
	// "" when none does. A leader that reports nothing (a process of an
	// older version, or one that has not reported yet) is here alone.
	LeaderID string
	// LeaderTTL is the time left on the leader lock's key (its PTTL); 0
	// when no process leads.
	LeaderTTL time.Duration
}

// Report records m as serving queue for ttl, and forgets members whose
// reports expired. The report is a key of its own with a TTL, so Redis
// expires it when the process stops reporting; the set only indexes them.
func (s *Store) Report(ctx context.Context, queue string, m Member, ttl time.Duration) error {
	k := s.Keys(queue)
	v, err := json.Marshal(m)
	if err != nil {
		return err
	}
	res := s.c.DoMulti(ctx,
		s.c.B().Set().Key(k.Fleet+":"+m.ID).Value(string(v)).Px(ttl).Build(),
		s.c.B().Sadd().Key(k.Fleet).Member(m.ID).Build(),
		s.c.B().Smembers().Key(k.Fleet).Build(),
	)
	for _, r := range res[:2] {
		if err := r.Error(); err != nil {
			return fmt.Errorf("report to the fleet of %s: %w", queue, err)
		}
	}
	_, gone, err := s.reports(ctx, k, res[2])
	if err != nil {
		return err
	}
	return s.forgetMembers(ctx, k, gone)
}

// Withdraw removes a stopping process from the fleet of queue.
func (s *Store) Withdraw(ctx context.Context, queue, id string) error {
	k := s.Keys(queue)
	for _, res := range s.c.DoMulti(ctx,
		s.c.B().Del().Key(k.Fleet+":"+id).Build(),
		s.c.B().Srem().Key(k.Fleet).Member(id).Build(),
	) {
		if err := res.Error(); err != nil {
			return fmt.Errorf("withdraw from the fleet of %s: %w", queue, err)
		}
	}
	return nil
}

// Fleet returns the live members of queue's fleet and the id of its
// leader: FleetInfo's Members and LeaderID.
func (s *Store) Fleet(ctx context.Context, queue string) (members []Member, leaderID string, err error) {
	f, err := s.FleetInfo(ctx, queue)
	return f.Members, f.LeaderID, err
}

// FleetInfo returns the live members of queue's fleet, sorted by id, with
// the leader marked, and the leader lock's holder and time left; it forgets
// members whose report expired. One round trip reads the fleet set and the
// leader lock (its fields and PTTL), a second the reports.
func (s *Store) FleetInfo(ctx context.Context, queue string) (FleetInfo, error) {
	k := s.Keys(queue)
	res := s.c.DoMulti(ctx,
		s.c.B().Smembers().Key(k.Fleet).Build(),
		s.c.B().Hkeys().Key(k.Leader).Build(),
		s.c.B().Pttl().Key(k.Leader).Build(),
	)
	members, err := s.liveReports(ctx, k, res[0])
	if err != nil {
		return FleetInfo{}, err
	}
	fields, err := res[1].AsStrSlice()
	if err != nil {
		return FleetInfo{}, fmt.Errorf("read the leader of %s: %w", queue, err)
	}
	pttl, err := res[2].AsInt64()
	if err != nil {
		return FleetInfo{}, fmt.Errorf("read the leader lease of %s: %w", queue, err)
	}
	f := FleetInfo{Members: members, LeaderID: leaderOf(fields)}
	if f.LeaderID != "" && pttl > 0 { // -1: no expiry, -2: no key
		f.LeaderTTL = time.Duration(pttl) * time.Millisecond
	}
	for i := range f.Members {
		f.Members[i].Leader = f.Members[i].ID == f.LeaderID
	}
	return f, nil
}

// Schedules returns the live members of queue's fleet, sorted by id, and
// the last fire of each schedule the periodic hash (Keys.Periodic)
// remembers, by name; it forgets members whose report expired. A field
// that is not a time in ms is left out.
func (s *Store) Schedules(ctx context.Context, queue string) ([]Member, map[string]time.Time, error) {
	k := s.Keys(queue)
	res := s.c.DoMulti(ctx,
		s.c.B().Smembers().Key(k.Fleet).Build(),
		s.c.B().Hgetall().Key(k.Periodic).Build(),
	)
	members, err := s.liveReports(ctx, k, res[0])
	if err != nil {
		return nil, nil, err
	}
	fields, err := res[1].AsStrMap()
	if err != nil {
		return nil, nil, fmt.Errorf("read the schedules of %s: %w", queue, err)
	}
	last := make(map[string]time.Time, len(fields))
	for name, v := range fields {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			last[name] = time.UnixMilli(ms)
		}
	}
	return members, last, nil
}

// liveReports reads the reports of the fleet set's SMEMBERS reply and
// returns the live ones. Processes that died without withdrawing, in a
// queue no live process reports to (reports prune the set too), are
// forgotten; a failure there changes nothing the caller asked for.
func (s *Store) liveReports(ctx context.Context, k Keys, set rueidis.RedisResult) ([]Member, error) {
	members, gone, err := s.reports(ctx, k, set)
	if err != nil {
		return nil, err
	}
	_ = s.forgetMembers(ctx, k, gone)
	return members, nil
}

// forgetMembers removes the ids gone, whose report expired, from the fleet
// set; it does nothing when gone is empty. A member that re-reported since
// its report was read is put back by its next report.
func (s *Store) forgetMembers(ctx context.Context, k Keys, gone []string) error {
	if len(gone) == 0 {
		return nil
	}
	return s.c.Do(ctx, s.c.B().Srem().Key(k.Fleet).Member(gone...).Build()).Error()
}

// reports reads the reports of the ids in members, the fleet set's
// SMEMBERS reply: the live ones, and the ids whose report expired.
func (s *Store) reports(ctx context.Context, k Keys, members rueidis.RedisResult) (live []Member, gone []string, err error) {
	ids, err := members.AsStrSlice()
	if err != nil || len(ids) == 0 {
		return nil, nil, err
	}
	slices.Sort(ids)
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = k.Fleet + ":" + id
	}
	vals, err := s.c.Do(ctx, s.c.B().Mget().Key(keys...).Build()).ToArray()
	if err != nil {
		return nil, nil, err
	}
	for i, v := range vals {
		text, err := v.ToString()
		if err != nil {
			if rueidis.IsRedisNil(err) {
				gone = append(gone, ids[i])
				continue
			}
			return nil, nil, err
		}
		var m Member
		if json.Unmarshal([]byte(text), &m) != nil || m.ID != ids[i] {
			gone = append(gone, ids[i]) // not a report of ours: forget it
			continue
		}
		live = append(live, m)
	}
	return live, gone, nil
}

// leaderOf returns the process id a leader lock's fields name ("<id>:leader"),
// "" when none does.
func leaderOf(fields []string) string {
	id := ""
	for _, field := range fields {
		if l, ok := strings.CutSuffix(field, ":leader"); ok {
			id = l
		}
	}
	return id
}

// Leaders returns the id of the process leading each of queues (the
// partitions of one, say), "" where none does, in one round trip.
func (s *Store) Leaders(ctx context.Context, queues []string) ([]string, error) {
	cmds := make(rueidis.Commands, len(queues))
	for i, q := range queues {
		cmds[i] = s.c.B().Hkeys().Key(s.Keys(q).Leader).Build()
	}
	out := make([]string, len(queues))
	for i, res := range s.c.DoMulti(ctx, cmds...) {
		fields, err := res.AsStrSlice()
		if err != nil {
			return nil, fmt.Errorf("read the leader of %s: %w", queues[i], err)
		}
		out[i] = leaderOf(fields)
	}
	return out, nil
}
