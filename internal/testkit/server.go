package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// server is a redis-server process started by this package.
type server struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startAttempts is how often a start is tried again when a port chosen as
// free was taken meanwhile by another process.
const startAttempts = 3

// startServers starts n redis-server processes on free loopback ports in one
// temporary directory, waits until each answers PING and registers their
// removal with Main. clustered adds the Redis Cluster options; the cluster
// bus port (port+10000) is then free as well.
func startServers(ctx context.Context, n int, clustered bool) ([]*server, error) {
	var errs []error
	for range startAttempts {
		srvs, err := tryStartServers(ctx, n, clustered)
		if err == nil {
			return srvs, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func tryStartServers(ctx context.Context, n int, clustered bool) (_ []*server, err error) {
	ports, err := redisproc.FreePorts(n, clustered)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "courier-testkit-*")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	var srvs []*server
	stop := func() error {
		for _, s := range srvs {
			s.stop()
		}
		return os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, logTails(dir))
			_ = stop()
		}
	}()
	for _, port := range ports {
		s, err := spawn(dir, port, clustered)
		if err != nil {
			return nil, err
		}
		srvs = append(srvs, s)
	}
	for _, s := range srvs {
		if err := s.waitReady(ctx); err != nil {
			return nil, err
		}
	}
	onStop(stop)
	return srvs, nil
}

// spawn starts one redis-server on port with its files in dir.
func spawn(dir string, port int, clustered bool) (*server, error) {
	p := strconv.Itoa(port)
	args := []string{
		"--port", p, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis-"+p+".log"),
	}
	if clustered {
		args = append(args, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+p+".conf"))
	}
	// The server outlives the test that starts it (Main stops it): no
	// test's context may end it.
	cmd := exec.Command("redis-server", args...) //nolint:noctx // see above
	cmd.Dir = dir
	cmd.SysProcAttr = redisproc.SysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &server{addr: net.JoinHostPort("127.0.0.1", p), cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// stop kills the process and waits for it to exit.
func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// waitReady waits until the server answers, failing early if it exits. The
// answer must come from this process: another test binary may have taken
// the port between FreePorts and the start.
func (s *server) waitReady(ctx context.Context) error {
	want := "process_id:" + strconv.Itoa(s.cmd.Process.Pid) + "\r\n"
	return poll(ctx, func() (bool, error) {
		select {
		case <-s.done:
			return false, fmt.Errorf("redis-server on %s exited: %v", s.addr, s.cmd.ProcessState)
		default:
		}
		info, err := command(ctx, s.addr, "INFO", "server")
		return err == nil && strings.Contains(info, want), nil
	})
}

// poll calls check every 20 ms until it reports done or an error, or ctx ends.
func poll(ctx context.Context, check func() (bool, error)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for Redis: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// command sends one command on a fresh connection, within a second, and
// returns a simple or bulk string reply, or an integer reply in decimal; an
// error reply is a *redisproc.RedisError, a null or an array an error. It
// is enough to probe servers during start-up.
func command(ctx context.Context, addr string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	reply, err := redisproc.Command(ctx, addr, args...)
	if err != nil {
		return "", err
	}
	switch r := reply.(type) {
	case string:
		return r, nil
	case int64:
		return strconv.FormatInt(r, 10), nil
	}
	return "", fmt.Errorf("%s to %s: unexpected reply %#v", args[0], addr, reply)
}

// logTails returns the end of each server log in dir, to explain a failed start.
func logTails(dir string) string {
	logs, _ := filepath.Glob(filepath.Join(dir, "redis-*.log"))
	var b strings.Builder
	for _, name := range logs {
		data, err := os.ReadFile(name)
		if err != nil || len(data) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		lines = lines[max(0, len(lines)-5):]
		fmt.Fprintf(&b, "\n%s:\n\t%s", filepath.Base(name), strings.Join(lines, "\n\t"))
	}
	return b.String()
}
