package config

import (
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// tlsFiles are PEM files for the listener tests.
type tlsFiles struct {
	cert, key     string // a server pair of the test CA
	otherKey      string // the key of another pair
	ca            string // a CA file: the test CA's certificate
	notPEM        string // text that is no PEM
	badCert       string // a CERTIFICATE block that does not parse
	pemTextInFile string // a line of the key file, which no message may show
}

// writeTLSFiles writes a server pair of a test CA, the CA's certificate,
// another key and broken files into temporary directories.
func writeTLSFiles(t *testing.T) tlsFiles {
	t.Helper()
	ca := testkit.NewCA(t)
	f := tlsFiles{}
	f.cert, f.key = ca.ServerFiles(t)
	keyPEM, err := os.ReadFile(f.key)
	if err != nil {
		t.Fatal(err)
	}
	f.pemTextInFile = strings.Split(string(keyPEM), "\n")[1]

	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	_, otherKey := ca.Issue(t, 3, false)
	f.otherKey = write("other.pem", otherKey)
	f.ca = write("ca.pem", ca.PEM())
	f.notPEM = write("not.pem", []byte("hunter2 is no certificate\n"))
	f.badCert = write("bad.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("hunter2")}))
	return f
}

// TestListenTLS: http.tls and admin.tls load a good pair and a CA, and
// name the key and the cause of every bad one, never a file's contents.
func TestListenTLS(t *testing.T) {
	t.Parallel()
	f := writeTLSFiles(t)
	section := func(name, cert, key, ca string) string {
		s := name + ":\n"
		if name == "admin" {
			s += "  addr: 127.0.0.1:0\n"
		}
		s += "  tls:\n"
		for k, v := range map[string]string{"cert_file": cert, "key_file": key, "client_ca_file": ca} {
			if v != "" {
				s += "    " + k + ": " + v + "\n"
			}
		}
		return s
	}

	for _, name := range []string{"http", "admin"} {
		t.Run(name+" loads", func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(Sources{File: writeFile(t, section(name, f.cert, f.key, f.ca))})
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.HTTP.TLS
			if name == "admin" {
				got = cfg.Admin.TLS
			}
			if got != (ListenTLS{CertFile: f.cert, KeyFile: f.key, ClientCAFile: f.ca}) || !got.Enabled() {
				t.Errorf("%s.tls = %+v, enabled %t", name, got, got.Enabled())
			}
		})
	}

	tests := []struct {
		name          string
		cert, key, ca string
		key2          string // the key of the problem, under <section>.tls
		msg           string
	}{
		{"cert without key", f.cert, "", "", "key_file", "is required with cert_file: set both or neither"},
		{"key without cert", "", f.key, "", "cert_file", "is required with key_file: set both or neither"},
		{"client CA without cert", "", "", f.ca, "client_ca_file", "needs cert_file"},
		{"missing cert file", "/nonexistent/cert.pem", f.key, "", "cert_file", "open /nonexistent/cert.pem: no such file"},
		{"missing key file", f.cert, "/nonexistent/key.pem", "", "key_file", "open /nonexistent/key.pem: no such file"},
		{"key of another pair", f.cert, f.otherKey, "", "cert_file", "do not load as a certificate and its key: tls: private key does not match public key"},
		{"cert file is no PEM", f.notPEM, f.key, "", "cert_file", "do not load as a certificate and its key"},
		{"key given as the cert", f.key, f.cert, "", "cert_file", "do not load as a certificate and its key"},
		{"missing CA file", f.cert, f.key, "/nonexistent/ca.pem", "client_ca_file", "no such file"},
		{"CA file is no PEM", f.cert, f.key, f.notPEM, "client_ca_file", "holds no PEM certificate"},
		{"CA file holds a key", f.cert, f.key, f.key, "client_ca_file", "holds no PEM certificate"},
		{"CA certificate does not parse", f.cert, f.key, f.badCert, "client_ca_file", "certificate 1 does not parse"},
	}
	for _, name := range []string{"http", "admin"} {
		for _, tt := range tests {
			t.Run(name+" "+tt.name, func(t *testing.T) {
				t.Parallel()
				_, err := Load(Sources{File: writeFile(t, section(name, tt.cert, tt.key, tt.ca))})
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Load: %v; want an *Error", err)
				}
				if s := err.Error(); strings.Contains(s, "hunter2") || strings.Contains(s, f.pemTextInFile) || strings.Contains(s, "BEGIN") {
					t.Errorf("a message shows a file's contents:\n%v", err)
				}
				want := name + ".tls." + tt.key2
				for _, p := range e.Problems {
					if p.Key == want && strings.Contains(p.Message, tt.msg) {
						return
					}
				}
				t.Errorf("problems:\n%v\nwant one for %s containing %q", err, want, tt.msg)
			})
		}
	}

	t.Run("admin.tls without admin.addr", func(t *testing.T) {
		t.Parallel()
		_, err := Load(Sources{File: writeFile(t, "admin:\n  tls:\n    client_ca_file: "+f.ca+"\n")})
		var e *Error
		if !errors.As(err, &e) || len(e.Problems) != 1 || e.Problems[0].Key != "admin.tls" ||
			e.Problems[0].Message != "applies to admin.addr's own listener; set admin.addr, or use http.tls for the API on http.addr" {
			t.Errorf("Load: %v; want the one problem admin.tls", err)
		}
	})
}
