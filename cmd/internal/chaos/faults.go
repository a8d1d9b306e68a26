package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// episodeTimeout bounds one episode: undoing a fault (a restart, a
// rejoin) finishes even when the fault window has ended meanwhile.
const episodeTimeout = 90 * time.Second

// episodes runs fn for episode 0, 1, ... while ctx (the fault window)
// lasts, at most max of them (0: no limit), gap apart. Each episode runs
// on a context of its own, derived from the run's, so that it always
// undoes its fault.
func (w *world) episodes(ctx context.Context, max int, gap time.Duration, fn func(ctx context.Context, i int) error) error {
	for i := 0; (max == 0 || i < max) && ctx.Err() == nil; i++ {
		ectx, cancel := context.WithTimeout(w.base, episodeTimeout)
		err := fn(ectx, i)
		cancel()
		if err != nil {
			return fmt.Errorf("episode %d: %w", i+1, err)
		}
		if !pause(ctx, gap) {
			return nil
		}
	}
	return nil
}

// fault records an episode in the ledger and logs it.
func (w *world) fault(f Fault) {
	w.ledger.AddFault(f)
	msg := fmt.Sprintf("%s: %s %s for %s", w.name, f.Kind, f.Target, roundDur(f.End.Sub(f.Start)))
	if f.Note != "" {
		msg += "; " + f.Note
	}
	w.logf("%s", msg)
}

// killDaemons kills a daemon with SIGKILL, in turn, starts it again half a
// second later, and waits 3 s once it is ready.
func killDaemons(ctx context.Context, w *world, _ Plan) error {
	return w.episodes(ctx, 0, 3*time.Second, func(ctx context.Context, i int) error {
		d := w.daemons[i%len(w.daemons)]
		id, start := d.ID(), time.Now()
		d.Kill()
		pause(ctx, 500*time.Millisecond)
		err := d.Start()
		w.fault(Fault{Kind: "kill -9", Target: "daemon " + id, Start: start, End: time.Now()})
		if err != nil {
			return err
		}
		return d.WaitReady(ctx)
	})
}

// rollDaemons restarts the daemons one at a time with SIGTERM, as a
// rolling deployment does: each drains and exits 0, then starts again and
// is ready before the next one stops.
func rollDaemons(ctx context.Context, w *world, _ Plan) error {
	return w.episodes(ctx, 0, time.Second, func(ctx context.Context, i int) error {
		d := w.daemons[i%len(w.daemons)]
		id, start := d.ID(), time.Now()
		if err := d.Term(); err != nil {
			w.ledger.Break(err.Error())
		}
		if err := d.Start(); err != nil {
			return err
		}
		err := d.WaitReady(ctx)
		w.fault(Fault{Kind: "SIGTERM restart", Target: "daemon " + id, Start: start, End: time.Now()})
		return err
	})
}

// killRedis kills Redis with SIGKILL, starts it again half a second later
// on the same port and AOF, and waits 4 s once it has loaded.
func killRedis(ctx context.Context, w *world, _ Plan) error {
	return w.episodes(ctx, 0, 4*time.Second, func(ctx context.Context, _ int) error {
		start := time.Now()
		w.redis.Kill()
		pause(ctx, 500*time.Millisecond)
		err := w.redis.Restart(ctx)
		w.fault(Fault{Kind: "kill -9", Target: "redis (appendfsync " + w.fsync + ")", Start: start, End: time.Now()})
		return err
	})
}

// blipLength is how long each Redis blip lasts: a third of the lease.
const blipLength = time.Second

// blipRedis makes Redis unavailable for a second every 3 s, three ways in
// turn: CLIENT PAUSE ALL (every client waits), DEBUG SLEEP (the server
// does nothing), and the daemons' connections silent, then reset. The
// short run's window holds all three.
func blipRedis(ctx context.Context, w *world, _ Plan) error {
	return w.episodes(ctx, 0, 2*time.Second, func(ctx context.Context, i int) error {
		start := time.Now()
		f := Fault{Start: start, Target: "redis"}
		switch i % 3 {
		case 0:
			f.Kind = "CLIENT PAUSE 1000 ALL"
			if _, err := w.redis.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL"); err != nil {
				return err
			}
			pause(ctx, blipLength)
		case 1:
			f.Kind = "DEBUG SLEEP 1"
			if _, err := w.redis.Do(ctx, "DEBUG", "SLEEP", "1"); err != nil {
				return err
			}
		case 2:
			f.Kind, f.Target = "connections silent 1 s, then reset", "every daemon"
			for _, p := range w.proxies {
				p.Stall()
			}
			pause(ctx, blipLength)
			for _, p := range w.proxies {
				p.Drop()
				p.Resume()
			}
		}
		f.End = time.Now()
		w.fault(f)
		return nil
	})
}

