package script

import (
	"context"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Exec runs one call of the script: EVALSHA, then EVAL when Redis does not
// have the script cached. A reply that refuses the call until something
// passes (see retry.go) sends it again until Redis runs it or ctx ends.
func (s *Script) Exec(ctx context.Context, c Conn, keys, args []string) rueidis.RedisResult {
	start := time.Now()
	var res rueidis.RedisResult
	retrying(ctx, func() bool {
		res = s.send(ctx, c, keys, args)
		return c.refused(s.name, res.Error())
	})
	c.metrics.Script(s.name, time.Since(start), res.Error())
	return res
}

// ExecMulti runs calls in one round trip (two when a node lacks the
// script) and returns their results in order. Calls refused until
// something passes are sent again, alone, until Redis runs them or ctx
// ends. It is timed once; each failed call counts as an error.
func (s *Script) ExecMulti(ctx context.Context, c Conn, calls ...Call) []rueidis.RedisResult {
	if len(calls) == 0 {
		return nil
	}
	start := time.Now()
	out := make([]rueidis.RedisResult, len(calls))
	pending := make([]int, len(calls))
	for i := range pending {
		pending[i] = i
	}
	retrying(ctx, func() bool {
		s.sendMulti(ctx, c, calls, pending, out)
		again := pending[:0] // filtered in place
		for _, i := range pending {
			if c.refused(s.name, out[i].Error()) {
				again = append(again, i)
			}
		}
		pending = again
		return len(pending) > 0
	})
	c.metrics.Script(s.name, time.Since(start), nil)
	for _, res := range out {
		c.metrics.Failed(s.name, res.Error())
	}
	return out
}

// send runs one call once: EVALSHA, then EVAL when Redis lacks the
// script, and the plain text when the server refuses the flags line.
func (s *Script) send(ctx context.Context, c Conn, keys, args []string) rueidis.RedisResult {
	v := s.variant(c)
	res := c.client.Do(ctx, s.evalsha(c, v, keys, args))
	if !isNoScript(res.Error()) {
		return res
	}
	res = c.client.Do(ctx, s.eval(c, v, keys, args))
	if v.sha != s.plain.sha && flagsRefused(res.Error()) {
		c.flagless.Store(true)
		res = c.client.Do(ctx, s.eval(c, s.plain, keys, args))
	}
	return res
}

// sendMulti sends the calls of pending once, as send does, in one round
// trip per step, and puts their results in out.
func (s *Script) sendMulti(ctx context.Context, c Conn, calls []Call, pending []int, out []rueidis.RedisResult) {
	s.sendSteps(c, calls, pending, out, func(cmds rueidis.Commands) []rueidis.RedisResult {
		return c.client.DoMulti(ctx, cmds...)
	})
}

// sendSteps sends the calls of pending once, each step in one round trip
// through do, which answers each command in order: EVALSHA, then EVAL for
// the calls whose node lacked the script, then the plain text for those
// whose server refused the flags line. It puts their results in out.
func (s *Script) sendSteps(c Conn, calls []Call, pending []int, out []rueidis.RedisResult, do func(rueidis.Commands) []rueidis.RedisResult) {
	v := s.variant(c)
	build := func(idx []int, cmd func(keys, args []string) rueidis.Completed) rueidis.Commands {
		cmds := make(rueidis.Commands, len(idx))
		for j, i := range idx {
			cmds[j] = cmd(calls[i].Keys, calls[i].Args)
		}
		return cmds
	}
	var again []int
	for j, res := range do(build(pending, func(k, a []string) rueidis.Completed { return s.evalsha(c, v, k, a) })) {
		out[pending[j]] = res
		if isNoScript(res.Error()) {
			again = append(again, pending[j])
		}
	}
	for len(again) > 0 {
		var flagless []int
		for j, res := range do(build(again, func(k, a []string) rueidis.Completed { return s.eval(c, v, k, a) })) {
			out[again[j]] = res
			if v.sha != s.plain.sha && flagsRefused(res.Error()) {
				flagless = append(flagless, again[j])
			}
		}
		if len(flagless) > 0 {
			c.flagless.Store(true)
			v = s.plain
		}
		again = flagless
	}
}

// variant returns the text c's server runs: plain once it refused flags.
func (s *Script) variant(c Conn) variant {
	if c.flagless.Load() {
		return s.plain
	}
	return s.flagged
}

func (s *Script) evalsha(c Conn, v variant, keys, args []string) rueidis.Completed {
	return s.retryable(c.B().Evalsha().Sha1(v.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
}

func (s *Script) eval(c Conn, v variant, keys, args []string) rueidis.Completed {
	return s.retryable(c.B().Eval().Script(v.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build())
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

// flagsRefused reports whether err is a server's refusal to compile the
// flags line ("#!lua flags=…"): a Lua syntax error at the '#' of line 1,
// as the embedded store of courier dev (gopher-lua: "<string> line:1(column:1)
// near '#'") and Redis before 7.0 ("user_script:1: unexpected symbol near
// '#'") answer. Redis 7 compiles every flagged source, so the error can
// only be that.
func flagsRefused(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return false
	}
	msg := re.Error()
	return strings.Contains(msg, "Error compiling script") && strings.Contains(msg, "near '#'")
}
