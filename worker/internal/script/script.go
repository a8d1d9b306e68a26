// Package script runs many calls of one Lua script in a single round trip.
//
// rueidis's Lua.ExecMulti sends SCRIPT LOAD to every node before each batch,
// which doubles the round trips of a hot path. Here every call goes as
// EVALSHA in one DoMulti (rueidis pipelines the commands of each cluster
// node together); calls answered NOSCRIPT, which Redis did not run, go again
// as EVAL, which also caches the script for the next time.
package script

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

	"github.com/redis/rueidis"
)

// Script is one Lua script.
type Script struct {
	src, sha  string
	retryable bool
}

// New returns the script src. Only a script that is safe to run twice may be
// retryable: rueidis then resends it after a network error.
func New(src string, retryable bool) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(sum[:]), retryable: retryable}
}

// Call is one call's keys and arguments.
type Call struct {
	Keys, Args []string
}

// ExecMulti runs calls, in one round trip unless a node lacks the script,
// and returns their results in order.
func (s *Script) ExecMulti(ctx context.Context, c rueidis.Client, calls ...Call) []rueidis.RedisResult {
	cmds := make(rueidis.Commands, len(calls))
	for i, call := range calls {
		cmds[i] = s.build(c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(call.Keys))).Key(call.Keys...).Arg(call.Args...).Build())
	}
	out := c.DoMulti(ctx, cmds...)
	var again []int
	for i, res := range out {
		if re, ok := rueidis.IsRedisErr(res.Error()); ok && re.IsNoScript() {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return out
	}
	cmds = make(rueidis.Commands, len(again))
	for j, i := range again {
		call := calls[i]
		cmds[j] = s.build(c.B().Eval().Script(s.src).Numkeys(int64(len(call.Keys))).Key(call.Keys...).Arg(call.Args...).Build())
	}
	for j, res := range c.DoMulti(ctx, cmds...) {
		out[again[j]] = res
	}
	return out
}

func (s *Script) build(cmd rueidis.Completed) rueidis.Completed {
	if s.retryable {
		return cmd.ToRetryable()
	}
	return cmd
}
