package webhook_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// refusedLoopback is the message of a request to localhost, which resolves
// to 127.0.0.1 or ::1 first, depending on the machine.
var refusedLoopback = regexp.MustCompile(`^permanent: webhook POST http://localhost:\d+/hook: ` +
	`refused to connect to (127\.0\.0\.1|::1): a loopback address; list its network in allow_networks to allow it$`)

// "localhost" resolves to a loopback address: a job's URL naming it, or a
// configured url naming it, reaches nothing unless allow_networks lists
// the loopback networks.
func TestLocalhostRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		envelope bool // the job names the URL; otherwise url does
		networks []string
		want     *regexp.Regexp // nil for delivered
	}{
		{name: "envelope url", envelope: true, want: refusedLoopback},
		{name: "configured url", want: refusedLoopback},
		{name: "envelope url, loopback allowed", envelope: true, networks: []string{"127.0.0.0/8", "::1/128"}},
		{name: "configured url, loopback allowed", networks: []string{"127.0.0.0/8", "::1/128"}},
		{name: "another network allowed", networks: []string{"10.0.0.0/8"}, want: refusedLoopback},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, status(http.StatusOK))
			srv, err := url.Parse(rc.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			target := "http://localhost:" + srv.Port() + "/hook"
			s := webhook.Settings{Secret: "k", Headers: map[string]string{"Authorization": "Bearer 0123456789"}, AllowNetworks: tt.networks}
			payload := `{}`
			if tt.envelope {
				s.AllowHosts = []string{"localhost:" + srv.Port()}
				payload = `{"url":"` + target + `","body":{}}`
			} else {
				s.URL = target
			}
			err = newHandler(t, s).Handle(t.Context(), newJob(payload))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Handle = %v; want nil", err)
				}
				if n := len(rc.requests()); n != 1 {
					t.Errorf("the receiver got %d requests; want 1", n)
				}
				return
			}
			if kind(err) != permanent {
				t.Fatalf("Handle = %v; want a permanent error", err)
			}
			if !tt.want.MatchString(err.Error()) {
				t.Errorf("error = %q; want it to match %q", err, tt.want)
			}
			if n := len(rc.requests()); n != 0 {
				t.Errorf("the receiver got %d requests; want 0", n)
			}
		})
	}
}

// A job's URL naming a refused IP address directly is refused too.
func TestEnvelopeLiteralRefused(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "[::ffff:127.0.0.1]", "[::1]"} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, status(http.StatusOK))
			srv, err := url.Parse(rc.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			hostPort := host + ":" + srv.Port()
			s := webhook.Settings{AllowHosts: []string{hostPort}}
			err = newHandler(t, s).Handle(t.Context(), newJob(`{"url":"http://`+hostPort+`/","body":{}}`))
			if kind(err) != permanent || !strings.Contains(err.Error(), "a loopback address; list its network in allow_networks") {
				t.Fatalf("Handle = %v; want a permanent error naming a loopback address", err)
			}
			if n := len(rc.requests()); n != 0 {
				t.Errorf("the receiver got %d requests; want 0", n)
			}
		})
	}
}
