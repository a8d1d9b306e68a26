package main

import (
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// TestEnqueueNotReplicated: without replicas, enqueue --replicas prints
// the stored job's id, warns, and fails with the code of not_replicated,
// directly and through the API alike; --json prints the API's 202 reply.
func TestEnqueueNotReplicated(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	wantExit := exitCodeOf(wire.CodeNotReplicated)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"direct", []string{"--redis", b.addr, "--prefix", b.prefix}},
		{"api", []string{"--api", url, "--token", testAdminToken}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			id := "nr-" + mode.name
			args := append([]string{"enqueue", "--queue", "q", "--id", id, "--payload", "x", "--replicas", "1", "--replicas-timeout", "10ms"}, mode.args...)
			code, stdout, stderr := runCLI(t, t.Context(), args...)
			if code != wantExit || wantExit == exitOK {
				t.Errorf("exit %d, want %d", code, wantExit)
			}
			if stdout != id+"\n" {
				t.Errorf("stdout %q, want the id", stdout)
			}
			if want := "warning: job " + id + `: queue "q": enqueue stored on the master but confirmed on 0 of 1 replicas within 10ms; the job may not survive a failover`; !strings.Contains(stderr, want) {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
			if got := b.get(t, "q", id); string(got.Payload) != "x" {
				t.Errorf("stored job %+v", got)
			}

			code, stdout, _ = runCLI(t, t.Context(), append(append([]string{}, args...), "--id", id+"-json", "--json")...)
			reply := decodeJSON[struct {
				ID         string
				Replicated *bool
				Error      wire.Error
			}](t, stdout)
			if code != wantExit || reply.ID != id+"-json" || reply.Replicated == nil || *reply.Replicated || reply.Error.Code != wire.CodeNotReplicated {
				t.Errorf("--json: exit %d, %s", code, stdout)
			}
		})
	}
}

// TestEnqueueDurabilityFlags: the durability flags are checked before
// anything is sent, by name.
func TestEnqueueDurabilityFlags(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, tt := range []struct {
		flags []string
		says  string
	}{
		{[]string{"--replicas-timeout", "1s"}, "invalid --replicas-timeout: is set, but nothing waits"},
		{[]string{"--replicas", "17"}, "invalid --replicas: must be 0 to 16 (got 17)"},
		{[]string{"--replicas", "-1"}, "invalid --replicas: must be 0 to 16 (got -1)"},
		{[]string{"--replicas", "1", "--replicas-timeout", "2m"}, "invalid --replicas-timeout: must be at most 1m0s"},
		{[]string{"--aof", "--replicas-timeout", "0s"}, "invalid --replicas-timeout: is required"},
	} {
		code, _, stderr := b.run(t, "", "enqueue", append([]string{"--queue", "q", "--payload", "x"}, tt.flags...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tt.flags, code, stderr, exitUsage, tt.says)
		}
	}
	if n := b.stats(t, "q"); n.Ready != 0 {
		t.Errorf("%d jobs enqueued by refused commands", n.Ready)
	}
}
