package ui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

//go:embed templates/*.html
var templateFS embed.FS

// pageNames are the templates under templates/ that render a page inside
// layout.html.
func pageNames() []string {
	return []string{"overview", "queue", "job", "keys", "key", "periodic", "fleet", "locks", "login", "confirm", "error"}
}

// view is what layout.html renders: the frame of every page and the page's
// own data.
type view struct {
	Title    string
	Nav      string // the active item of the nav
	User     *user  // nil without a session
	CSRF     string
	Flash    *flash
	Rendered time.Time
	Refresh  int64 // live refresh interval in ms; 0 for none
	CSS, JS  string
	Data     any
}

// user is the session's principal as the frame shows it. Fleet: it may
// read the queues (GET /v1/queues), so the nav leads to the pages across
// them (periodic, fleet, locks).
type user struct {
	Name  string
	Role  api.Role
	Fleet bool
	Open  bool
}

// parsePages parses each page with the layout and the functions.
func parsePages() (map[string]*template.Template, error) {
	pages := make(map[string]*template.Template)
	for _, name := range pageNames() {
		t, err := template.New(name).Funcs(funcs()).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: parse template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// parseDisabled parses the page of a UI that is not served.
func parseDisabled() (*template.Template, error) {
	return template.ParseFS(templateFS, "templates/disabled.html")
}

// render writes page name with status: the frame (nav, principal, flash,
// time of rendering) around data. It renders into a buffer first, so that
// a template error is a clean 500.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, s *session, status int, name, title, nav string, data any) {
	h.renderWith(w, r, s, status, name, title, nav, data, nil)
}

// renderWith is render with the flash fl rather than the one the cookie
// carries (nil: the cookie's).
func (h *Handler) renderWith(w http.ResponseWriter, r *http.Request, s *session, status int, name, title, nav string, data any, fl *flash) {
	v := &view{Title: title, Nav: nav, Rendered: h.now(), CSS: h.css, JS: h.js, Data: data, Flash: fl}
	if s != nil {
		v.User = &user{Name: s.p.Name, Role: s.p.Role, Fleet: h.may(s, routeQueues, ""), Open: h.opts.API.Open()}
		v.CSRF = csrfToken(s)
		if live(r, name) {
			v.Refresh = h.opts.Refresh.Milliseconds()
		}
		if r.Header.Get(liveHeader) == "" && fl == nil {
			v.Flash = h.takeFlash(w, r, s)
		}
	}
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		h.log.Error("ui template failed", "page", name, "err", err)
		http.Error(w, "Internal error; the server logged it.", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client may be gone; nothing to do then
}

// live reports whether page name, served for r, refreshes itself: a page
// read with GET, which a fetch of its URL renders again, and neither an
// error nor a confirmation.
func live(r *http.Request, name string) bool {
	return r.Method == http.MethodGet && name != "error" && name != "confirm"
}

// liveHeader marks the live refresh's fetches, which leave the flash for
// the page.
const liveHeader = "X-Courier-Live"

// funcs are the templates' functions.
func funcs() template.FuncMap {
	return template.FuncMap{
		"ts":       formatTime,
		"since":    since,
		"dur":      formatDuration,
		"num":      num,
		"trunc":    truncate,
		"pct":      percent,
		"preview":  preview,
		"queueURL": queueURL,
		"jobURL":   jobURL,
		"tabURL":   tabURL,
		"kindName": kindName,
		"keyURL":   keyURL,
		"keysURL":  keysURL,
		"capText":  capText,
		"rateText": wire.RateCell,
	}
}

// formatTime is t in UTC to the second; "—" for the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// since says how long before now t was ("4s ago"), or how long after
// ("in 3m").
func since(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + formatDuration(-d)
	}
	return formatDuration(d) + " ago"
}

// formatDuration is d in one or two units, rounded: 850ms, 4.2s, 3m10s,
// 5h2m, 3d4h.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// num is formatCount of any integer, for the templates.
func num(v any) string {
	switch n := v.(type) {
	case int:
		return formatCount(int64(n))
	case int64:
		return formatCount(n)
	}
	return fmt.Sprint(v)
}

// formatCount is n with thousands separated by commas.
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent is a progress report's percent, as precise as reported: "42%",
// "42.5%".
func percent(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64) + "%"
}

// truncate cuts s to n runes, ending it with "…" when cut.
func truncate(n int, s string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