// oomProbe is a key the OOM fault writes to check that Redis is full.
const oomProbe = "chaos:oom-probe"

// oomRedis makes Redis full for p.Hold: maxmemory just above the memory it
// uses, with noeviction, lowered whenever a write of a few KiB would still
// fit (jobs acked meanwhile free memory); then lifted.
func oomRedis(ctx context.Context, w *world, p Plan) error {
	return w.episodes(ctx, p.Episodes, 3*time.Second, func(ctx context.Context, _ int) error {
		refused := w.ledger.refusedSoFar()
		start := time.Now()
		first, last, err := keepFull(ctx, w.redis, p.Hold)
		_, lerr := w.redis.Do(ctx, "CONFIG", "SET", "maxmemory", "0")
		w.fault(Fault{
			Kind: "maxmemory", Target: "redis", Start: start, End: time.Now(),
			Note: fmt.Sprintf("limit %d to %d bytes; %d enqueue calls refused", first, last, w.ledger.refusedSoFar()-refused),
		})
		return errors.Join(err, lerr)
	})
}

// keepFull keeps Redis full for hold: it sets maxmemory just above
// used_memory, and every 100 ms checks that a 4 KiB write is refused with
// OOM, lowering the limit by 16 KiB while it is not. It returns the first
// and the last limit.
func keepFull(ctx context.Context, r *Redis, hold time.Duration) (first, last int64, err error) {
	info, err := r.Info(ctx, "memory")
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscan(infoField(info, "used_memory"), &first); err != nil {
		return 0, 0, fmt.Errorf("used_memory in INFO memory: %w", err)
	}
	first += 4 << 10
	last = first
	if _, err := r.Do(ctx, "CONFIG", "SET", "maxmemory", fmt.Sprint(last)); err != nil {
		return first, last, err
	}
	probe := strings.Repeat("x", 4<<10)
	end := time.Now().Add(hold)
	for time.Now().Before(end) {
		_, err := r.Do(ctx, "SET", oomProbe, probe)
		var re *redisproc.RedisError
		switch {
		case errors.As(err, &re) && strings.HasPrefix(re.Msg, "OOM"):
			if !pause(ctx, 100*time.Millisecond) {
				return first, last, ctx.Err()
			}
			continue
		case err != nil:
			return first, last, err
		}
		if _, err := r.Do(ctx, "DEL", oomProbe); err != nil {
			return first, last, err
		}
		last -= 16 << 10
		if _, err := r.Do(ctx, "CONFIG", "SET", "maxmemory", fmt.Sprint(last)); err != nil {
			return first, last, err
		}
	}
	return first, last, nil
}

// reshard migrates the slot of the scenario's target partition (the
// queue's own slot when it is not split) to another master, a key every
// 200 ms, while jobs flow; then again, as long as the window lasts.
func reshard(ctx context.Context, w *world, _ Plan) error {
	return w.episodes(ctx, 0, 2*time.Second, func(ctx context.Context, i int) error {
		from, err := w.cluster.MasterOf(ctx, w.slot)
		if err != nil {
			return err
		}
		others := w.cluster.otherMasters(ctx, from, nil)
		if len(others) == 0 {
			return fmt.Errorf("no master to move slot %d to", w.slot)
		}
		to := others[i%len(others)]
		start := time.Now()
		moved, err := w.cluster.MigrateSlot(ctx, w.slot, from, to, 200*time.Millisecond)
		w.fault(Fault{
			Kind: "reshard", Target: fmt.Sprintf("slot %d %s -> %s", w.slot, from.Addr, to.Addr),
			Start: start, End: time.Now(), Note: fmt.Sprintf("%d keys moved", moved),
		})
		return err
	})
}

// stallLength is how long a daemon's connections stay silent: longer than
// the lease, so that its jobs must be recovered by the others.
const stallLength = daemonLease + 2*time.Second

// stallDaemon silences one daemon's Redis connections for longer than the
// lease, in turn, then lets them through again.
func stallDaemon(ctx context.Context, w *world, _ Plan) error {
	return w.episodes(ctx, 0, 3*time.Second, func(ctx context.Context, i int) error {
		n := i % len(w.daemons)
		start := time.Now()
		w.proxies[n].Stall()
		pause(ctx, stallLength)
		w.proxies[n].Resume()
		w.fault(Fault{Kind: "stall 5 s", Target: "daemon " + w.daemons[n].ID() + "'s connections", Start: start, End: time.Now()})
		return nil
	})
}
