package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/seed-53d105c9/courier/worker"
)

// TestIsRedisUnavailable: what says Redis cannot serve now, and what says
// something else (a file, a listener, a caller's cancel, a plain failure).
func TestIsRedisUnavailable(t *testing.T) {
	t.Parallel()
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	listen := &net.OpError{Op: "listen", Net: "tcp", Err: os.NewSyscallError("bind", syscall.EADDRINUSE)}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("connect to Redis: %w", dial), true},
		{syscall.ECONNRESET, true},
		{fmt.Errorf("enqueue: %w", worker.ErrRedisOOM), true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{listen, false},
		{&fs.PathError{Op: "open", Path: "x.yaml", Err: syscall.ENOENT}, false},
		{errors.New("boom"), false},
		{worker.ErrNotFound, false},
	} {
		if got := worker.IsRedisUnavailable(c.err); got != c.want {
			t.Errorf("IsRedisUnavailable(%v) = %v; want %v", c.err, got, c.want)
		}
	}
}
