package testkit

import (
	"context"
	"testing"
	"time"
)

func TestPrivateRestartKeepsAOF(t *testing.T) {
	t.Parallel()
	p := StartPrivate(t, "--appendonly", "yes", "--appendfsync", "always")
	p.MustDo(t, "SET", "k", "v")
	p.Restart(t)
	p.WaitLoaded(t)
	if got := p.MustDo(t, "GET", "k"); got != "v" {
		t.Fatalf("after restart GET k = %q, want v", got)
	}
	p.Kill()
	if _, err := p.Do("PING"); err == nil {
		t.Fatal("PING after Kill succeeded")
	}
}

func TestProxyStallsAndResumes(t *testing.T) {
	t.Parallel()
	p := StartPrivate(t)
	px := StartProxy(t, p.Addr)
	if got, err := command(t.Context(), px.Addr, "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING through the proxy = %q, %v", got, err)
	}
	px.Stall()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := command(ctx, px.Addr, "PING"); err == nil {
		t.Fatal("PING through a stalled proxy succeeded")
	}
	px.Resume()
	if got, err := command(t.Context(), px.Addr, "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after Resume = %q, %v", got, err)
	}
}

func TestPrivateClusterServesKeys(t *testing.T) {
	t.Parallel()
	c := StartPrivateCluster(t, 3, 1)
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	cl := c.Client(t)
	if err := cl.Do(t.Context(), cl.B().Set().Key("{q}k").Value("v").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	owner := c.NodeOf(t, "{q}k")
	if got := owner.MustDo(t, "GET", "{q}k"); got != "v" {
		t.Fatalf("owner GET = %q", got)
	}
}
