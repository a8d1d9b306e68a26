package asynqimport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// seeded is what seed made in asynq: every task's id, by the state it is
// left in, and the tasks whose fields the tests check one by one.
type seeded struct {
	byState map[string][]string
	// special tasks, by id: a unique one, one with a timeout, one with a
	// deadline, one archived by a failure (with its error).
	unique, timeout, deadline, failedDead string
}

func (s *seeded) total() int {
	n := 0
	for _, ids := range s.byState {
		n += len(ids)
	}
	return n
}

// seed makes, with asynq's own client, server and inspector, n tasks in
// queue q of the asynq at addr, about a quarter in each state (archived
// at most 9,000: asynq keeps no more): archived
// (Inspector.ArchiveAllPendingTasks, and one by a failing handler with
// MaxRetry(0)), retry (a Server whose handler fails, retried in an hour),
// pending (Client.Enqueue) and scheduled (ProcessIn an hour).
func seed(t testing.TB, addr, q string, n int) *seeded {
	t.Helper()
	return seedWith(t, asynq.RedisClientOpt{Addr: addr}, q, n)
}

// seedWith is seed through asynq's connection options opt (a Redis
// Cluster's: asynq.RedisClusterClientOpt).
func seedWith(t testing.TB, opt asynq.RedisConnOpt, q string, n int) *seeded {
	t.Helper()
	ctx := t.Context()
	cl := asynq.NewClient(opt)
	t.Cleanup(func() { _ = cl.Close() })
	insp := asynq.NewInspector(opt)
	t.Cleanup(func() { _ = insp.Close() })
	// asynq keeps at most 10,000 archived tasks per queue (it trims the
	// oldest): the archived share stops below that, the others take the rest.
	archived := min(max(n/4, 1), 9000)
	third := max((n-archived)/3, 1)
	s := &seeded{byState: map[string][]string{}}
	enqueueMany := func(count int, mk func(i int) (*asynq.Task, []asynq.Option)) []string {
		ids := make([]string, count)
		var wg sync.WaitGroup
		errs := make(chan error, 1)
		sem := make(chan struct{}, 32)
		for i := range count {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				task, opts := mk(i)
				info, err := cl.EnqueueContext(ctx, task, append(opts, asynq.Queue(q))...)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				ids[i] = info.ID
			}()
		}
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatalf("asynq enqueue: %v", err)
		default:
		}
		return ids
	}
	// archived, by the inspector
	s.byState["archived"] = enqueueMany(archived, func(i int) (*asynq.Task, []asynq.Option) {
		return asynq.NewTask("report:old", fmt.Appendf(nil, `{"n":%d}`, i)), nil
	})
	if _, err := insp.ArchiveAllPendingTasks(q); err != nil {
		t.Fatal(err)
	}
	// retry, and one archived by a failure
	retry := enqueueMany(third, func(i int) (*asynq.Task, []asynq.Option) {
		return asynq.NewTask("email:deliver", fmt.Appendf(nil, `{"to":"u%d@example.com"}`, i)), []asynq.Option{asynq.MaxRetry(5)}
	})
	s.failedDead = enqueueMany(1, func(int) (*asynq.Task, []asynq.Option) {
		return asynq.NewTask("email:deliver", []byte(`{"to":"nobody"}`)), []asynq.Option{asynq.MaxRetry(0)}
	})[0]
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency:    32,
		Queues:         map[string]int{q: 1},
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return time.Hour },
		LogLevel:       asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return errors.New("smtp: 451 try later") })); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, time.Duration(30+n/500)*time.Second, "asynq's server to fail every task once", func() bool {
		info, err := insp.GetQueueInfo(q)
		return err == nil && info.Retry == len(retry) && info.Archived == len(s.byState["archived"])+1 && info.Active == 0
	})
	srv.Shutdown()
	s.byState["retry"] = retry
	s.byState["archived"] = append(s.byState["archived"], s.failedDead)
	// pending, a few of them special
	s.byState["pending"] = enqueueMany(third, func(i int) (*asynq.Task, []asynq.Option) {
		return asynq.NewTask("image:resize", fmt.Appendf(nil, `{"img":%d}`, i)), []asynq.Option{asynq.MaxRetry(3)}
	})
	special := enqueueMany(3, func(i int) (*asynq.Task, []asynq.Option) {
		switch i {
		case 0:
			return asynq.NewTask("email:digest", []byte("weekly")), []asynq.Option{asynq.Unique(time.Hour)}
		case 1:
			return asynq.NewTask("video:encode", []byte("v")), []asynq.Option{asynq.Timeout(90 * time.Second), asynq.TaskID("encode-1")}
		}
		return asynq.NewTask("video:encode", []byte("w")), []asynq.Option{asynq.Deadline(time.Now().Add(2 * time.Hour))}
	})
	s.unique, s.timeout, s.deadline = special[0], special[1], special[2]
	s.byState["pending"] = append(s.byState["pending"], special...)
	// scheduled
	s.byState["scheduled"] = enqueueMany(third, func(i int) (*asynq.Task, []asynq.Option) {
		return asynq.NewTask("billing:charge", fmt.Appendf(nil, `{"invoice":%d}`, i)), []asynq.Option{asynq.ProcessIn(time.Hour)}
	})
	return s
}
