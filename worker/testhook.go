package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/testhook"
)

// init fills in package testhook's functions, so that the public test kit
// (package worker/workertest) can run a handler as a Daemon does without
// exported names here. It sets nothing else.
func init() {
	testhook.Run = runAttempt
	testhook.Observe = func(d any, w testhook.Watch) { d.(*Daemon).env.watch = w }
	testhook.ValidateSpec = func(spec, cfg any, now time.Time) error {
		s, c := spec.(JobSpec), cfg.(Config).withDefaults()
		return validateSpec(&s, c.MaxPayloadBytes, c.MaxScheduleAhead, now)
	}
}

// runAttempt is testhook.Run: the attempt as executor runs it, on a job
// whose reports and result go to the attempt's Recorder.
func runAttempt(ctx context.Context, a testhook.Attempt) (pool.Outcome, error, error) {
	job, ok := a.Job.(*Job)
	h, _ := a.Handler.(Handler)
	opts, _ := a.Options.(QueueOptions)
	cfg, _ := a.Config.(Config)
	if !ok || job == nil || a.Recorder == nil {
		return pool.Outcome{}, nil, errors.New("worker: the test harness needs a job and a recorder")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return pool.Outcome{}, nil, fmt.Errorf("worker config: %w", err)
	}
	reg := NewRegistry()
	if err := reg.Register(a.Queue, h, opts); err != nil {
		return pool.Outcome{}, nil, err
	}
	r, _ := reg.lookup(a.Queue)
	job.Queue, job.State = a.Queue, StateActive
	job.MaxAttempts = cmp.Or(job.MaxAttempts, r.opts.MaxAttempts)
	job.Timeout = cmp.Or(job.Timeout, r.opts.Timeout)
	job.run, job.maxResult = pool.Run{}.Recording(a.Recorder), cfg.MaxResultBytes
	ctx, traced := newTracer(cfg.TracerProvider).process(ctx, job)
	o, err := execute(ctx, r, job, cfg.Logger)
	traced(o, err)
	return o, err, nil
}
