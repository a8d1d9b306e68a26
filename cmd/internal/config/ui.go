package config

import "time"

// UI configures the web UI under /ui/, served where the HTTP API is
// (http.addr, or admin.addr when set), logging in with admin.tokens.
type UI struct {
	// Enabled serves the UI. Default true.
	Enabled bool `koanf:"enabled"`
	// SessionTTL is how long a login lasts. Default 12h.
	SessionTTL time.Duration `koanf:"session_ttl"`
	// Refresh is how often an open page refreshes its counts and charts
	// (only while its tab is visible). Default 5s.
	Refresh time.Duration `koanf:"refresh"`
}

// History configures each queue's per-minute history in Redis, which the
// web UI charts.
type History struct {
	// Retention is how long the history is kept: 1h to 720h. Default 24h.
	Retention time.Duration `koanf:"retention"`
}

// Defaults and bounds of the ui section.
const (
	UISessionTTLDefault = 12 * time.Hour
	UIRefreshDefault    = 5 * time.Second
	uiSessionTTLMin     = time.Minute
	uiSessionTTLMax     = 30 * 24 * time.Hour
	uiRefreshMin        = time.Second
	uiRefreshMax        = 10 * time.Minute
)

func uiDefault() UI {
	return UI{Enabled: true, SessionTTL: UISessionTTLDefault, Refresh: UIRefreshDefault}
}

func (u *UI) validate(ps *problems) {
	if u.SessionTTL < uiSessionTTLMin || u.SessionTTL > uiSessionTTLMax {
		ps.add("ui.session_ttl", "must be %s to %s (got %s)", uiSessionTTLMin, uiSessionTTLMax, u.SessionTTL)
	}
	if u.Refresh < uiRefreshMin || u.Refresh > uiRefreshMax {
		ps.add("ui.refresh", "must be %s to %s (got %s)", uiRefreshMin, uiRefreshMax, u.Refresh)
	}
}
