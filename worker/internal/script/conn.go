package script

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// Conn is a Redis client as the store and the lock use it: scripts run
// through it (Script.Exec), and so do the few plain commands around them,
// each call recorded in its metrics. The zero Conn is not usable; a Conn is
// a small value, passed by value, and its copies share what it learned of
// the server.
type Conn struct {
	client  rueidis.Client
	metrics *metrics.Redis // nil: records nothing
	// flagless is set once the server refused a script's flags line: it
	// gets the scripts without flags from then on.
	flagless *atomic.Bool
	// commands caches HasCommand's answers: command name -> known.
	commands *sync.Map
}

// known is what a server answered about a command, and when.
type known struct {
	has bool
	at  time.Time
}

// unknownRecheck is how long HasCommand trusts a server's answer that it
// lacks a command: an upgraded server gets it without a restart of the
// process.
const unknownRecheck = time.Minute

// Flagless reports whether the server refused a script's flags line (the
// embedded store of courier dev does), so the scripts go without it.
func (c Conn) Flagless() bool { return c.flagless.Load() }

// NewConn returns a Conn on c that records its calls in m (nil: none).
func NewConn(c rueidis.Client, m *metrics.Redis) Conn {
	return Conn{client: c, metrics: m, flagless: new(atomic.Bool), commands: new(sync.Map)}
}

// Cluster reports whether the client talks to a Redis Cluster.
func (c Conn) Cluster() bool { return c.client.Mode() == rueidis.ClientModeCluster }

// B returns the command builder.
func (c Conn) B() rueidis.Builder { return c.client.B() }

// Do sends one plain command and counts its failure, and its refusal (see
// retry.go), under the command's name. A plain command is not resent here:
// its caller decides.
func (c Conn) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	op := opName(cmd) // read before Do: rueidis recycles the command
	res := c.client.Do(ctx, cmd)
	c.metrics.Failed(op, res.Error())
	c.refused(op, res.Error())
	return res
}

// DoMulti sends plain commands in one round trip and counts each failure
// and refusal under its command's name.
func (c Conn) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	ops := make([]string, len(cmds))
	for i, cmd := range cmds {
		ops[i] = opName(cmd)
	}
	out := c.client.DoMulti(ctx, cmds...)
	for i, res := range out {
		c.metrics.Failed(ops[i], res.Error())
		c.refused(ops[i], res.Error())
	}
	return out
}

// HasCommand reports whether the server knows the command name (COMMAND
// INFO), for commands newer than the oldest Redis Courier runs on, such as
// WAITAOF (7.2). A yes is remembered; a no for a minute. On a Cluster it
// asks one node, taken to speak for all.
func (c Conn) HasCommand(ctx context.Context, name string) (bool, error) {
	if v, ok := c.commands.Load(name); ok {
		if k := v.(known); k.has || time.Since(k.at) < unknownRecheck {
			return k.has, nil
		}
	}
	vals, err := c.Do(ctx, c.B().CommandInfo().CommandName(name).Build()).ToArray()
	if err != nil {
		return false, err
	}
	has := len(vals) == 1 && !vals[0].IsNil()
	c.commands.Store(name, known{has: has, at: time.Now()})
	return has, nil
}

// Receive runs a subscription (see rueidis.Client.Receive) and counts it
// as failed when it ends with an error before ctx does.
func (c Conn) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(rueidis.PubSubMessage)) error {
	op := opName(subscribe)
	err := c.client.Receive(ctx, subscribe, fn)
	if ctx.Err() == nil {
		c.metrics.Failed(op, err)
	}
	return err
}

// opName is a plain command's op label: its name in lower case.
func opName(cmd rueidis.Completed) string {
	if args := cmd.Commands(); len(args) > 0 {
		return strings.ToLower(args[0])
	}
	return "unknown"
}
