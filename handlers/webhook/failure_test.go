package webhook_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
	"github.com/seed-53d105c9/courier/worker"
)

func TestTimeout(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // the handler gave up and closed the connection
	})
	h := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL, Timeout: 50 * time.Millisecond})
	err := h.Handle(t.Context(), newJob(`{}`))
	if kind(err) != retry {
		t.Fatalf("Handle = %v; want a retryable error", err)
	}
	if !strings.Contains(err.Error(), "no response within 50ms") {
		t.Errorf("error = %q; want it to say no response within 50ms", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = newLocalHandler(t, webhook.Settings{URL: "http://" + addr + "/hook"}).Handle(t.Context(), newJob(`{}`))
	if kind(err) != retry {
		t.Fatalf("Handle = %v; want a retryable error", err)
	}
	if want := "webhook POST http://" + addr + "/hook: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q; want prefix %q", err, want)
	}
}

func TestJobContextEnded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cause error
		// end returns a job context that ends with cause, once the
		// request has arrived or by itself.
		end func(ctx context.Context, arrived <-chan struct{}) (context.Context, context.CancelFunc)
	}{
		{
			name:  "shutdown",
			cause: worker.ErrShutdown,
			end: func(ctx context.Context, arrived <-chan struct{}) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancelCause(ctx)
				go func() {
					<-arrived
					cancel(worker.ErrShutdown)
				}()
				return ctx, func() { cancel(nil) }
			},
		},
		{
			name:  "job timeout",
			cause: worker.ErrJobTimeout,
			end: func(ctx context.Context, _ <-chan struct{}) (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(ctx, 50*time.Millisecond, worker.ErrJobTimeout)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			arrived := make(chan struct{}, 1)
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				<-r.Context().Done()
			})
			ctx, cancel := tt.end(t.Context(), arrived)
			defer cancel()
			h := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL, Timeout: time.Minute})
			err := h.Handle(ctx, newJob(`{}`))
			if !errors.Is(err, tt.cause) {
				t.Fatalf("Handle = %v; want it to wrap %v", err, tt.cause)
			}
			if k := kind(err); k != retry {
				t.Errorf("Handle = %v (%s); want neither permanent nor snooze", err, k)
			}
		})
	}
}

func TestErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	const secret = "the-secret-key"
	const token = "Bearer tok-0123456789"
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		// A careless receiver echoes what it got, and what it expected.
		io.WriteString(w, "got "+r.Header.Get("Authorization")+" want key "+secret+"\n\x1b[31m"+strings.Repeat("é", 500))
	})
	u := strings.Replace(rc.srv.URL, "http://", "http://user:pa55word@", 1) + "/hook?api_key=k3y"
	h := newLocalHandler(t, webhook.Settings{URL: u, Secret: secret, Headers: map[string]string{"Authorization": token}})
	err := h.Handle(t.Context(), newJob(`{}`))
	if kind(err) != permanent {
		t.Fatalf("Handle = %v; want a permanent error", err)
	}
	msg := err.Error()
	for _, hidden := range []string{secret, "tok-0123456789", "pa55word", "user", "k3y", "\n", "\x1b"} {
		if strings.Contains(msg, hidden) {
			t.Errorf("error = %q; it shows %q", msg, hidden)
		}
	}
	if want := "webhook POST " + rc.srv.URL + "/hook: 401 Unauthorized: got [redacted] want key [redacted] [31m"; !strings.Contains(msg, want) {
		t.Errorf("error = %q; want it to contain %q", msg, want)
	}
	if _, body, _ := strings.Cut(msg, "401 Unauthorized: "); len(body) > 260 || !strings.HasSuffix(body, " …") {
		t.Errorf("the quoted body is %d bytes: %q; want at most 256 and a mark that it was cut", len(body), body)
	}
}
