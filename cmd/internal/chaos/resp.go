package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// The suite talks to Redis nodes in two ways: the producer and the daemons
// use rueidis, as users do; the faults and the checks send single commands
// to one node on a connection of their own (command), so that a node being
// killed, paused or resharded never leaves a client half-way.

// commandTimeout bounds one command sent by command when ctx has no earlier
// deadline.
const commandTimeout = 10 * time.Second

// command sends one command to addr on a connection of its own, within
// commandTimeout (see redisproc.Command for the reply).
func command(ctx context.Context, addr string, args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	return redisproc.Command(ctx, addr, args...)
}

// commandString is command for a reply that is a string.
func commandString(ctx context.Context, addr string, args ...string) (string, error) {
	reply, err := command(ctx, addr, args...)
	if err != nil {
		return "", err
	}
	s, ok := reply.(string)
	if !ok {
		return "", fmt.Errorf("%s to %s: want a string reply, got %T", args[0], addr, reply)
	}
	return s, nil
}

// infoField returns the value of field in an INFO reply, "" when absent.
func infoField(info, field string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
