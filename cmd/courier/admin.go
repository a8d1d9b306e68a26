package main

import (
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/server"
	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// adminAPI is the daemon's HTTP API under /v1 and its web UI under /ui/:
// mounted on the main listener, or served on admin.addr by a listener of
// their own.
type adminAPI struct {
	handler http.Handler
	// ui is the web UI, which logs in with the API's tokens and acts
	// through its routes: served when the API is and ui.enabled is set,
	// else a page saying why not.
	ui http.Handler
	// uiServed is set when ui is the UI itself.
	uiServed bool
	// client is the API's and the UI's backend, the operator's client,
	// once Redis is reached.
	client atomic.Pointer[admin.Client]
	// rdb is the Redis client, once reached: the UI keeps log-outs there.
	rdb atomic.Pointer[rueidis.Client]
	// open is set when the API serves without authentication.
	open bool
}

// newAdminAPI builds the API the configuration asks for, counting its
// failed authentications in reg. Without a token
// and without admin.insecure_no_auth the API is not served (courier run
// refuses that configuration when admin.addr is set): requests under /v1/
// get 404 and the reason.
func (d *daemon) newAdminAPI(reg prometheus.Registerer) (*adminAPI, error) {
	a := &adminAPI{}
	c := &d.cfg.Admin
	if err := c.RequireAuth(); err != nil {
		d.log.Warn("HTTP API disabled", "reason", err.Error())
		a.handler = api.Disabled("the HTTP API is disabled: " + err.Error())
		a.ui = ui.Disabled("the web UI is disabled, as the HTTP API is: " + err.Error())
		return a, nil
	}
	// Each request's work must end before its listener's write timeout.
	work := c.WriteTimeout
	if c.Addr == "" {
		work = min(work, server.DefaultTimeouts.Write) // the main listener's
	}
	tokens := make([]api.Token, len(c.Tokens))
	for i, t := range c.Tokens {
		tokens[i] = api.Token{Name: t.Name, Secret: t.Token.Reveal(), Role: api.Role(t.Role), Queues: t.Queues}
	}
	h, err := api.New(api.Options{
		Backend: func() admin.Operator {
			if c := a.client.Load(); c != nil {
				return c
			}
			return nil
		},
		Tokens:          tokens,
		InsecureNoAuth:  c.InsecureNoAuth,
		AllowedHosts:    c.AllowedHosts,
		RateLimit:       c.RateLimitValue(),
		FailedAuthLimit: c.FailedAuthLimitValue(),
		MaxQueues:       c.MaxQueues,
		Registerer:      reg,
		Limits: api.Limits{
			MaxPayloadBytes: d.cfg.Jobs.MaxPayloadBytes,
			MaxBatch:        c.MaxBatch,
			MaxBodyBytes:    c.MaxBodyBytes,
		},
		WriteTimeout: work,
		Logger:       d.log,
	})
	if err != nil {
		return nil, err
	}
	a.handler, a.open = h, c.InsecureNoAuth
	if !d.cfg.UI.Enabled {
		a.ui = ui.Disabled("the web UI is disabled: ui.enabled is false")
		return a, nil
	}
	a.ui, err = ui.New(ui.Options{
		Backend: func() ui.Backend {
			if c := a.client.Load(); c != nil {
				return c
			}
			return nil
		},
		API: h,
		Revocations: ui.RedisRevocations(func() rueidis.Client {
			if c := a.rdb.Load(); c != nil {
				return *c
			}
			return nil
		}, d.cfg.Redis.Prefix),
		SessionTTL: d.cfg.UI.SessionTTL,
		Refresh:    d.cfg.UI.Refresh,
		Logger:     d.log,
	})
	if err != nil {
		return nil, err
	}
	a.uiServed = true
	return a, nil
}

// mount adds the API and the UI to a listener's handlers: /v1/, /ui/, and
// / sending browsers to the UI when it is served.
func (a *adminAPI) mount(handle func(pattern string, h http.Handler)) {
	handle("/v1/", a.handler)
	handle("/ui/", a.ui)
	if a.uiServed {
		handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	}
}

// warnOpen says loudly that anyone may use an API without authentication.
func (d *daemon) warnOpen(a *adminAPI, addr string) {
	if !a.open {
		return
	}
	d.log.Warn("HTTP API WITHOUT AUTHENTICATION: admin.insecure_no_auth is true, so anyone who reaches "+addr+
		" may enqueue, cancel, requeue and purge jobs; configure admin.tokens outside development",
		"addr", addr, "loopback_only", loopback(addr))
}

// connected gives the API and the UI their operator's client on rdb;
// with the daemon's configuration, so that the jobs it enqueues count in
// courier_jobs_enqueued_total.
func (a *adminAPI) connected(rdb rueidis.Client, cfg worker.Config) error {
	c, err := admin.NewClient(rdb, cfg)
	if err != nil {
		return fmt.Errorf("admin API client: %w", err)
	}
	a.client.Store(c)
	a.rdb.Store(&rdb)
	return nil
}

// loopback reports whether addr (host:port) listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
