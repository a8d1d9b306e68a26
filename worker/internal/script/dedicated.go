package script

import (
	"context"

	"github.com/redis/rueidis"
)

// ExecDedicated runs calls as ExecMulti does, but on a connection taken
// for them alone, and sends the commands extra returns right after them
// on that connection, in the same round trip. It is what WAIT needs: WAIT
// counts the replicas that have the writes of the connection it is sent
// on, so it tells about a script's writes only when it follows them on
// theirs. On a Cluster the connection is to the master of the calls' slot
// (every call must be of one slot; extra's commands must be keyless).
//
// A call answered NOSCRIPT goes again as EVAL on the same connection, with
// extra's commands after it again. Calls refused until something passes
// (retry.go) and calls redirected (MOVED, ASK: the slot moved) are sent
// again after the backoff, on a new connection, until Redis runs them or
// ctx ends. extra is called for each round trip, since rueidis recycles
// the commands it sent; it may shorten a timeout as time passes.
//
// It returns each call's result and, for each connection on which a call
// ran (or may have: a connection that failed), the results of the extra
// commands sent last on it, which came after every write made on it.
// ExecDedicated is not timed under the script's name (the extra commands,
// a WAIT, would be most of the time); each failed call counts as an
// error under the script's name, and each failed extra command under its
// command's name.
func (s *Script) ExecDedicated(ctx context.Context, c Conn, extra func() rueidis.Commands, calls ...Call) ([]rueidis.RedisResult, [][]rueidis.RedisResult) {
	if len(calls) == 0 {
		return nil, nil
	}
	out := make([]rueidis.RedisResult, len(calls))
	pending := make([]int, len(calls))
	for i := range pending {
		pending[i] = i
	}
	var extras [][]rueidis.RedisResult
	retrying(ctx, func() bool {
		var last []rueidis.RedisResult
		_ = c.client.Dedicated(func(d rueidis.DedicatedClient) error {
			last = s.sendDedicated(ctx, c, d, extra, calls, pending, out)
			return nil
		})
		ran := false
		again := pending[:0] // filtered in place
		for _, i := range pending {
			err := out[i].Error()
			if c.refused(s.name, err) || redirected(err) {
				again = append(again, i)
			} else {
				ran = true
			}
		}
		pending = again
		if ran {
			extras = append(extras, last)
		}
		return len(pending) > 0
	})
	for _, res := range out {
		c.metrics.Failed(s.name, res.Error())
	}
	return out, extras
}

// sendDedicated sends the calls of pending once on d, as sendMulti does,
// each round trip followed by extra's commands; it puts the calls' results
// in out and returns the results of the extra commands sent last.
func (s *Script) sendDedicated(ctx context.Context, c Conn, d rueidis.DedicatedClient, extra func() rueidis.Commands,
	calls []Call, pending []int, out []rueidis.RedisResult) []rueidis.RedisResult {
	var last []rueidis.RedisResult
	s.sendSteps(c, calls, pending, out, func(cmds rueidis.Commands) []rueidis.RedisResult {
		more := extra()
		ops := make([]string, len(more))
		for j, cmd := range more {
			ops[j] = opName(cmd) // before DoMulti: rueidis recycles the command
		}
		res := d.DoMulti(ctx, append(cmds, more...)...)
		last = res[len(cmds):]
		for j, r := range last {
			c.metrics.Failed(ops[j], r.Error())
			c.refused(ops[j], r.Error())
		}
		return res[:len(cmds)]
	})
	return last
}

// redirected reports whether err is a MOVED or ASK reply: the call did not
// run, and a dedicated connection does not follow the redirect (rueidis
// refreshes its slot map, so a new connection goes to the right node once
// the slot has moved).
func redirected(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return false
	}
	_, moved := re.IsMoved()
	_, ask := re.IsAsk()
	return moved || ask
}
