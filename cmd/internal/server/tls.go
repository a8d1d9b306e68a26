package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// reloadEvery is how often, at most, a handshake looks at the certificate
// files: a stat of two files per second is nothing, and a rotated
// certificate is served within a second.
const reloadEvery = time.Second

// TLSConfig returns the TLS configuration of a listener (Listener.TLS). It
// serves the certificate and key of certFile and keyFile (PEM), and reloads
// them when either file changes on disk, so that a rotated certificate is
// served without a restart; a new pair that fails to load is logged on log
// and the previous one kept. With clientCAFile (PEM) set, clients must
// present a certificate signed by one of its CAs (mutual TLS). TLS 1.2 is
// the least version accepted. The first pair must load.
func TLSConfig(certFile, keyFile, clientCAFile string, log *slog.Logger) (*tls.Config, error) {
	if certFile == "" || keyFile == "" || log == nil {
		return nil, errors.New("server: TLSConfig needs a certificate file, a key file and a logger")
	}
	r, err := newCertReloader(certFile, keyFile, log, time.Now)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile) // #nosec G304 -- a file the operator names in the configuration
		if err != nil {
			return nil, fmt.Errorf("server: read the client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("server: %s holds no PEM certificate", clientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// certReloader serves a certificate pair and reloads it when its files
// change.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	checked time.Time // when the files were last looked at
	// seen is the files' stamp when they were last loaded or tried: a pair
	// that failed is not tried (nor logged) again until a file changes.
	seen fileStamp
}

// newCertReloader loads the pair, which must load, and notes its files'
// stamp; now is the clock that paces the checks.
func newCertReloader(certFile, keyFile string, log *slog.Logger, now func() time.Time) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, now: now}
	r.seen, _ = stampOf(certFile, keyFile) // before loading: a change in between is loaded again
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("server: load the TLS certificate: %w", err)
	}
	r.cert, r.checked = &cert, now()
	return r, nil
}

// fileStamp tells whether a pair of files changed: modification times and
// sizes; the zero value when either file cannot be read.
type fileStamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

func stampOf(certFile, keyFile string) (fileStamp, error) {
	c, err := os.Stat(certFile)
	if err != nil {
		return fileStamp{}, err
	}
	k, err := os.Stat(keyFile)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{certMod: c.ModTime(), keyMod: k.ModTime(), certSize: c.Size(), keySize: k.Size()}, nil
}

// getCertificate is tls.Config.GetCertificate.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.checked) >= reloadEvery {
		r.checked = now
		r.reloadLocked()
	}
	return r.cert, nil
}

// reloadLocked loads the pair again if a file changed since it was last
// seen; r.mu is held.
func (r *certReloader) reloadLocked() {
	st, err := stampOf(r.certFile, r.keyFile)
	if st == r.seen {
		return
	}
	r.seen = st
	var cert tls.Certificate
	if err == nil {
		cert, err = tls.LoadX509KeyPair(r.certFile, r.keyFile)
	}
	if err != nil {
		// Half-written during a rotation, or broken: the next change is
		// tried again, and until then the previous pair is good.
		r.log.Warn("TLS certificate not reloaded; serving the previous one",
			"cert", r.certFile, "key", r.keyFile, "err", err)
		return
	}
	r.cert = &cert
	r.log.Info("TLS certificate reloaded", "cert", r.certFile, "not_after", cert.Leaf.NotAfter)
}
