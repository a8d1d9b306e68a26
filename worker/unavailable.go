package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
// client, a host name not resolved yet), it answered that it cannot serve
// yet (LOADING, BUSY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN, READONLY during a
// failover), a Cluster slot has no node while a failover runs
// (rueidis.ErrNoSlot), or it is out of memory (ErrRedisOOM and the OOM
// reply). A caller's own cancelled context is not unavailability; a
// deadline that ran out while waiting for Redis is. Neither is what only a
// person can fix: credentials Redis refused (WRONGPASS, NOAUTH, NOPERM),
// a TLS handshake or certificate either side refused, any other error
// reply. Dial, Daemon.Run, the HTTP API and the CLI all decide by it.
func IsRedisUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || isTLSFailure(err) {
		return false
	}
	if errors.Is(err, ErrRedisOOM) || errors.Is(err, rueidis.ErrClosing) || errors.Is(err, rueidis.ErrNoSlot) ||
		errors.Is(err, context.DeadlineExceeded) {
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

// isTLSFailure reports whether err is a TLS handshake that failed for a
// reason of configuration: a server certificate not trusted or not
// matching the address, an alert by which the server refused the client's
// certificate or the handshake, or a server that does not speak TLS. An alert arrives wrapped in a *net.OpError, so
// this is checked before the network errors.
func isTLSFailure(err error) bool {
	var (
		alert   tls.AlertError
		verify  *tls.CertificateVerificationError
		header  tls.RecordHeaderError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &alert) || errors.As(err, &verify) || errors.As(err, &header) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}
