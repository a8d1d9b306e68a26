package testkit_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestSingle(t *testing.T) {
	t.Parallel()
	c := testkit.Single(t)
	ping(t, c)

	// A single server: cluster support off, or at most one node.
	info, err := c.Do(t.Context(), c.B().Info().Section("cluster").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "cluster_enabled:0") {
		t.Errorf("INFO cluster = %q, want cluster_enabled:0", info)
	}
	if addr := testkit.SingleAddr(t); !strings.Contains(addr, ":") {
		t.Errorf("SingleAddr() = %q, want host:port", addr)
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	c := testkit.Cluster(t)
	ping(t, c)

	if addrs := testkit.ClusterAddrs(t); len(addrs) == 0 {
		t.Fatal("ClusterAddrs() is empty")
	}
	for addr, node := range c.Nodes() {
		info, err := node.Do(t.Context(), node.B().ClusterInfo().Build()).ToString()
		if err != nil {
			t.Fatalf("%s: CLUSTER INFO: %v", addr, err)
		}
		for _, want := range []string{"cluster_state:ok", "cluster_known_nodes:3", "cluster_size:3"} {
			if !strings.Contains(info, want) {
				t.Errorf("%s: CLUSTER INFO lacks %s:\n%s", addr, want, info)
			}
		}
	}
	if n := len(c.Nodes()); n != 3 {
		t.Errorf("client knows %d nodes %v, want 3", n, keys(c.Nodes()))
	}

	// Keys of slots spread over the masters all work through one client.
	for _, k := range []string{"{a}x", "{b}x", "{c}x", "{d}x"} {
		key := testkit.Prefix(t) + k
		if err := c.Do(t.Context(), c.B().Set().Key(key).Value("v").Build()).Error(); err != nil {
			t.Fatalf("SET %s: %v", key, err)
		}
		if err := c.Do(t.Context(), c.B().Del().Key(key).Build()).Error(); err != nil {
			t.Fatalf("DEL %s: %v", key, err)
		}
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^ct-[0-9a-f]{8}-[A-Za-z0-9._-]+$`)
	for _, name := range []string{"plain", "with space {brace} and:colon", strings.Repeat("long", 30)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, b := testkit.Prefix(t), testkit.Prefix(t)
			if a == b {
				t.Errorf("two prefixes are equal: %q", a)
			}
			if !valid.MatchString(a) {
				t.Errorf("Prefix() = %q, want %s", a, valid)
			}
			if len(a) > len("ct-12345678-")+40 {
				t.Errorf("Prefix() = %q is %d bytes long", a, len(a))
			}
		})
	}
	if got := testkit.Prefix(t); !strings.HasSuffix(got, "-TestPrefix") {
		t.Errorf("Prefix() = %q, want it to end with the test name", got)
	}
}

func ping(t *testing.T, c rueidis.Client) {
	t.Helper()
	got, err := c.Do(t.Context(), c.B().Ping().Build()).ToString()
	if err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v; want PONG", got, err)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
