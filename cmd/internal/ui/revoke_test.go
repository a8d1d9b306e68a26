package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestLogoutHoldsFleetWide: a session logged out on one daemon is refused
// by another daemon sharing the Redis, and by the first after a restart
// (a new handler); the log-out is one key of its own that lasts the
// session's remaining lifetime, so other users' log-outs cannot push it
// out.
func TestLogoutHoldsFleetWide(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	other := b.sibling()
	br := b.login(adminSecret)
	u, _ := url.Parse(b.srv.URL + "/ui/")
	cookies := br.c.Jar.Cookies(u)
	on := func(srv *bundle) *browser {
		replay := srv.newBrowser()
		su, _ := url.Parse(srv.srv.URL + "/ui/")
		replay.c.Jar.SetCookies(su, cookies)
		return replay
	}
	on(other).get("/ui/fleet").want(t, http.StatusOK) // sessions are shared

	br.get("/ui/")
	br.submit("/ui/logout", url.Values{}).want(t, http.StatusOK, "You have logged out.")
	nonce := sessionNonce(t, cookies)
	key := ui.RevokedKey(b.prefix, nonce)
	if ttl := testkit.PTTL(t, b.rdb, key); ttl <= ui.SessionTTLDefault-time.Minute || ttl > ui.SessionTTLDefault {
		t.Errorf("the log-out's key %s lasts %s; want the session's remaining lifetime, about %s", key, ttl, ui.SessionTTLDefault)
	}

	// Other users log in and out; the log-out holds everywhere, and on a
	// daemon started after it.
	for range 20 {
		shop := other.login(producerSecret)
		shop.get("/ui/")
		shop.submit("/ui/logout", url.Values{})
	}
	restarted := b.sibling()
	for name, srv := range map[string]*bundle{"the same daemon": b, "another daemon": other, "a daemon started after the log-out": restarted} {
		if p := on(srv).getNoFollow("/ui/fleet"); p.status != http.StatusSeeOther {
			t.Errorf("%s: the logged-out session got %d, want a redirect to the login page", name, p.status)
		}
	}
}

// TestSessionUncheckedFailsClosed: when Redis cannot say whether a
// session was logged out, the session is not taken: pages and actions get
// a 503 page saying why (and do nothing). A log-out that Redis refuses to
// record says so and keeps the session.
func TestSessionUncheckedFailsClosed(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	rdb := p.Client(t)
	b := setup(t, config{uiOpts: func(o *ui.Options) {
		o.Revocations = ui.RedisRevocations(func() rueidis.Client { return rdb }, "revocations")
	}})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q").want(t, http.StatusOK)

	p.MustDo(t, "ACL", "SETUSER", "default", "-set")
	page := br.submit("/ui/logout", url.Values{}).want(t, http.StatusServiceUnavailable, "The log-out could not be recorded")
	if strings.Contains(page.header.Get("Set-Cookie"), "courier_session") {
		t.Error("a log-out that was not recorded cleared the cookie")
	}
	br.get("/ui/queues/q").want(t, http.StatusOK)

	p.Kill()
	page = br.getNoFollow("/ui/queues/q").want(t, http.StatusServiceUnavailable, "Your session cannot be checked")
	if page.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	br.submit("/ui/queues/q/pause", url.Values{}).want(t, http.StatusServiceUnavailable, "Your session cannot be checked")
	if s, err := b.client.Stats(t.Context(), "q"); err != nil || s.Paused {
		t.Fatalf("an unchecked session paused the queue: %+v, %v", s, err)
	}
}

// sessionNonce is the nonce in the session cookie among cookies.
func sessionNonce(t *testing.T, cookies []*http.Cookie) string {
	t.Helper()
	for _, c := range cookies {
		if c.Name != "courier_session" {
			continue
		}
		enc, _, _ := strings.Cut(c.Value, ".")
		raw, err := b64decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		s := string(raw)
		return s[strings.LastIndexByte(s, '|')+1:]
	}
	t.Fatal("no session cookie")
	return ""
}
