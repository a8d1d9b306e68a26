package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/redis/rueidis"
)

// ClientOption returns the rueidis options for r. Redis Cluster needs no
// option: rueidis detects it. With Sentinel.Master set, Addr lists the
// sentinels.
func (r *Redis) ClientOption() (rueidis.ClientOption, error) {
	opt := rueidis.ClientOption{
		InitAddress: r.Addr,
		Username:    r.Username,
		Password:    r.Password.Reveal(),
		SelectDB:    r.DB,
		Dialer:      net.Dialer{Timeout: r.DialTimeout},
		// Courier's data is written by scripts and read once; server-assisted
		// client-side caching would only cost memory and invalidations.
		DisableCache: true,
	}
	if r.TLS.Enabled {
		t, err := r.TLS.config()
		if err != nil {
			return rueidis.ClientOption{}, err
		}
		opt.TLSConfig = t
	}
	if r.Sentinel.Master != "" {
		opt.Sentinel = rueidis.SentinelOption{
			MasterSet: r.Sentinel.Master,
			Username:  r.Sentinel.Username,
			Password:  r.Sentinel.Password.Reveal(),
			TLSConfig: opt.TLSConfig,
		}
	}
	return opt, nil
}

func (t *TLS) config() (*tls.Config, error) {
	c := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, // #nosec G402 -- the operator's explicit choice, warned of at every start
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("redis.tls.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redis.tls.ca_file: %s holds no PEM certificate", t.CAFile)
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("redis.tls.cert_file: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}
