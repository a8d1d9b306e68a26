package ui_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/worker"
)

// sessionCookie returns the Set-Cookie of the session on p (over TLS
// named with the __Host- prefix).
func sessionCookie(t *testing.T, p page) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "courier_session" || c.Name == "__Host-courier_session" {
			return c
		}
	}
	t.Fatalf("no session cookie set; headers %v", p.header)
	return nil
}

func TestLoginSetsTheSessionCookie(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) {
			t.Parallel()
			b := setup(t, config{tls: tls})
			br := b.newBrowser()
			p := br.get("/ui/login").want(t, http.StatusOK, `id="login-token"`, `id="login-submit"`)
			if p.header.Get("Content-Security-Policy") == "" {
				t.Fatal("no CSP on the login page")
			}
			p = br.post("/ui/login", url.Values{"token": {adminSecret}}, false)
			if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/" {
				t.Fatalf("login: %d to %q", p.status, p.header.Get("Location"))
			}
			c := sessionCookie(t, p)
			// Over TLS the __Host- prefix: Secure, Path=/, no Domain, so
			// that no other host (a subdomain) and no plain-HTTP service
			// of the host can set or overwrite it. Over plain HTTP
			// (loopback, courier dev) it cannot be Secure, so it has no
			// prefix and keeps to /ui/.
			name, path := "courier_session", "/ui/"
			if tls {
				name, path = "__Host-courier_session", "/"
			}
			if c.Name != name || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != path || c.Secure != tls || c.Domain != "" {
				t.Fatalf("cookie %+v: want %s, HttpOnly, SameSite=Strict, Path=%s, Secure=%v, no Domain", c, name, path, tls)
			}
			if c.MaxAge != int(ui.SessionTTLDefault/time.Second) {
				t.Fatalf("Max-Age %d, want %d", c.MaxAge, int(ui.SessionTTLDefault/time.Second))
			}
			br.get("/ui/").want(t, http.StatusOK, `<span id="principal">ops</span>`, `id="logout"`)
			if !tls {
				return
			}
			// Over TLS a session cookie without the prefix (one a
			// plain-HTTP service of the host could have set) is not taken.
			u, _ := url.Parse(b.srv.URL + "/ui/")
			tossed := b.newBrowser()
			tossed.c.Jar.SetCookies(u, []*http.Cookie{{Name: "courier_session", Value: c.Value, Path: "/ui/"}})
			if p := tossed.getNoFollow("/ui/"); p.status != http.StatusSeeOther {
				t.Fatalf("a session cookie without the __Host- prefix over TLS: %d, want a redirect to the login page", p.status)
			}
		})
	}
}

func TestLoginRefusesAWrongToken(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	br := b.newBrowser()
	p := br.post("/ui/login", url.Values{"token": {"wrong-token-0123456789"}}, false)
	p.want(t, http.StatusUnauthorized, `class="flash error"`, "invalid token")
	if strings.Contains(p.header.Get("Set-Cookie"), "courier_session") {
		t.Fatal("a wrong token got a session cookie")
	}
	// Without a session every page leads to the login page.
	p = br.getNoFollow("/ui/queues/q?state=dead")
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/login?next=%2Fui%2Fqueues%2Fq%3Fstate%3Ddead" {
		t.Fatalf("page without a session: %d to %q", p.status, p.header.Get("Location"))
	}
}

func TestLoginGoesOnToNext(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.newBrowser()
	for _, tc := range []struct{ next, want string }{
		{"/ui/queues/q?state=dead", "/ui/queues/q?state=dead"},
		{"https://evil.example/ui/", "/ui/"},
		{"//evil.example/ui/", "/ui/"},
		{"/v1/queues", "/ui/"},
	} {
		p := br.post("/ui/login", url.Values{"token": {adminSecret}, "next": {tc.next}}, false)
		if got := p.header.Get("Location"); got != tc.want {
			t.Errorf("next %q: redirected to %q, want %q", tc.next, got, tc.want)
		}
	}
}

func TestExpiredSessionGoesToLogin(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	br := b.login(adminSecret)
	br.get("/ui/fleet").want(t, http.StatusOK)
	b.clock.advance(ui.SessionTTLDefault + time.Second)
	p := br.getNoFollow("/ui/fleet")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/login") {
		t.Fatalf("expired session: %d to %q", p.status, p.header.Get("Location"))
	}
}

func TestLogoutRevokesTheSession(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	br := b.login(adminSecret)
	u, _ := url.Parse(b.srv.URL + "/ui/")
	old := br.c.Jar.Cookies(u)
	p := br.submit("/ui/logout", url.Values{})
	p.want(t, http.StatusOK, "You have logged out.")
	if p.url.Path != "/ui/login" {
		t.Fatalf("after logout at %s", p.url)
	}
	// The old cookie, sent again, is refused.
	replay := b.newBrowser()
	replay.c.Jar.SetCookies(u, old)
	if p := replay.getNoFollow("/ui/"); p.status != http.StatusSeeOther {
		t.Fatalf("a logged-out session got %d", p.status)
	}
}

func TestTamperedCookieIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	br := b.login(producerSecret)
	u, _ := url.Parse(b.srv.URL + "/ui/")
	var value string
	for _, c := range br.c.Jar.Cookies(u) {
		if c.Name == "courier_session" {
			value = c.Value
		}
	}
	payload, mac, _ := strings.Cut(value, ".")
	// The producer's session renamed to the admin's, with its own MAC; a
	// MAC changed; garbage.
	raw, err := b64decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	forged := b64encode([]byte(strings.Replace(string(raw), "|shop|", "|ops|", 1))) + "." + mac
	for _, v := range []string{forged, payload + "." + mac[:len(mac)-2] + "AA", "garbage", payload} {
		other := b.newBrowser()
		other.c.Jar.SetCookies(u, []*http.Cookie{{Name: "courier_session", Value: v, Path: "/ui/"}})
		if p := other.getNoFollow("/ui/"); p.status != http.StatusSeeOther {
			t.Errorf("cookie %q: status %d, want a redirect to the login page", v, p.status)
		}
	}
}

func TestPostWithoutCSRFDoesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q")
	for _, csrf := range []string{"", "d3Jvbmc", br.csrf + "x"} {
		form := url.Values{}
		if csrf != "" {
			form.Set("csrf", csrf)
		}
		p := br.post("/ui/queues/q/pause", form, false)
		p.want(t, http.StatusForbidden, "CSRF")
	}
	// Another session's token is refused too.
	other := b.login(adminSecret)
	other.get("/ui/queues/q")
	br.post("/ui/queues/q/pause", url.Values{"csrf": {other.csrf}}, false).want(t, http.StatusForbidden)
	// A cross-site request is refused before anything is read.
	req := br.request(http.MethodPost, "/ui/queues/q/pause", strings.NewReader("csrf="+url.QueryEscape(br.csrf)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	br.do(req, false).want(t, http.StatusForbidden)
	if s, err := b.client.Stats(t.Context(), "q"); err != nil || s.Paused {
		t.Fatalf("paused %v (err %v) after refused POSTs", s.Paused, err)
	}
	// A POST without a session is refused.
	b.newBrowser().post("/ui/queues/q/pause", url.Values{"csrf": {br.csrf}}, false).want(t, http.StatusUnauthorized)
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	br := b.login(adminSecret)
	for _, path := range []string{"/ui/", "/ui/login", "/ui/nope", "/ui/static/app.css"} {
		p := br.get(path)
		h := p.header
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self'") ||
			h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", path, h)
		}
		if strings.HasPrefix(path, "/ui/static/") {
			if !strings.Contains(h.Get("Cache-Control"), "max-age=") {
				t.Errorf("%s: Cache-Control %q", path, h.Get("Cache-Control"))
			}
		} else if h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, h.Get("Cache-Control"))
		}
	}
	p := br.get("/ui/")
	if !strings.Contains(p.body, `href="/ui/static/app.css?v=`) || !strings.Contains(p.body, `src="/ui/static/app.js?v=`) {
		t.Fatal("the assets are not referenced with a content hash")
	}
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, "style=") {
		t.Fatal("inline script or style")
	}
}

func TestOpenMode(t *testing.T) {
	t.Parallel()
	b := setup(t, config{apiOpts: func(o *api.Options) { o.Tokens = nil; o.InsecureNoAuth = true }})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.newBrowser()
	p := br.get("/ui/").want(t, http.StatusOK, `<span id="principal">anonymous</span>`)
	if strings.Contains(p.body, `id="logout"`) {
		t.Fatal("a log-out button in open mode")
	}
	if p := br.getNoFollow("/ui/login"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/" {
		t.Fatalf("login page in open mode: %d to %q", p.status, p.header.Get("Location"))
	}
	// Forms work with the anonymous session's CSRF token, and not without.
	br.get("/ui/queues/q")
	br.post("/ui/queues/q/pause", url.Values{}, false).want(t, http.StatusForbidden)
	br.submit("/ui/queues/q/pause", url.Values{}).want(t, http.StatusOK, "Paused queue q")
	// The API's guard against DNS rebinding holds for the UI.
	req := br.request(http.MethodGet, "/ui/", nil)
	req.Host = "evil.example"
	br.do(req, false).want(t, http.StatusForbidden, "evil.example")
}

func TestBackendNotReached(t *testing.T) {
	t.Parallel()
	b := setup(t, config{uiOpts: func(o *ui.Options) { o.Backend = func() ui.Backend { return nil } }})
	br := b.newBrowser()
	p := br.post("/ui/login", url.Values{"token": {adminSecret}}, true)
	p.want(t, http.StatusServiceUnavailable, "Redis has not been reached yet")
	if p.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestDisabled(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	ui.Disabled("no admin.tokens <configured>").ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/ui/", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no admin.tokens &lt;configured&gt;") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
