package worker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
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
		{fmt.Errorf("partitions of queue %q: %w", "q", rueidis.ErrNoSlot), true}, // a Cluster failing over
		{rueidis.ErrClosing, true},
		{rueidis.ErrNoAddr, false}, // no address configured
		// TLS: what only a person fixes, though an alert arrives as a
		// *net.OpError.
		{&net.OpError{Op: "remote error", Err: tls.AlertError(42)}, false}, // bad certificate
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false},
		{fmt.Errorf("dial: %w", x509.HostnameError{Host: "redis"}), false},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, false},
		{&fs.PathError{Op: "open", Path: "x.yaml", Err: syscall.ENOENT}, false},
		{errors.New("boom"), false},
		{worker.ErrNotFound, false},
	} {
		if got := worker.IsRedisUnavailable(c.err); got != c.want {
			t.Errorf("IsRedisUnavailable(%v) = %v; want %v", c.err, got, c.want)
		}
	}
}

// TestIsRedisUnavailableReplies has Redis answer each error reply (through
// a script, as the store's calls get them) and checks which of them a
// retry can fix: what Dial and Daemon.Run wait out at start-up, and what
// they return at once.
func TestIsRedisUnavailableReplies(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	for _, c := range []struct {
		reply string
		want  bool
	}{
		{"LOADING Redis is loading the dataset in memory", true},
		{"CLUSTERDOWN The cluster is down", true},
		{"CLUSTERDOWN Hash slot not served", true},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"BUSY Redis is busy running a script.", true},
		{"READONLY You can't write against a read only replica.", true}, // a failover under way
		{"OOM command not allowed when used memory > 'maxmemory'.", true},
		{"WRONGPASS invalid username-password pair or user is disabled.", false},
		{"NOAUTH Authentication required.", false},
		{"NOPERM User courier has no permissions to run the 'evalsha' command", false},
		{"ERR unknown command 'HELLO'", false},
		{"ERR DB index is out of range", false},
	} {
		err := rdb.Do(t.Context(), rdb.B().Eval().Script("return redis.error_reply(ARGV[1])").Numkeys(0).Arg(c.reply).Build()).Error()
		if err == nil {
			t.Fatalf("%q: no error", c.reply)
		}
		if got := worker.IsRedisUnavailable(fmt.Errorf("start: %w", err)); got != c.want {
			t.Errorf("IsRedisUnavailable(%q) = %v; want %v", err, got, c.want)
		}
	}
}
