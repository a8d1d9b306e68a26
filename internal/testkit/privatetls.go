package testkit

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// StartPrivateTLS starts a Redis of t's own (as StartPrivate, with args)
// that also listens with TLS, with a server certificate ca signs (for
// 127.0.0.1 and localhost) and without asking clients for theirs, and
// returns it with its TLS address. It needs a redis-server built with TLS
// (Debian's is).
func StartPrivateTLS(t testing.TB, ca *CA, args ...string) (p *Private, tlsAddr string) {
	t.Helper()
	certFile, keyFile := ca.ServerFiles(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	ports, err := redisproc.FreePorts(1, false)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ports[0])
	p = StartPrivate(t, append([]string{"--tls-port", port, "--tls-cert-file", certFile, "--tls-key-file", keyFile,
		"--tls-ca-cert-file", caFile, "--tls-auth-clients", "no"}, args...)...)
	return p, net.JoinHostPort("127.0.0.1", port)
}
