package testkit_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestCA: a server certificate verifies for 127.0.0.1 and localhost
// against the CA's pool and against its PEM, not against another CA's;
// a client certificate verifies for client authentication only.
func TestCA(t *testing.T) {
	t.Parallel()
	ca, other := testkit.NewCA(t), testkit.NewCA(t)
	fromPEM := x509.NewCertPool()
	if !fromPEM.AppendCertsFromPEM(ca.PEM()) {
		t.Fatal("PEM() holds no certificate")
	}
	certFile, keyFile := ca.ServerFiles(t)
	server, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	client := ca.ClientCert(t)

	verify := func(c tls.Certificate, roots *x509.CertPool, name string, usage x509.ExtKeyUsage) error {
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if err := verify(server, ca.Pool(), name, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("server certificate for %s: %v", name, err)
		}
	}
	if err := verify(server, fromPEM, "127.0.0.1", x509.ExtKeyUsageServerAuth); err != nil {
		t.Errorf("server certificate against PEM(): %v", err)
	}
	if err := verify(server, other.Pool(), "127.0.0.1", x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("server certificate verified against another CA")
	}
	if err := verify(client, ca.Pool(), "", x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if err := verify(client, ca.Pool(), "", x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("client certificate verified as a server's")
	}
}
