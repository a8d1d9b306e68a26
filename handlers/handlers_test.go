package handlers_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-53d105c9/courier/handlers"
	"github.com/seed-53d105c9/courier/handlers/logjob"
	"github.com/seed-53d105c9/courier/handlers/webhook"
	"github.com/seed-53d105c9/courier/worker"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	all := handlers.Builtins()
	if len(all) == 0 {
		t.Fatal("Builtins is empty")
	}
	names := make([]string, len(all))
	for i, b := range all {
		names[i] = b.Name
		if b.Name == "" || strings.TrimSpace(b.Summary) == "" || b.New == nil {
			t.Errorf("Builtins()[%d] = {Name: %q, Summary: %q, New set: %t}; want all three", i, b.Name, b.Summary, b.New != nil)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Builtins names %q; want them sorted", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("Builtins names %q; want them unique", names)
	}
	if got := handlers.Names(); !slices.Equal(got, names) {
		t.Errorf("Names = %q; want %q", got, names)
	}
	for _, want := range []string{logjob.Name, webhook.Name} {
		if !slices.Contains(names, want) {
			t.Errorf("Builtins lacks %q", want)
		}
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, want := range handlers.Builtins() {
		got, ok := handlers.Lookup(want.Name)
		if !ok || got.Name != want.Name || got.Summary != want.Summary {
			t.Errorf("Lookup(%q) = %q, %t; want it found", want.Name, got.Name, ok)
		}
	}
	if got, ok := handlers.Lookup("nope"); ok {
		t.Errorf("Lookup(\"nope\") = %q, true; want false", got.Name)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNew builds each handler through its Builtin with a decoder that fills
// its settings, and runs a job through it to see that they took effect.
func TestNew(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got <- r
	}))
	t.Cleanup(srv.Close)

	decode := func(settings any) error {
		switch s := settings.(type) {
		case *logjob.Settings:
			s.Level = "debug"
			s.PayloadBytes = 3
		case *webhook.Settings:
			s.URL = srv.URL + "/from-config"
			s.AllowNetworks = []string{"127.0.0.0/8"}
			s.Secret = "k"
		default:
			return fmt.Errorf("unexpected settings %T", settings)
		}
		return nil
	}
	var logs syncBuffer
	env := handlers.Env{
		Queue:  "q",
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	job := &worker.Job{ID: "j1", Queue: "q", Payload: []byte("abcdef"), Attempt: 1}

	for _, name := range []string{logjob.Name, webhook.Name} {
		b, _ := handlers.Lookup(name)
		h, err := b.New(env, decode)
		if err != nil {
			t.Fatalf("%s: New = %v", name, err)
		}
		if err := h.Handle(t.Context(), job); err != nil {
			t.Fatalf("%s: Handle = %v; want nil", name, err)
		}
	}
	if out := logs.String(); !strings.Contains(out, "level=DEBUG msg=job") || !strings.Contains(out, "payload=abc payload_truncated=true") {
		t.Errorf("log output %q; want the job at debug level with 3 payload bytes", out)
	}
	r := <-got
	if r.URL.Path != "/from-config" || r.Header.Get(webhook.HeaderSignature) == "" {
		t.Errorf("webhook request to %s, signature %q; want /from-config, signed", r.URL.Path, r.Header.Get(webhook.HeaderSignature))
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	env := handlers.Env{Queue: "q", Logger: slog.New(slog.DiscardHandler)}
	errDecode := errors.New(`unknown key "colour"`)
	tests := []struct {
		name    string
		decode  handlers.Decoder
		wantIs  error
		wantMsg map[string]string // by handler: the error's prefix
	}{
		{
			name:   "decoder fails",
			decode: func(any) error { return errDecode },
			wantIs: errDecode,
		},
		{
			name: "no settings",
			decode: func(any) error {
				return nil
			},
			wantMsg: map[string]string{webhook.Name: "url: is required"},
		},
		{
			name: "invalid settings",
			decode: func(settings any) error {
				switch s := settings.(type) {
				case *logjob.Settings:
					s.Level = "loud"
				case *webhook.Settings:
					s.URL = "ftp://example.com"
				}
				return nil
			},
			wantMsg: map[string]string{logjob.Name: "level: ", webhook.Name: "url: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range handlers.Builtins() {
				_, err := b.New(env, tt.decode)
				want, wantErr := tt.wantMsg[b.Name]
				switch {
				case tt.wantIs != nil:
					if !errors.Is(err, tt.wantIs) {
						t.Errorf("%s: New = %v; want %v", b.Name, err, tt.wantIs)
					}
				case !wantErr:
					if err != nil {
						t.Errorf("%s: New = %v; want nil", b.Name, err)
					}
				case err == nil || !strings.HasPrefix(err.Error(), want):
					t.Errorf("%s: New = %v; want an error starting %q", b.Name, err, want)
				}
			}
		})
	}
}
