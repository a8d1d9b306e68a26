package webhook_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

func TestEnvelopeDelivered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		configURL bool   // whether url is configured, as <server>/configured
		jobURL    string // the envelope's url, after the server's address
		body      string // the envelope's body, verbatim
		wantPath  string
	}{
		{name: "job url", jobURL: "/own", body: `{"a": [1, 2]}`, wantPath: "/own"},
		{name: "job url overrides the configured one", configURL: true, jobURL: "/own", body: `"text"`, wantPath: "/own"},
		{name: "no job url", configURL: true, body: `[ 1,  2 ]`, wantPath: "/configured"},
		{name: "null body", configURL: true, body: `null`, wantPath: "/configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, status(http.StatusOK))
			srv, err := url.Parse(rc.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			s := webhook.Settings{Secret: "k", AllowHosts: []string{"localhost", srv.Host}}
			if tt.configURL {
				s.URL = rc.srv.URL + "/configured"
			}
			payload := `{"body":` + tt.body + `}`
			if tt.jobURL != "" {
				payload = `{"url":"` + rc.srv.URL + tt.jobURL + `", "body":` + tt.body + `}`
			}
			if err := newLocalHandler(t, s).Handle(t.Context(), newJob(payload)); err != nil {
				t.Fatalf("Handle = %v; want nil", err)
			}
			reqs := rc.requests()
			if len(reqs) != 1 {
				t.Fatalf("the receiver got %d requests; want 1", len(reqs))
			}
			r := reqs[0]
			if r.path != tt.wantPath || string(r.body) != tt.body {
				t.Errorf("request = %s %q; want %s %q", r.path, r.body, tt.wantPath, tt.body)
			}
			if err := webhook.Verify([]byte("k"), r.header, r.body); err != nil {
				t.Errorf("Verify = %v; want the signature to sign the delivered body", err)
			}
		})
	}
}

func TestEnvelopeRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		allow     []string
		configURL bool
		// payload may hold $SRV, the server's address (127.0.0.1:1234),
		// and $PORT, its port.
		payload string
		wantMsg string // part of the error; $SRV and $PORT as in payload
	}{
		{name: "host not allowed", allow: []string{"example.com"},
			payload: `{"url":"http://$SRV/x","body":{}}`, wantMsg: `envelope url: host "$SRV" is not in allow_hosts`},
		{name: "port not allowed", allow: []string{"127.0.0.1:1"},
			payload: `{"url":"http://$SRV/x","body":{}}`, wantMsg: "is not in allow_hosts"},
		{name: "an entry without a port allows the default port only", allow: []string{"127.0.0.1"},
			payload: `{"url":"http://$SRV/x","body":{}}`, wantMsg: `host "$SRV" is not in allow_hosts`},
		{name: "wildcard does not match the bare domain", allow: []string{"*.localhost"},
			payload: `{"url":"http://localhost:$PORT/x","body":{}}`, wantMsg: `host "localhost:$PORT" is not in allow_hosts`},
		{name: "user information does not fool the check", allow: []string{"example.com"},
			payload: `{"url":"http://example.com@$SRV/x","body":{}}`, wantMsg: "is not in allow_hosts"},
		{name: "not http", allow: []string{"127.0.0.1"},
			payload: `{"url":"ftp://$SRV/x","body":{}}`, wantMsg: `envelope url: must be an http or https URL (got scheme "ftp")`},
		{name: "relative url", allow: []string{"127.0.0.1"},
			payload: `{"url":"/x","body":{}}`, wantMsg: "envelope url: must be an http or https URL"},
		{name: "no url anywhere", allow: []string{"127.0.0.1"},
			payload: `{"body":{}}`, wantMsg: `the envelope has no "url" and the handler has no url configured`},
		{name: "not JSON", allow: []string{"127.0.0.1"}, configURL: true,
			payload: `hello`, wantMsg: "payload is not a JSON envelope"},
		{name: "empty", allow: []string{"127.0.0.1"}, configURL: true,
			payload: ``, wantMsg: "payload is not a JSON envelope"},
		{name: "not an object", allow: []string{"127.0.0.1"}, configURL: true,
			payload: `[1]`, wantMsg: "payload is not a JSON envelope"},
		{name: "unknown field", allow: []string{"127.0.0.1"}, configURL: true,
			payload: `{"body":{},"headers":{}}`, wantMsg: `unknown field "headers"`},
		{name: "no body", allow: []string{"127.0.0.1"}, configURL: true,
			payload: `{"url":"http://$SRV/x"}`, wantMsg: `"body" is missing`},
		{name: "null envelope", allow: []string{"127.0.0.1"}, configURL: true,
			payload: `null`, wantMsg: `"body" is missing`},
		{name: "data after the envelope", allow: []string{"127.0.0.1"}, configURL: true,
			payload: `{"body":{}} {"body":{}}`, wantMsg: "data after the envelope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, status(http.StatusOK))
			srv, err := url.Parse(rc.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			s := webhook.Settings{AllowHosts: tt.allow}
			if tt.configURL {
				s.URL = rc.srv.URL
			}
			expand := strings.NewReplacer("$SRV", srv.Host, "$PORT", srv.Port()).Replace
			payload := expand(tt.payload)
			err = newLocalHandler(t, s).Handle(t.Context(), newJob(payload))
			if kind(err) != permanent {
				t.Fatalf("Handle = %v; want a permanent error", err)
			}
			if want := expand(tt.wantMsg); !strings.Contains(err.Error(), want) {
				t.Errorf("error = %q; want it to contain %q", err, want)
			}
			if n := len(rc.requests()); n != 0 {
				t.Errorf("the receiver got %d requests; want 0", n)
			}
		})
	}
}

// Without allow_hosts a payload is sent as it is, even one that looks like
// an envelope.
func TestNoEnvelopeWithoutAllowHosts(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, status(http.StatusOK))
	payload := `{"url":"http://evil.example/","body":{}}`
	if err := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL}).Handle(t.Context(), newJob(payload)); err != nil {
		t.Fatalf("Handle = %v; want nil", err)
	}
	if reqs := rc.requests(); len(reqs) != 1 || string(reqs[0].body) != payload {
		t.Fatalf("the receiver got %v; want one request with the payload as it is", reqs)
	}
}
