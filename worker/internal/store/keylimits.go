package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// KeyLimits are a job key's own limits (lua/keys.lua's kconf): they replace
// the queue's for that key.
type KeyLimits struct {
	// Cap is how many of the key's jobs run at once, across every process:
	// -1 = the queue's default (ClaimOptions.KeyCap), 0 = none, else 1 to
	// MaxKeyCap.
	Cap int
	// Weight is the key's share of the claims among the keys with work due,
	// 1 to MaxKeyWeight; 0 = the default, 1.
	Weight int
	// Rate is the key's rate limit: nil = the queue's default
	// (ClaimOptions.KeyRate), the zero Rate = none.
	Rate *Rate
}

// MaxKeyWeight is the largest weight of a job key.
const MaxKeyWeight = 1000

// SetKeyLimits writes key's own limits into each of partitions (all of a
// queue's: a key's jobs live in one of them, which depends on the layout),
// one script call each in one round trip (lua/key_conf.lua). A key parked
// at its old cap is placed again at once.
func (s *Store) SetKeyLimits(ctx context.Context, partitions []string, key string, l KeyLimits) error {
	c := ""
	if l.Cap >= 0 {
		c = strconv.Itoa(l.Cap)
	}
	w := ""
	if l.Weight > 0 {
		w = strconv.Itoa(l.Weight)
	}
	calls := make([]script.Call, len(partitions))
	for i, p := range partitions {
		k := s.Keys(p)
		r := ""
		if l.Rate != nil {
			r = "0;0"
			if *l.Rate != (Rate{}) {
				r = l.Rate.keyArg()
			}
		}
		calls[i] = script.Call{Keys: k.keySet(), Args: []string{k.Wake, key, c, w, r}}
	}
	for i, res := range script.KeyConf.ExecMulti(ctx, s.c, calls...) {
		if err := res.Error(); err != nil {
			return fmt.Errorf("set limits of key %q in %s: %w", key, partitions[i], err)
		}
	}
	return nil
}

// KeyInfo is what one partition holds of a job key.
type KeyInfo struct {
	Key     string
	Waiting int64 // jobs that wait, due or not
	Ready   int64 // of those, the jobs due now (by this process's clock)
	Running int64 // jobs running (slots held)
	Limits  KeyLimits
	// Parked reports the key runs at its cap with jobs waiting: it starts
	// no job until one of its running jobs ends.
	Parked bool
	// LimitedUntil is when the key's back-pressure ends (zero: none).
	LimitedUntil int64 // ms
}

// TopKeys returns up to n keys of each of partitions with the most
// waiting jobs (each partition's most first, the partitions in turn), and
// the keys with waiting jobs counted over them. Read only; two round trips
// whatever the number of partitions.
func (s *Store) TopKeys(ctx context.Context, partitions []string, n int) ([]KeyInfo, int64, error) {
	cmds := make(rueidis.Commands, 0, 2*len(partitions))
	for _, p := range partitions {
		k := s.Keys(p)
		cmds = append(cmds,
			s.c.B().Zrange().Key(k.KeyCount).Min("+inf").Max("-inf").Byscore().Rev().Limit(0, int64(n)).Build(),
			s.c.B().Zcard().Key(k.KeyCount).Build())
	}
	res := s.c.DoMulti(ctx, cmds...)
	var refs []KeyRef
	var total int64
	for i, p := range partitions {
		keys, err := res[2*i].AsStrSlice()
		if err != nil {
			return nil, 0, fmt.Errorf("top keys of %s: %w", p, err)
		}
		count, err := res[2*i+1].AsInt64()
		if err != nil {
			return nil, 0, fmt.Errorf("keys of %s: %w", p, err)
		}
		total += count
		for _, key := range keys {
			refs = append(refs, KeyRef{Partition: p, Key: key})
		}
	}
	// KeyInfos reads each key's count again, with its state: one figure,
	// however the counts moved between the two round trips.
	infos, err := s.KeyInfos(ctx, refs)
	if err != nil {
		return nil, 0, err
	}
	return infos, total, nil
}

// KeyRef names a job key in one partition of its queue.
type KeyRef struct{ Partition, Key string }

