package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Member is what a process serving a queue reports about itself.
type Member struct {
	ID          string    `json:"id"` // also its leader locks' client id
	Concurrency int       `json:"concurrency"`
	RateN       int       `json:"rate_n,omitempty"`
	RatePerMs   int64     `json:"rate_per_ms,omitempty"`
	Reported    time.Time `json:"reported"` // the process's clock
	// Leader is set by Fleet: the member holds the queue's leader lock.
	Leader bool `json:"-"`
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

// Fleet returns the live members of queue's fleet, sorted by id, with the
// leader marked, and forgets members whose report expired. A leader that reports nothing (a process of an older
// version, or one that has not reported yet) is returned as leaderID alone.
func (s *Store) Fleet(ctx context.Context, queue string) (members []Member, leaderID string, err error) {
	k := s.Keys(queue)
	res := s.c.DoMulti(ctx, s.c.B().Smembers().Key(k.Fleet).Build(), s.c.B().Hkeys().Key(k.Leader).Build())
	members, gone, err := s.reports(ctx, k, res[0])
	if err != nil {
		return nil, "", err
	}
	// Processes that died without withdrawing, in a queue no live process
	// reports to (reports prune the set too): forget them. A failure here
	// changes nothing the caller asked for.
	_ = s.forgetMembers(ctx, k, gone)
	fields, err := res[1].AsStrSlice()
	if err != nil {
		return nil, "", fmt.Errorf("read the leader of %s: %w", queue, err)
	}
	for _, f := range fields {
		if id, ok := strings.CutSuffix(f, ":leader"); ok {
			leaderID = id
		}
	}
	for i := range members {
		members[i].Leader = members[i].ID == leaderID
	}
	return members, leaderID, nil
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
