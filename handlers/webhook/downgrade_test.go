package webhook_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// TestNoDowngradeToHTTP: a job may not send to http:// a host that the
// queue's url reaches over https, on any port: its request would carry the
// configured headers (an Authorization) in clear. It fails for good, and
// nothing is sent. https to that host, and http to another allowed host,
// still go.
func TestNoDowngradeToHTTP(t *testing.T) {
	t.Parallel()
	const auth = "Bearer downgrade-secret-0123456789"
	plain := newReceiver(t, status(http.StatusOK))
	srv, err := url.Parse(plain.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := webhook.Settings{
		URL:        "https://127.0.0.1:1/hook", // the queue reaches 127.0.0.1 over https
		Headers:    map[string]string{"Authorization": auth},
		AllowHosts: []string{srv.Host, "localhost:" + srv.Port()},
	}
	h := newLocalHandler(t, s)
	for _, target := range []string{plain.srv.URL + "/steal", "http://127.0.0.1.:" + srv.Port() + "/steal"} {
		err = h.Handle(t.Context(), newJob(`{"url":"`+target+`","body":{}}`))
		if kind(err) != permanent || !strings.Contains(err.Error(), "https") {
			t.Errorf("Handle to %s = %v; want a permanent error saying the queue's url is https", target, err)
		}
		if err != nil && strings.Contains(err.Error(), "downgrade-secret") {
			t.Errorf("the error shows the header: %v", err)
		}
	}
	for _, r := range plain.requests() {
		t.Errorf("sent %s to plain http with Authorization %q", r.path, r.header.Get("Authorization"))
	}

	// Another host (localhost is not 127.0.0.1 by name) over http: sent.
	if err := h.Handle(t.Context(), newJob(`{"url":"http://localhost:`+srv.Port()+`/other","body":{}}`)); err != nil {
		t.Fatalf("Handle to another host over http = %v; want nil", err)
	}
}
