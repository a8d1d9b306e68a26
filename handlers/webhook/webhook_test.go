package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
	"github.com/seed-53d105c9/courier/worker"
)

// received is one request a receiver got.
type received struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// receiver is an HTTP server that records the requests it gets and answers
// them with respond.
type receiver struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []received
}

func newReceiver(t *testing.T, respond http.HandlerFunc) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, received{r.Method, r.URL.Path, r.Header.Clone(), body})
		rc.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// status answers every request with code.
func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

// newHandler builds a handler, failing the test on invalid settings.
func newHandler(t *testing.T, s webhook.Settings) worker.Handler {
	t.Helper()
	h, err := webhook.New("q", slog.New(slog.DiscardHandler), s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// newLocalHandler builds a handler that may reach receivers on this
// machine, which the handler refuses by default.
func newLocalHandler(t *testing.T, s webhook.Settings) worker.Handler {
	t.Helper()
	return newHandler(t, allowLoopback(s))
}

// allowLoopback lets s reach the loopback networks.
func allowLoopback(s webhook.Settings) webhook.Settings {
	s.AllowNetworks = append(slices.Clip(s.AllowNetworks), "127.0.0.0/8", "::1/128")
	return s
}

func newJob(payload string) *worker.Job {
	return &worker.Job{ID: "j1", Queue: "q", Payload: []byte(payload), Attempt: 1}
}

// Outcome kinds, as the daemon tells them apart.
const (
	done      = "done"
	retry     = "retry"
	permanent = "permanent"
	snooze    = "snooze"
	limited   = "limited" // worker.KeyLimited: the job's key waits too
)

func kind(err error) string {
	var perm *worker.PermanentError
	var sn *worker.SnoozeError
	var kl *worker.KeyLimitedError
	switch {
	case err == nil:
		return done
	case errors.As(err, &perm):
		return permanent
	case errors.As(err, &sn):
		return snooze
	case errors.As(err, &kl):
		return limited
	}
	return retry
}

func TestDelivered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		settings    webhook.Settings
		contentType string
		extra       map[string]string // headers the receiver must see
	}{
		{name: "unsigned", contentType: "application/json", extra: map[string]string{"User-Agent": "courier-webhook"}},
		{name: "signed", settings: webhook.Settings{Secret: "s3cret"}, contentType: "application/json"},
		{name: "signed v1", settings: webhook.Settings{Secret: "s3cret", SignatureVersion: 1}, contentType: "application/json"},
		{
			name: "headers and content type",
			settings: webhook.Settings{
				Secret:      "s3cret",
				ContentType: "text/plain; charset=utf-8",
				Headers:     map[string]string{"authorization": "Bearer abc", "User-Agent": "mine/1"},
			},
			contentType: "text/plain; charset=utf-8",
			extra:       map[string]string{"Authorization": "Bearer abc", "User-Agent": "mine/1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, status(http.StatusNoContent))
			s := tt.settings
			s.URL = rc.srv.URL + "/hook?k=v"
			h := newLocalHandler(t, s)
			job := &worker.Job{ID: "job-7", Queue: "orders", Payload: []byte(`{"order":42}`), Attempt: 3, Key: "acme"}

			before := time.Now().Unix()
			if err := h.Handle(t.Context(), job); err != nil {
				t.Fatalf("Handle = %v; want nil", err)
			}
			after := time.Now().Unix()

			reqs := rc.requests()
			if len(reqs) != 1 {
				t.Fatalf("the receiver got %d requests; want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPost || r.path != "/hook" || string(r.body) != `{"order":42}` {
				t.Errorf("request = %s %s %q; want POST /hook {\"order\":42}", r.method, r.path, r.body)
			}
			want := map[string]string{
				"Content-Type":    tt.contentType,
				"Courier-Job-Id":  "job-7",
				"Courier-Queue":   "orders",
				"Courier-Attempt": "3",
				"Courier-Job-Key": "acme",
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			for k, v := range want {
				if got := r.header.Get(k); got != v {
					t.Errorf("header %s = %q; want %q", k, got, v)
				}
			}
			ts := r.header.Get(webhook.HeaderTimestamp)
			if sec, err := strconv.ParseInt(ts, 10, 64); err != nil || sec < before || sec > after {
				t.Errorf("Courier-Timestamp = %q; want Unix seconds in [%d, %d]", ts, before, after)
			}

			sig := r.header.Get(webhook.HeaderSignature)
			if s.Secret == "" {
				if sig != "" {
					t.Errorf("Courier-Signature = %q without a secret; want none", sig)
				}
				return
			}
			m := hmac.New(sha256.New, []byte(s.Secret))
			wantSig := "v2="
			v := webhook.Verifier{Secret: []byte(s.Secret)}
			if s.SignatureVersion == 1 {
				m.Write([]byte(ts + "." + string(r.body)))
				wantSig, v.AcceptV1 = "v1=", true
			} else {
				m.Write([]byte("v2\n" + ts + "\norders\njob-7\n3\n" + string(r.body)))
			}
			if wantSig += hex.EncodeToString(m.Sum(nil)); sig != wantSig {
				t.Errorf("Courier-Signature = %q; want %q", sig, wantSig)
			}
			if err := v.Verify(r.header, r.body); err != nil {
				t.Errorf("Verify = %v; want nil", err)
			}
		})
	}
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		code       int
		retryAfter string
		body       string
		want       string
		keyed      bool          // the job has a key
		wantDelay  time.Duration // for limited
		wantMsg    string        // after "webhook POST <url>: "
	}{
		{name: "200", code: 200, want: done},
		{name: "201", code: 201, want: done},
		{name: "204", code: 204, want: done},
		{name: "429 seconds", code: 429, retryAfter: "30", want: limited, wantDelay: 30 * time.Second},
		{name: "429 zero", code: 429, retryAfter: "0", want: limited, wantDelay: 0},
		{name: "429 capped", code: 429, retryAfter: "999999999999999999999", want: limited, wantDelay: 24 * time.Hour},
		{name: "429 past date", code: 429, retryAfter: "Sun, 06 Nov 1994 08:49:37 GMT", want: limited, wantDelay: 0},
		{name: "429 keyed", code: 429, retryAfter: "30", keyed: true, want: limited, wantDelay: 30 * time.Second},
		{name: "503 keyed with Retry-After", code: 503, retryAfter: "20", keyed: true, want: limited, wantDelay: 20 * time.Second},
		{name: "503 keyed without Retry-After", code: 503, keyed: true, want: retry, wantMsg: "503 Service Unavailable"},
		{name: "503 unkeyed with Retry-After", code: 503, retryAfter: "20", want: retry, wantMsg: "503 Service Unavailable"},
		{name: "429 without Retry-After", code: 429, want: retry, wantMsg: "429 Too Many Requests"},
		{name: "429 invalid Retry-After", code: 429, retryAfter: "soon", want: retry},
		{name: "503", code: 503, body: "down for maintenance\n", want: retry, wantMsg: "503 Service Unavailable: down for maintenance"},
		{name: "500", code: 500, want: retry, wantMsg: "500 Internal Server Error"},
		{name: "408", code: 408, want: retry},
		{name: "400", code: 400, body: `{"error":"bad order"}`, want: permanent, wantMsg: `400 Bad Request: {"error":"bad order"}`},
		{name: "404", code: 404, want: permanent, wantMsg: "404 Not Found"},
		{name: "410", code: 410, want: permanent},
		{name: "unknown 4xx", code: 499, want: permanent, wantMsg: "499"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.code)
				io.WriteString(w, tt.body)
			})
			h := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL + "/hook"})
			job := newJob(`{}`)
			if tt.keyed {
				job.Key = "acme"
			}
			err := h.Handle(t.Context(), job)
			if got := kind(err); got != tt.want {
				t.Fatalf("Handle = %v (%s); want %s", err, got, tt.want)
			}
			var kl *worker.KeyLimitedError
			if errors.As(err, &kl) && kl.Delay != tt.wantDelay {
				t.Errorf("limited for %s; want %s", kl.Delay, tt.wantDelay)
			}
			if tt.wantMsg != "" {
				if want := "webhook POST " + rc.srv.URL + "/hook: " + tt.wantMsg; !strings.HasSuffix(err.Error(), want) {
					t.Errorf("error = %q; want it to end with %q", err, want)
				}
			}
		})
	}
}

func TestRetryAfterDate(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(2*time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	})
	err := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL}).Handle(t.Context(), newJob(`{}`))
	var kl *worker.KeyLimitedError
	if !errors.As(err, &kl) {
		t.Fatalf("Handle = %v; want a *worker.KeyLimitedError", err)
	}
	// The date has whole seconds, and time passed since it was written.
	if kl.Delay > 2*time.Hour || kl.Delay < 2*time.Hour-10*time.Second {
		t.Errorf("limited for %s; want about 2h", kl.Delay)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			target := newReceiver(t, status(http.StatusOK))
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.srv.URL+"/elsewhere?token=x", code)
			})
			err := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL}).Handle(t.Context(), newJob(`{}`))
			if kind(err) != permanent {
				t.Fatalf("Handle = %v; want a permanent error", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "redirects are not followed") ||
				!strings.Contains(msg, target.srv.URL+"/elsewhere") || strings.Contains(msg, "token") {
				t.Errorf("error = %q; want it to say redirects are not followed, and where to, without the query", msg)
			}
			if n := len(target.requests()); n != 0 {
				t.Errorf("the redirect target got %d requests; want 0", n)
			}
		})
	}
}