// KeyInfos reads what each ref's partition holds of its key (Waiting from
// its count), in one round trip whatever their number.
func (s *Store) KeyInfos(ctx context.Context, refs []KeyRef) ([]KeyInfo, error) {
	out := make([]KeyInfo, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	const per = 6 // commands per key
	cmds := make(rueidis.Commands, 0, per*len(refs))
	before := fmt.Sprintf("%013d", time.Now().UnixMilli()+1)
	for _, ref := range refs {
		k, key := s.Keys(ref.Partition), ref.Key
		cmds = append(cmds,
			s.c.B().Zscore().Key(k.KeyCount).Member(key).Build(),
			s.c.B().Hmget().Key(k.KeyState).Field("r:"+key, "p:"+key, "u:"+key).Build(),
			s.c.B().Hmget().Key(k.KeyConf).Field("c:"+key, "w:"+key, "r:"+key).Build())
		for _, level := range []string{"a", "b", "c"} { // lua/keys.lua's kmember
			from := key + "\x00" + level
			cmds = append(cmds, s.c.B().Zlexcount().Key(k.KeyDue).Min("["+from).Max("("+from+before).Build())
		}
	}
	res := s.c.DoMulti(ctx, cmds...)
	for i, ref := range refs {
		info, err := keyInfo(ref.Key, res[per*i:per*i+per])
		if err != nil {
			return nil, fmt.Errorf("key %q of %s: %w", ref.Key, ref.Partition, err)
		}
		out[i] = info
	}
	return out, nil
}

// keyInfo decodes KeyInfos' replies about key: its count, its state
// (running, parked, limited until), its limits, and its due jobs of the
// three levels.
func keyInfo(key string, res []rueidis.RedisResult) (KeyInfo, error) {
	info := KeyInfo{Key: key, Limits: KeyLimits{Cap: -1}}
	if w, err := res[0].AsFloat64(); err == nil {
		info.Waiting = int64(w)
	} else if !rueidis.IsRedisNil(err) {
		return info, err
	}
	for _, r := range res[3:] {
		n, err := r.AsInt64()
		if err != nil {
			return info, err
		}
		info.Ready += n
	}
	st, err := res[1].ToArray()
	if err != nil {
		return info, err
	}
	info.Running, _ = st[0].AsInt64()
	_, perr := st[1].ToString()
	info.Parked = perr == nil
	info.LimitedUntil, _ = st[2].AsInt64()
	conf, err := res[2].ToArray()
	if err != nil {
		return info, err
	}
	if c, err := conf[0].AsInt64(); err == nil {
		info.Limits.Cap = int(c)
	}
	if w, err := conf[1].AsInt64(); err == nil {
		info.Limits.Weight = int(w)
	}
	if r, err := conf[2].ToString(); err == nil {
		info.Limits.Rate = parseKeyRate(r)
	}
	return info, nil
}

// CopyKeyLimits copies the keys' own limits of from (partition 0 of a
// queue) into each of to (partitions a layout change adds), before the
// layout that routes keys there is published. Plain commands: the limits
// are settings, written whole.
func (s *Store) CopyKeyLimits(ctx context.Context, from string, to []string) error {
	if len(to) == 0 {
		return nil
	}
	conf, err := s.c.Do(ctx, s.c.B().Hgetall().Key(s.Keys(from).KeyConf).Build()).AsStrMap()
	if err != nil {
		return fmt.Errorf("read the key limits of %s: %w", from, err)
	}
	if len(conf) == 0 {
		return nil
	}
	cmds := make(rueidis.Commands, 0, len(to))
	for _, p := range to {
		set := s.c.B().Hset().Key(s.Keys(p).KeyConf).FieldValue()
		for f, v := range conf {
			set = set.FieldValue(f, v)
		}
		cmds = append(cmds, set.Build())
	}
	for i, res := range s.c.DoMulti(ctx, cmds...) {
		if err := res.Error(); err != nil {
			return fmt.Errorf("copy the key limits to %s: %w", to[i], err)
		}
	}
	return nil
}

// parseKeyRate reads a kconf rate "<n>;<ms>" ("0;0": none).
func parseKeyRate(s string) *Rate {
	n, ms, ok := strings.Cut(s, ";")
	a, err1 := strconv.Atoi(n)
	b, err2 := strconv.ParseInt(ms, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return nil
	}
	if a == 0 {
		return &Rate{}
	}
	return &Rate{N: a, Per: time.Duration(b) * time.Millisecond}
}
