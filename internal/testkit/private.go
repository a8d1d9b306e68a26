package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// Private is a redis-server process of one test's own, for tests that change
// the server itself: CONFIG SET maxmemory, DEBUG RELOAD, CLIENT PAUSE, a kill
// or a restart. The shared servers of Single and Cluster are never changed
// that way, since other tests run on them in parallel. DEBUG is enabled.
type Private struct {
	Addr string // host:port, the same across restarts
	Dir  string // the working directory: AOF and RDB files survive a restart

	t    testing.TB
	args []string
	mu   sync.Mutex
	srv  *server
}

// StartPrivate starts a Redis for t alone, with persistence off unless args
// (redis-server options such as "--appendonly", "yes") say otherwise. It is
// killed when the test ends. It needs redis-server on PATH; with -short the
// test is skipped.
func StartPrivate(t testing.TB, args ...string) *Private {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis; run without -short")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("testkit: a private Redis needs redis-server on PATH: %v", err)
	}
	dir := t.TempDir()
	var lastErr error
	for range startAttempts {
		ports, err := redisproc.FreePorts(1, false)
		if err != nil {
			t.Fatal(err)
		}
		p := &Private{
			Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
			Dir:  dir, t: t,
			args: append([]string{"--enable-debug-command", "yes"}, args...),
		}
		if lastErr = p.start(); lastErr == nil {
			t.Cleanup(p.Kill)
			return p
		}
	}
	t.Fatalf("testkit: start a private Redis: %v%s", lastErr, logTails(dir))
	return nil
}

// start runs the server on p.Addr and waits until it answers PING.
func (p *Private) start() error {
	_, port, _ := net.SplitHostPort(p.Addr)
	args := []string{
		"--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", p.Dir,
		"--logfile", filepath.Join(p.Dir, "redis-"+port+".log"),
	}
	args = append(args, p.args...)               // later options win
	cmd := exec.Command("redis-server", args...) //nolint:noctx // ended by Kill, not by a context
	cmd.Dir = p.Dir
	cmd.SysProcAttr = redisproc.SysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s := &server{addr: p.Addr, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.t.Context()), startTimeout)
	defer cancel()
	if err := s.waitStarted(ctx); err != nil {
		s.stop()
		return err
	}
	p.mu.Lock()
	p.srv = s
	p.mu.Unlock()
	return nil
}

// waitStarted waits until the process accepts connections: a reply of any
// kind, LOADING included, counts.
func (s *server) waitStarted(ctx context.Context) error {
	return poll(ctx, func() (bool, error) {
		select {
		case <-s.done:
			return false, fmt.Errorf("redis-server on %s exited: %v", s.addr, s.cmd.ProcessState)
		default:
		}
		_, err := command(ctx, s.addr, "PING")
		return err == nil || strings.HasPrefix(err.Error(), "LOADING"), nil
	})
}

// Client returns a client of this server, closed at the test's end. It is
// built with short timeouts, so calls to a stopped server fail fast.
func (p *Private) Client(t testing.TB) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:      []string{p.Addr},
		DisableCache:     true,
		ConnWriteTimeout: 2 * time.Second,
		Dialer:           net.Dialer{Timeout: time.Second},
	})
	if err != nil {
		t.Fatalf("testkit: connect to %s: %v", p.Addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

// Do sends one command on a fresh connection and returns a string reply (a
// simple or bulk string); an error reply is returned as an error.
func (p *Private) Do(args ...string) (string, error) {
	return command(p.t.Context(), p.Addr, args...)
}

// MustDo is Do that fails the test on an error.
func (p *Private) MustDo(t testing.TB, args ...string) string {
	t.Helper()
	out, err := p.Do(args...)
	if err != nil {
		t.Fatalf("testkit: %s on %s: %v", strings.Join(args, " "), p.Addr, err)
	}
	return out
}

// Kill ends the server with SIGKILL, as a crash would; what it had not yet
// written to disk is lost. Calling it again does nothing.
func (p *Private) Kill() {
	p.mu.Lock()
	s := p.srv
	p.srv = nil
	p.mu.Unlock()
	if s != nil {
		s.stop()
	}
}

// Restart kills the server if it runs and starts it again on the same
// address and directory, with the same options: it reloads its AOF or RDB.
// It returns once the server accepts connections; it may still be loading
// (see WaitLoaded).
func (p *Private) Restart(t testing.TB, extra ...string) {
	t.Helper()
	p.Kill()
	saved := p.args
	p.args = append(append([]string(nil), saved...), extra...)
	defer func() { p.args = saved }()
	var err error
	for range startAttempts {
		if err = p.start(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond) //nolint:forbidigo // the port is being released by the killed process
	}
	t.Fatalf("testkit: restart Redis on %s: %v%s", p.Addr, err, logTails(p.Dir))
}

// WaitLoaded waits until the server has loaded its data set and answers
// PING with PONG.
func (p *Private) WaitLoaded(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.t.Context(), startTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		out, err := command(ctx, p.Addr, "PING")
		return err == nil && out == "PONG", nil
	})
	if err != nil {
		t.Fatalf("testkit: Redis on %s did not finish loading: %v", p.Addr, err)
	}
}

