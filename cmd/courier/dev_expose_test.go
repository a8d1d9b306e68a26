package main

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDevStoreStaysOnLoopback: courier dev's embedded store has no
// password, so a --addr that is not loopback is refused at once, saying
// why and how to ask for it anyway; with --insecure-expose-store it
// starts, and warns loudly.
func TestDevStoreStaysOnLoopback(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		code, _, stderr := courierCLI(ctx, t, nil, "dev", "--addr", addr, "--http-addr", "127.0.0.1:0")
		cancel()
		if code != 2 || !strings.Contains(stderr, "--insecure-expose-store") || !strings.Contains(stderr, "no password") {
			t.Errorf("courier dev --addr %s: exit %d, stderr %q; want 2 and a message naming --insecure-expose-store", addr, code, stderr)
		}
	}

	dev := startCourier(t, nil, "dev", "--addr", "0.0.0.0:0", "--insecure-expose-store", "--http-addr", "127.0.0.1:0", "--demo-jobs=false")
	dev.waitOutput(regexp.MustCompile(`embedded store listening on (\S+)`), 20*time.Second)
	dev.waitOutput(regexp.MustCompile(`EMBEDDED STORE WITHOUT A PASSWORD`), 5*time.Second)
	dev.signal(syscall.SIGTERM)
	if code := dev.wait(15 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}
