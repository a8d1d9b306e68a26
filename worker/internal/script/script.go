package script

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"time"

	"github.com/redis/rueidis"
)

// Repeat says whether a call of a script may be sent again when its outcome
// is unknown (the connection broke after it was sent).
type Repeat int

const (
	// Once scripts are never resent: Redis may have run the call, and
	// running it twice would do more than once.
	Once Repeat = iota
	// Resend scripts may be resent by rueidis after a network error: they
	// only read, or a second run changes nothing more.
	Resend
)

// Script is one declared script: see the catalog in scripts.go.
type Script struct {
	name   string
	src    string // what is sent with EVAL: the file with its helpers
	sha    string // SHA1 of src, for EVALSHA
	repeat Repeat
}

// declare returns the script of lua/<name>.lua. The files are embedded,
// so an error here is a broken build, caught by this package's tests.
func declare(name string, repeat Repeat) *Script {
	src, err := source(name)
	if err != nil {
		panic(err) // a missing or malformed embedded file: script_test.go fails first
	}
	return newScript(name, src, repeat)
}

// newScript returns the script src called name.
func newScript(name, src string, repeat Repeat) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{name: name, src: src, sha: hex.EncodeToString(sum[:]), repeat: repeat}
}

// Name returns the script's name: its file name without ".lua". Metrics
// label its calls with it.
func (s *Script) Name() string { return s.name }

// Source returns what is sent to Redis: the script with the helpers it uses.
func (s *Script) Source() string { return s.src }

// SHA returns the SHA1 of Source, which EVALSHA names the script by.
func (s *Script) SHA() string { return s.sha }

// Repeat returns whether a call may be sent again after an unknown outcome.
func (s *Script) Repeat() Repeat { return s.repeat }

// Call is one call's keys and arguments.
type Call struct {
	Keys, Args []string
}

// Exec runs one call of the script: EVALSHA, then EVAL when Redis does not
// have the script cached.
func (s *Script) Exec(ctx context.Context, c Conn, keys, args []string) rueidis.RedisResult {
	start := time.Now()
	res := c.client.Do(ctx, s.evalsha(c.client, keys, args))
	if isNoScript(res.Error()) {
		res = c.client.Do(ctx, s.eval(c.client, keys, args))
	}
	c.metrics.Script(s.name, time.Since(start), res.Error())
	return res
}

// ExecMulti runs calls in one round trip (two when a node lacks the
// script) and returns their results in order. It is timed once; each
// failed call counts as an error.
func (s *Script) ExecMulti(ctx context.Context, c Conn, calls ...Call) []rueidis.RedisResult {
	if len(calls) == 0 {
		return nil
	}
	start := time.Now()
	cmds := make(rueidis.Commands, len(calls))
	for i, call := range calls {
		cmds[i] = s.evalsha(c.client, call.Keys, call.Args)
	}
	out := c.client.DoMulti(ctx, cmds...)
	var again []int
	for i, res := range out {
		if isNoScript(res.Error()) {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		cmds = make(rueidis.Commands, len(again))
		for j, i := range again {
			cmds[j] = s.eval(c.client, calls[i].Keys, calls[i].Args)
		}
		for j, res := range c.client.DoMulti(ctx, cmds...) {
			out[again[j]] = res
		}
	}
	took := time.Since(start)
	c.metrics.Script(s.name, took, nil)
	for _, res := range out {
		c.metrics.Failed(s.name, res.Error())
	}
	return out
}

func (s *Script) evalsha(c rueidis.Client, keys, args []string) rueidis.Completed {
	return s.retryable(c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
}

func (s *Script) eval(c rueidis.Client, keys, args []string) rueidis.Completed {
	return s.retryable(c.B().Eval().Script(s.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
}

// retryable marks cmd for rueidis to resend after a network error when the
// script is declared Resend: the one place that decides.
func (s *Script) retryable(cmd rueidis.Completed) rueidis.Completed {
	if s.repeat == Resend {
		return cmd.ToRetryable()
	}
	return cmd
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}
