package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// ListenTLS serves one of Courier's HTTP listeners over TLS (http.tls,
// admin.tls). The files are PEM. Load checks that they load; the server
// reads them itself when it starts.
type ListenTLS struct {
	// CertFile and KeyFile are the server's certificate (chain) and its
	// private key; set both or neither. Default "" (plain HTTP).
	CertFile string `koanf:"cert_file"`
	KeyFile  string `koanf:"key_file"`
	// ClientCAFile turns on mutual TLS: clients must present a
	// certificate signed by one of the CAs in this file. It needs
	// CertFile. Default "" (no client certificates).
	ClientCAFile string `koanf:"client_ca_file"`
}

// Enabled reports whether the listener serves TLS: a validated ListenTLS
// with a certificate has its key too.
func (t ListenTLS) Enabled() bool { return t.CertFile != "" }

// validate adds a problem, under the section at key, for every key of t
// that would stop the listener from starting. Messages name files and Go's
// reasons, never the files' contents.
func (t ListenTLS) validate(key string, ps *problems) {
	switch {
	case t.CertFile == "" && t.KeyFile != "":
		ps.add(key+".cert_file", "is required with key_file: set both or neither")
	case t.CertFile != "" && t.KeyFile == "":
		ps.add(key+".key_file", "is required with cert_file: set both or neither")
	case t.CertFile != "":
		checkKeyPair(key, t.CertFile, t.KeyFile, ps)
	}
	if t.ClientCAFile == "" {
		return
	}
	if t.CertFile == "" {
		ps.add(key+".client_ca_file", "needs cert_file and key_file: client certificates are asked for only over TLS")
		return
	}
	if err := checkCertificates(t.ClientCAFile); err != nil {
		ps.add(key+".client_ca_file", "%v", err)
	}
}

// checkKeyPair adds a problem when the pair does not load as
// tls.LoadX509KeyPair loads it, naming the file at fault when it can.
func checkKeyPair(key, certFile, keyFile string, ps *problems) {
	certPEM, err := os.ReadFile(certFile) // #nosec G304 -- a file the operator names in the configuration
	if err != nil {
		ps.add(key+".cert_file", "%v", err)
		return
	}
	keyPEM, err := os.ReadFile(keyFile) // #nosec G304 -- a file the operator names in the configuration
	if err != nil {
		ps.add(key+".key_file", "%v", err)
		return
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		ps.add(key+".cert_file", "%s and key_file %s do not load as a certificate and its key: %v", certFile, keyFile, err)
	}
}

// checkCertificates checks a file of PEM certificates: every CERTIFICATE
// block must parse, and there must be one.
func checkCertificates(file string) error {
	data, err := os.ReadFile(file) // #nosec G304 -- a file the operator names in the configuration
	if err != nil {
		return err
	}
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("%s: certificate %d does not parse: %w", file, n, err)
		}
	}
	if n == 0 {
		return errors.New(file + " holds no PEM certificate")
	}
	return nil
}