// Log returns the server's log file so far.
func (p *Private) Log() string {
	_, port, _ := net.SplitHostPort(p.Addr)
	data, _ := os.ReadFile(filepath.Join(p.Dir, "redis-"+port+".log"))
	return string(data)
}

// PrivateCluster is a Redis Cluster of one test's own: Nodes[:Masters] are
// the masters, then each master's replicas in order. Tests may migrate
// slots, kill masters and promote replicas.
type PrivateCluster struct {
	Nodes   []*Private
	Masters int
}

// StartPrivateCluster starts masters masters with replicas replicas each,
// joined with redis-cli --cluster create, and waits until every node reports
// the cluster usable. args are added to every node's options.
func StartPrivateCluster(t testing.TB, masters, replicas int, args ...string) *PrivateCluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil && !testing.Short() {
		t.Fatalf("testkit: a private cluster needs redis-cli on PATH: %v", err)
	}
	n := masters * (1 + replicas)
	c := &PrivateCluster{Masters: masters}
	for i := range n {
		dir := filepath.Join(t.TempDir(), strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		c.Nodes = append(c.Nodes, startClusterNode(t, dir, args))
	}
	create := []string{"--cluster", "create"}
	create = append(create, c.Addrs()...)
	create = append(create, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.CommandContext(t.Context(), "redis-cli", create...).CombinedOutput(); err != nil {
		t.Fatalf("testkit: redis-cli %s: %v\n%s", strings.Join(create, " "), err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
	defer cancel()
	for _, node := range c.Nodes {
		err := poll(ctx, func() (bool, error) {
			info, err := command(ctx, node.Addr, "CLUSTER", "INFO")
			return err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)), nil
		})
		if err != nil {
			t.Fatalf("testkit: cluster node %s: %v", node.Addr, err)
		}
	}
	return c
}

// startClusterNode starts one cluster-enabled node in dir; a cluster bus
// port (port+10000) is free too.
func startClusterNode(t testing.TB, dir string, args []string) *Private {
	t.Helper()
	var lastErr error
	for range startAttempts {
		ports, err := redisproc.FreePorts(1, true)
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(ports[0])
		p := &Private{
			Addr: net.JoinHostPort("127.0.0.1", port), Dir: dir, t: t,
			args: append([]string{"--enable-debug-command", "yes",
				"--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + port + ".conf",
				"--cluster-node-timeout", "2000"}, args...),
		}
		if lastErr = p.start(); lastErr == nil {
			t.Cleanup(p.Kill)
			return p
		}
	}
	t.Fatalf("testkit: start a cluster node: %v%s", lastErr, logTails(dir))
	return nil
}

// Addrs returns every node's address, masters first.
func (c *PrivateCluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// Client returns a cluster client seeded with every node, closed at the
// test's end.
func (c *PrivateCluster) Client(t testing.TB) rueidis.Client {
	t.Helper()
	cl, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:      c.Addrs(),
		DisableCache:     true,
		ConnWriteTimeout: 2 * time.Second,
		Dialer:           net.Dialer{Timeout: time.Second},
	})
	if err != nil {
		t.Fatalf("testkit: connect to the private cluster: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// NodeOf returns the master that serves key's slot now: the one that
// answers a read of key without a redirect.
func (c *PrivateCluster) NodeOf(t testing.TB, key string) *Private {
	t.Helper()
	for _, n := range c.Nodes {
		if _, err := n.Do("EXISTS", key); err == nil && c.isMaster(n) {
			return n
		}
	}
	t.Fatalf("testkit: no master serves %q", key)
	return nil
}

// isMaster reports whether n is a master now.
func (c *PrivateCluster) isMaster(n *Private) bool {
	info, err := n.Do("INFO", "replication")
	return err == nil && strings.Contains(info, "role:master")
}

// Fill makes the server full the way a production Redis gets full: policy
// noeviction, maxmemory just above the memory in use, then writes until
// Redis refuses one with OOM. maxmemory then goes 512 KiB below the memory
// in use, so that the state holds while the test runs (a client connection
// alone takes some 20 KiB, freed when it closes).
func (p *Private) Fill(t testing.TB) {
	t.Helper()
	p.MustDo(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	p.MustDo(t, "CONFIG", "SET", "maxmemory", strconv.FormatInt(p.usedMemory(t)+256<<10, 10))
	filler := strings.Repeat("x", 16<<10)
	for i := 0; ; i++ {
		_, err := p.Do("SET", fmt.Sprintf("testkit:filler:%d", i), filler)
		if err != nil && strings.HasPrefix(err.Error(), "OOM") {
			break
		}
		if err != nil || i == 1000 {
			t.Fatalf("testkit: filling Redis up: write %d: %v", i, err)
		}
	}
	p.MustDo(t, "CONFIG", "SET", "maxmemory", strconv.FormatInt(p.usedMemory(t)-512<<10, 10))
}

// usedMemory returns INFO memory's used_memory.
func (p *Private) usedMemory(t testing.TB) int64 {
	t.Helper()
	info := p.MustDo(t, "INFO", "memory")
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("testkit: used_memory %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("testkit: no used_memory in INFO memory:\n%s", info)
	return 0
}
