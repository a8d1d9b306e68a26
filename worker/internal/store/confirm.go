package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// ErrNoWaitAOF reports a server without WAITAOF (Redis before 7.2): an
// enqueue that asked for it wrote nothing. The error is a *NoWaitAOFError.
var ErrNoWaitAOF = errors.New("redis has no WAITAOF")

// NoWaitAOFError is ErrNoWaitAOF with the server's version ("" when the
// server did not say).
type NoWaitAOFError struct{ Version string }

// Error implements error.
func (e *NoWaitAOFError) Error() string {
	v := "this Redis"
	if e.Version != "" {
		v += " (" + e.Version + ")"
	}
	return v + " has no WAITAOF; it needs Redis 7.2 or later"
}

// Is makes errors.Is(err, ErrNoWaitAOF) true.
func (e *NoWaitAOFError) Is(target error) bool { return target == ErrNoWaitAOF }

// Confirmed is what an EnqueueConfirmed learned of its writes.
type Confirmed struct {
	// Replicas is how many replicas acknowledged the writes within the
	// timeout (with aof: wrote them to their append-only file). When the
	// writes went over several connections (a call sent again after a
	// refusal), the fewest of them.
	Replicas int
	// Local reports, with aof, whether the master wrote them to its own
	// append-only file within the timeout; true without aof.
	Local bool
	// Err is why there is no answer, when there is none (the writes ran:
	// the connection was lost after them, WAITAOF refused on a server
	// without appendonly…); Replicas is 0 then.
	Err error
}

// EnqueueConfirmed is EnqueueJobs followed, on the connection that wrote
// the jobs and in the same round trip, by WAIT replicas timeout — or, with
// aof, WAITAOF 1 replicas timeout — whose answer it returns. Not enough
// replicas in time is no error: Confirmed says how many there were, and
// the jobs are stored on the master either way.
//
// With aof it first checks that the server has WAITAOF (once; see
// script.Conn.HasCommand): when it does not, nothing is written and the
// error is a *NoWaitAOFError. The error is otherwise EnqueueJobs's.
//
// The timeout is shared: when a call is sent again (NOSCRIPT, a refusal,
// a redirect), its wait is given what is left of it, and the call takes
// about the timeout at most beyond the round trips.
func (s *Store) EnqueueConfirmed(ctx context.Context, to Target, jobs []NewJob, replicas int, timeout time.Duration, aof bool) ([]Enqueued, Confirmed, error) {
	if aof {
		if err := s.checkWaitAOF(ctx); err != nil {
			return nil, Confirmed{}, err
		}
	}
	deadline := time.Now().Add(timeout)
	wait := func() rueidis.Commands {
		// Rounded up, and never 0, which would wait for ever.
		ms := max((time.Until(deadline)+time.Millisecond-1)/time.Millisecond, 1)
		if aof {
			return rueidis.Commands{s.c.B().Waitaof().Numlocal(1).Numreplicas(int64(replicas)).Timeout(int64(ms)).Build()}
		}
		return rueidis.Commands{s.c.B().Wait().Numreplicas(int64(replicas)).Timeout(int64(ms)).Build()}
	}
	replies, waits := script.Enqueue.ExecDedicated(ctx, s.c, wait, s.enqueueCalls(to, jobs)...)
	out, err := enqueued(replies, len(jobs))
	if err != nil {
		return out, Confirmed{}, err
	}
	return out, confirmed(waits, aof), nil
}

// confirmed reads the answers of the waits sent last on each connection
// that wrote.
func confirmed(waits [][]rueidis.RedisResult, aof bool) Confirmed {
	if len(waits) == 0 {
		return Confirmed{Err: errors.New("no connection ran the enqueue")}
	}
	c := Confirmed{Replicas: -1, Local: true}
	for _, w := range waits {
		if len(w) != 1 {
			return Confirmed{Err: fmt.Errorf("%d answers to one wait", len(w))}
		}
		replicas, local, err := waitReply(w[0], aof)
		if err != nil {
			return Confirmed{Err: err}
		}
		if c.Replicas < 0 || replicas < c.Replicas {
			c.Replicas = replicas
		}
		c.Local = c.Local && local
	}
	return c
}

// waitReply decodes WAIT's reply (the replicas) or WAITAOF's ([local,
// replicas]).
func waitReply(res rueidis.RedisResult, aof bool) (replicas int, local bool, err error) {
	if !aof {
		n, err := res.AsInt64()
		if err != nil {
			return 0, false, fmt.Errorf("wait: %w", err)
		}
		return int(n), true, nil
	}
	v, err := res.AsIntSlice()
	if err != nil {
		return 0, false, fmt.Errorf("waitaof: %w", err)
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("waitaof: %d numbers in the reply, want 2", len(v))
	}
	return int(v[1]), v[0] >= 1, nil
}

// checkWaitAOF returns a *NoWaitAOFError when the server lacks WAITAOF.
func (s *Store) checkWaitAOF(ctx context.Context) error {
	has, err := s.c.HasCommand(ctx, "waitaof")
	switch {
	case unknownCommand(err): // a server without COMMAND INFO (the embedded store of courier dev)
		return &NoWaitAOFError{}
	case err != nil:
		return fmt.Errorf("check that Redis has WAITAOF (COMMAND INFO): %w", err)
	case has:
		return nil
	}
	return &NoWaitAOFError{Version: s.version(ctx)}
}

// unknownCommand reports whether err is a server's refusal of a command
// or subcommand it does not know.
func unknownCommand(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && strings.Contains(strings.ToLower(re.Error()), "unknown")
}

// version returns the server's version, "" when it does not say (an ACL
// may refuse INFO).
func (s *Store) version(ctx context.Context) string {
	info, err := s.c.Do(ctx, s.c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return ""
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}
