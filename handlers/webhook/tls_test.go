package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// hostileName is a certificate name that would retitle a terminal, ring
// its bell and forge a line of output if printed as it is.
const hostileName = "\x1b]0;pwned\x07\r\nstate: done"

// hostileServer is an HTTPS server whose self-signed certificate names
// hostileName, and a pool that trusts it.
func hostileServer(t *testing.T) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: hostileName},
		DNSNames:              []string{hostileName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail on purpose
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pool
}

// A TLS error quoting the certificate's names reaches the job's error with
// its control characters escaped, on one line.
func TestTLSErrorEscaped(t *testing.T) {
	t.Parallel()
	srv, pool := hostileServer(t)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHandler(t, Settings{URL: "https://localhost:" + u.Port() + "/hook", AllowNetworks: []string{"127.0.0.0/8", "::1/128"}})
	h.client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}

	err = h.Handle(t.Context(), &worker.Job{ID: "j1", Queue: "q", Payload: []byte(`{}`), Attempt: 1})
	if err == nil {
		t.Fatal("Handle = nil; want a TLS error")
	}
	msg := err.Error()
	if strings.ContainsFunc(msg, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		t.Errorf("error = %q; it holds control characters", msg)
	}
	if want := `certificate is valid for \x1b]0;pwned\x07  state: done, not localhost`; !strings.Contains(msg, want) {
		t.Errorf("error = %q; want it to contain %q", msg, want)
	}
}
