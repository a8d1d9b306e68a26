package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// rejoinAfter is how long after its replica's promotion a killed master
// starts again. The new master has no replica until then: the enqueues to
// its partitions meanwhile are stored but not confirmed (ErrNotReplicated).
const rejoinAfter = 2 * time.Second

// Jobs seeded before each kill: a few per partition the master serves,
// due a second after the kill, so that jobs are waiting when the replica
// takes over and the time processing takes to resume is the daemons', not
// the producer's (which is blocked while any partition is down).
const (
	seedPerPartition = 2
	seedDue          = time.Second
)

// failover kills the master of the target partition's slot with SIGKILL,
// waits until its replica took over, and restarts the old master
// rejoinAfter later, which rejoins as a replica (so that the next episode
// can fail back). The episode records the partitions the master served and
// when the suite saw the replica serve them: the tally measures when their
// processing resumed.
func failover(ctx context.Context, w *world, p Plan) error {
	return w.episodes(ctx, p.Episodes, 3*time.Second, func(ctx context.Context, i int) error {
		master, err := w.cluster.MasterOf(ctx, w.slot)
		if err != nil {
			return err
		}
		cut := w.partitionsOn(ctx, master)
		seeded, err := w.seed(ctx, i, cut)
		if err != nil {
			return err
		}
		start := time.Now()
		killed, promoted, err := w.cluster.KillMaster(ctx, w.slot)
		back := time.Now()
		f := Fault{Kind: "kill -9 master", Target: "slot " + fmt.Sprint(w.slot), Start: start, End: start, Partitions: cut}
		if killed != nil {
			f.Target = killed.Addr
		}
		if promoted != nil {
			f.Back = back
			f.Note = fmt.Sprintf("%s promoted after %s (partitions %s; %d jobs due meanwhile)",
				promoted.Addr, roundDur(back.Sub(start)), intList(cut), seeded)
		}
		w.fault(f)
		if err != nil {
			return err
		}
		pause(ctx, rejoinAfter)
		return w.cluster.Rejoin(ctx, killed)
	})
}

// seed enqueues seedPerPartition jobs to each of partitions, due seedDue
// from now, with the producer's durability, and books them in the ledger.
// Their ids, "e<episode>-<n>", are chosen by partition.
func (w *world) seed(ctx context.Context, episode int, partitions []int) (int, error) {
	var specs []worker.JobSpec
	for _, p := range partitions {
		for n, k := 0, 0; k < seedPerPartition; n++ {
			id := fmt.Sprintf("e%d-%d", episode+1, n)
			if rediskeys.PartitionOf(id, w.parts) != p {
				continue
			}
			specs = append(specs, worker.JobSpec{Queue: queueName, ID: id, Payload: []byte(`{"ms":20}`),
				Delay: seedDue, Durability: w.durability})
			k++
		}
	}
	if len(specs) == 0 {
		return 0, nil
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := w.client.EnqueueMany(cctx, specs)
	if err != nil {
		return 0, fmt.Errorf("seed jobs due during the failover: %w", err)
	}
	var ok, unsure []string
	for i, r := range res {
		switch {
		case r.Err == nil:
			ok = append(ok, specs[i].ID)
		case errors.Is(r.Err, worker.ErrNotReplicated):
			ok, unsure = append(ok, specs[i].ID), append(unsure, specs[i].ID)
		default:
			return 0, fmt.Errorf("seed job %s: %w", specs[i].ID, r.Err)
		}
	}
	w.ledger.Unconfirmed(unsure...)
	w.ledger.Acked(time.Now(), false, ok...)
	return len(ok), nil
}
