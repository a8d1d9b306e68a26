package bench

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/server"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// serveAPI serves the HTTP API through cmd/internal/server, as the daemon
// does, on l (address and key filled in), until the test ends. It has no
// backend: an authenticated request gets 503, which is as good a round
// trip as any. It returns the API's URL and a producer token.
func serveAPI(t *testing.T, l server.Listener) (url, token string) {
	t.Helper()
	token = "bench-test-token-" + randomHex(8)
	h, err := api.New(api.Options{
		Backend: func() admin.Operator { return nil },
		Tokens:  []api.Token{{Name: "bench", Secret: token, Role: api.RoleProducer}},
	})
	if err != nil {
		t.Fatal(err)
	}
	l.Key, l.Addr, l.Logger = "http.addr", "127.0.0.1:0", slog.New(slog.DiscardHandler)
	s, err := server.ListenHandler(l, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return "http://" + s.Addr(), token
}

// TestAuthflood runs --mode authflood small: the figures are all there,
// the flood got 401s, and the good token got through throughout.
func TestAuthflood(t *testing.T) {
	t.Parallel()
	url, token := serveAPI(t, server.Listener{})
	line := run(t, "--mode", "authflood", "--api", url, "--token", token, "--n", "2000", "--clients", "4", "--duration", "300ms")
	t.Log(line)
	kv := parseFigures(t, line)
	for _, k := range []string{"idle_p50_ms", "idle_p99_ms", "flood_p50_ms", "flood_p99_ms", "ratio_p99",
		"flood_attempts", "flood_per_s", "flood_401", "flood_429", "flood_refused", "good_errors"} {
		number(t, kv, k)
	}
	if kv["mode"] != "authflood" || number(t, kv, "flood_401") == 0 || number(t, kv, "good_errors") != 0 ||
		number(t, kv, "flood_attempts") > 2000 || number(t, kv, "idle_samples") == 0 {
		t.Errorf("figures %v", kv)
	}
}

// TestAuthfloodWrongToken: a token the API refuses fails the run at once,
// rather than measuring refusals.
func TestAuthfloodWrongToken(t *testing.T) {
	t.Parallel()
	url, _ := serveAPI(t, server.Listener{})
	err := Run(t.Context(), []string{"--mode", "authflood", "--api", url, "--token", "not-the-token", "--duration", "10ms"},
		t.Output(), t.Output())
	if err == nil {
		t.Error("a wrong --token was measured")
	}
}

// TestConns runs --mode conns small against a listener that lets one
// address hold 10 connections: the 20 others are closed at once and
// reopened, so 10 are held throughout; with --slow a short header timeout
// closes them all, and they are reopened as often. The good client is
// served throughout.
func TestConns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		listener server.Listener
		slow     bool
		heldMin  float64 // the least held_min and still_open
	}{
		{"idle", server.Listener{MaxConnectionsPerClient: 10}, false, 10},
		{"slow", server.Listener{MaxConnectionsPerClient: 10, Timeouts: server.Timeouts{Read: 100 * time.Millisecond}}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, token := serveAPI(t, tt.listener)
			line := run(t, "--mode", "conns", "--api", url, "--token", token,
				"--n", "30", "--duration", "400ms", "--slow="+strconv.FormatBool(tt.slow))
			t.Log(line)
			kv := parseFigures(t, line)
			for _, k := range []string{"n", "opened", "reopened", "held_p50", "held_min", "still_open",
				"good_p50_ms", "good_p99_ms", "good_max_ms", "good_errors", "reset_at_once", "dial_errors", "fd_limit"} {
				number(t, kv, k)
			}
			heldMin, heldP50, stillOpen := number(t, kv, "held_min"), number(t, kv, "held_p50"), number(t, kv, "still_open")
			if kv["mode"] != "conns" || number(t, kv, "opened") < 30 || number(t, kv, "reopened") == 0 ||
				heldMin < tt.heldMin || heldMin > heldP50 || heldP50 > 30 || stillOpen < tt.heldMin || stillOpen > 10 ||
				kv["good_errors"] != "0" || kv["dial_errors"] != "0" || kv["fd_limit_ok"] != "true" {
				t.Errorf("figures %v", kv)
			}
		})
	}
}
