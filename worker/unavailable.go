package worker

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// IsRedisUnavailable reports whether err says that Redis could not serve
// the call for now, so that the same call may succeed later: Redis could
// not be reached (refused, reset or timed-out connections, a closed
// client), it answered that it cannot serve yet (LOADING, BUSY,
// MASTERDOWN, CLUSTERDOWN, TRYAGAIN, READONLY), or it is out of memory
// (ErrRedisOOM and the OOM reply). A caller's own cancelled context is not
// unavailability; a deadline that ran out while waiting for Redis is. The
// HTTP API answers these with 503 and Retry-After, and the CLI exits with
// its "Redis unavailable" code.
func IsRedisUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrRedisOOM) || errors.Is(err, rueidis.ErrClosing) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var re *rueidis.RedisError
	if errors.As(err, &re) {
		return !re.IsNil() && metrics.Refusal(err) != ""
	}
	// Not any net.Error: a syscall.Errno is one too, and a missing file or
	// a port this process cannot listen on says nothing about Redis.
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op != "listen"
	}
	var de *net.DNSError
	return errors.As(err, &de) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
