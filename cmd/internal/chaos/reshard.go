package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// migrateTimeout is MIGRATE's own timeout, in ms, for one key.
const migrateTimeout = "5000"

// MigrateSlot moves slot from one master to another while clients use it,
// as redis-cli --cluster reshard does: IMPORTING on the target, MIGRATING on
// the source, MIGRATE one key at a time with gap between keys (so clients
// meet a slot whose keys are split between two nodes: ASK and TRYAGAIN),
// then SETSLOT NODE on the target, the source and every other master. It
// returns how many keys moved.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, from, to *Redis, gap time.Duration) (int, error) {
	fromID, err := myID(ctx, from)
	if err != nil {
		return 0, err
	}
	toID, err := myID(ctx, to)
	if err != nil {
		return 0, err
	}
	s := strconv.Itoa(slot)
	if _, err := to.Do(ctx, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID); err != nil {
		return 0, fmt.Errorf("SETSLOT %s IMPORTING on %s: %w", s, to.Addr, err)
	}
	if _, err := from.Do(ctx, "CLUSTER", "SETSLOT", s, "MIGRATING", toID); err != nil {
		return 0, fmt.Errorf("SETSLOT %s MIGRATING on %s: %w", s, from.Addr, err)
	}
	host, port, _ := net.SplitHostPort(to.Addr)
	moved := 0
	for {
		reply, err := from.Do(ctx, "CLUSTER", "GETKEYSINSLOT", s, "1")
		if err != nil {
			return moved, fmt.Errorf("GETKEYSINSLOT %s on %s: %w", s, from.Addr, err)
		}
		keys, _ := reply.([]any)
		if len(keys) == 0 {
			break
		}
		key, _ := keys[0].(string)
		if err := migrateKey(ctx, from, host, port, key); err != nil {
			return moved, err
		}
		moved++
		if !pause(ctx, gap) {
			return moved, ctx.Err()
		}
	}
	// The target first, so that it serves the slot before the source
	// starts redirecting there for good.
	for _, n := range append([]*Redis{to, from}, c.otherMasters(ctx, from, to)...) {
		if _, err := n.Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
			return moved, fmt.Errorf("SETSLOT %s NODE on %s: %w", s, n.Addr, err)
		}
	}
	return moved, nil
}

// migrateKey moves one key, retrying a few times on an I/O error.
func migrateKey(ctx context.Context, from *Redis, host, port, key string) error {
	var err error
	for range 5 {
		_, err = from.Do(ctx, "MIGRATE", host, port, "", "0", migrateTimeout, "KEYS", key)
		var re *redisproc.RedisError
		if err == nil || (errors.As(err, &re) && strings.HasPrefix(re.Msg, "NOKEY")) {
			return nil
		}
		if !pause(ctx, 100*time.Millisecond) {
			break
		}
	}
	return fmt.Errorf("MIGRATE %s from %s to %s:%s: %w", key, from.Addr, host, port, err)
}

// otherMasters returns the masters other than a and b.
func (c *Cluster) otherMasters(ctx context.Context, a, b *Redis) []*Redis {
	var out []*Redis
	for _, m := range c.Masters(ctx) {
		if m != a && m != b {
			out = append(out, m)
		}
	}
	return out
}

// KillMaster kills the master serving slot with SIGKILL and waits until a
// replica has taken the slot over and the cluster reports ok again. It
// returns the killed node and the new master.
func (c *Cluster) KillMaster(ctx context.Context, slot int) (killed, promoted *Redis, err error) {
	killed, err = c.MasterOf(ctx, slot)
	if err != nil {
		return nil, nil, err
	}
	killed.Kill()
	promoted, err = c.waitPromoted(ctx, slot, killed)
	return killed, promoted, err
}

// Rejoin restarts a killed node and waits until it is a replica in sync
// with its master and sees the cluster ok: a later failover can promote it.
func (c *Cluster) Rejoin(ctx context.Context, n *Redis) error {
	if err := n.Restart(ctx); err != nil {
		return err
	}
	if err := waitSynced(ctx, n); err != nil {
		return err
	}
	return c.waitNodeOK(ctx, n)
}
