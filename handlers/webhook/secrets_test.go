package webhook_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// A careless receiver echoes the credentials it got in forms other than
// the one sent; none of them reaches the job's error.
func TestErrorsHideEchoedSecrets(t *testing.T) {
	t.Parallel()
	const (
		token    = "Tok/0123+456789=ABCdef" // percent- and base64-encoding change it
		password = "pa55word-long"
		key      = "the-signing-key"
	)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+password))
	tests := []struct {
		name   string
		echo   func(r *http.Request) string
		hidden string
	}{
		{"token without the scheme", func(r *http.Request) string {
			return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}, token},
		{"token in lower case", func(*http.Request) string { return strings.ToLower(token) }, strings.ToLower(token)},
		{"token in upper case", func(*http.Request) string { return "BEARER " + strings.ToUpper(token) }, strings.ToUpper(token)},
		{"token URL-encoded", func(*http.Request) string { return "token=" + url.QueryEscape(token) }, url.QueryEscape(token)},
		{"token path-escaped, lower-case hex", func(*http.Request) string {
			return strings.ToLower(url.PathEscape(token))
		}, strings.ToLower(url.PathEscape(token))},
		{"token base64-encoded", func(*http.Request) string { return base64.StdEncoding.EncodeToString([]byte(token)) }, base64.StdEncoding.EncodeToString([]byte(token))},
		{"token base64url, unpadded", func(*http.Request) string { return base64.RawURLEncoding.EncodeToString([]byte(token)) }, base64.RawURLEncoding.EncodeToString([]byte(token))},
		{"token hex-encoded", func(*http.Request) string { return strings.ToUpper(hex.EncodeToString([]byte(token))) }, strings.ToUpper(hex.EncodeToString([]byte(token)))},
		{"basic credentials decoded", func(*http.Request) string { return "user alice:" + password + " refused" }, password},
		{"basic password alone", func(*http.Request) string { return "password " + strings.ToUpper(password) }, strings.ToUpper(password)},
		{"signing key base64-encoded", func(*http.Request) string { return base64.StdEncoding.EncodeToString([]byte(key)) }, base64.StdEncoding.EncodeToString([]byte(key))},
		{"signing key in upper case", func(*http.Request) string { return strings.ToUpper(key) }, strings.ToUpper(key)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, "denied: "+tt.echo(r))
			})
			h := newLocalHandler(t, webhook.Settings{
				URL:     rc.srv.URL + "/hook",
				Secret:  key,
				Headers: map[string]string{"Authorization": "Bearer " + token, "X-Basic": basic},
			})
			err := h.Handle(t.Context(), newJob(`{}`))
			if kind(err) != permanent {
				t.Fatalf("Handle = %v; want a permanent error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, tt.hidden) {
				t.Errorf("error = %q; it shows %q", msg, tt.hidden)
			}
			if !strings.Contains(msg, "403 Forbidden: denied: ") || !strings.Contains(msg, "[redacted]") {
				t.Errorf("error = %q; want the echo blanked", msg)
			}
		})
	}
}

// With path_secret, the path of a Slack-style URL is a credential: it shows
// neither in errors, where the receiver echoes it or redirects to it, nor
// in logs.
func TestPathSecret(t *testing.T) {
	t.Parallel()
	const path = "/services/T0ABCDEF/B0ABCDEF/XXXXsecretXXXXXXXX"
	const segment = "XXXXsecretXXXXXXXX"
	tests := []struct {
		name    string
		respond http.HandlerFunc
		wantMsg string // after "webhook POST "
	}{
		{"echoed in the body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "no hook at "+r.URL.Path+", nor "+strings.ToLower(segment))
		}, "/[redacted]: 404 Not Found: no hook at /[redacted], nor [redacted]"},
		{"redirected to", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://other.example.com"+path+"?x=1", http.StatusMovedPermanently)
		}, "/[redacted]: 301 Moved Permanently: redirects are not followed (Location: https://other.example.com/[redacted])"},
		{"redirected to the segment elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://other.example.com/v2/"+segment, http.StatusFound)
		}, "/[redacted]: 302 Found: redirects are not followed (Location: https://other.example.com/[redacted])"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, tt.respond)
			h := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL + path, PathSecret: true})
			err := h.Handle(t.Context(), newJob(`{}`))
			if err == nil {
				t.Fatal("Handle = nil; want an error")
			}
			msg := err.Error()
			if strings.Contains(msg, segment) || strings.Contains(strings.ToLower(msg), strings.ToLower(segment)) {
				t.Errorf("error = %q; it shows the path secret", msg)
			}
			if want := "webhook POST " + rc.srv.URL + tt.wantMsg; !strings.Contains(msg, want) {
				t.Errorf("error = %q; want it to contain %q", msg, want)
			}
			if reqs := rc.requests(); len(reqs) != 1 || reqs[0].path != path {
				t.Errorf("the receiver got %v; want one request to the secret path", reqs)
			}
		})
	}
}

func TestPathSecretLogs(t *testing.T) {
	t.Parallel()
	const path = "/services/T0ABCDEF/B0ABCDEF/XXXXsecretXXXXXXXX"
	rc := newReceiver(t, status(http.StatusOK))
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := webhook.New("q", log, allowLoopback(webhook.Settings{URL: rc.srv.URL + path, PathSecret: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(t.Context(), newJob(`{}`)); err != nil {
		t.Fatalf("Handle = %v; want nil", err)
	}
	out := logs.String()
	if strings.Contains(out, "XXXXsecret") || !strings.Contains(out, "url="+rc.srv.URL+"/[redacted]") {
		t.Errorf("log = %q; want the url as scheme://host/[redacted]", out)
	}
}

// The user information and the query of url are credentials too: the
// client sends the former as a Basic Authorization header, and an echo of
// either is blanked.
func TestErrorsHideURLCredentials(t *testing.T) {
	t.Parallel()
	const (
		apiKey = "sk_live_0123456789" // the user, with no password
		token  = "qtok-0123456789"
	)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		user, _, _ := r.BasicAuth()
		io.WriteString(w, "auth "+r.Header.Get("Authorization")+" user "+user+" query "+r.URL.RawQuery)
	})
	u := strings.Replace(rc.srv.URL, "http://", "http://"+apiKey+"@", 1) + "/hook?api_key=" + token
	err := newLocalHandler(t, webhook.Settings{URL: u}).Handle(t.Context(), newJob(`{}`))
	if kind(err) != permanent {
		t.Fatalf("Handle = %v; want a permanent error", err)
	}
	msg := err.Error()
	basic := base64.StdEncoding.EncodeToString([]byte(apiKey + ":"))
	for _, hidden := range []string{apiKey, basic, token} {
		if strings.Contains(msg, hidden) {
			t.Errorf("error = %q; it shows %q", msg, hidden)
		}
	}
	if want := "401 Unauthorized: auth [redacted] user [redacted] query api_key=[redacted]"; !strings.Contains(msg, want) {
		t.Errorf("error = %q; want it to contain %q", msg, want)
	}
}
