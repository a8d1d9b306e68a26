package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// redisStartTimeout bounds a redis-server start, AOF loading included.
const redisStartTimeout = 30 * time.Second

// clusterNodeTimeout is every Cluster node's cluster-node-timeout: how
// long a master may not answer before its replica takes over. Small, so
// that a failover fits in a scenario.
const clusterNodeTimeout = 2 * time.Second

// Redis is one redis-server process the suite started. It keeps its address
// and directory across kills and restarts, so a restart reloads its AOF.
type Redis struct {
	Addr string // 127.0.0.1:port, the same after a restart
	Dir  string // working directory: AOF, nodes.conf and the log

	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// startRedis starts redis-server on a free port in dir with args added to
// the suite's base options (later options win), and waits until it answers.
func startRedis(ctx context.Context, dir string, cluster bool, args ...string) (*Redis, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var last error
	for range 5 {
		ports, err := redisproc.FreePorts(1, cluster)
		if err != nil {
			return nil, err
		}
		p := strconv.Itoa(ports[0])
		r := &Redis{Addr: net.JoinHostPort("127.0.0.1", p), Dir: dir}
		r.args = []string{
			"--port", p, "--bind", "127.0.0.1", "--dir", dir,
			"--logfile", filepath.Join(dir, "redis-"+p+".log"),
			"--save", "", "--enable-debug-command", "yes",
			"--maxmemory-policy", "noeviction",
		}
		if cluster {
			// A replica syncs at once: by default a master waits 5 s for
			// more replicas before a diskless transfer.
			r.args = append(r.args, "--cluster-enabled", "yes",
				"--cluster-config-file", "nodes-"+p+".conf",
				"--cluster-node-timeout", strconv.FormatInt(clusterNodeTimeout.Milliseconds(), 10),
				"--repl-diskless-sync-delay", "0")
		}
		r.args = append(r.args, args...)
		if last = r.Start(ctx); last == nil {
			return r, nil
		}
	}
	return nil, fmt.Errorf("start redis-server in %s: %w", dir, last)
}

// Start runs the server (again) and waits until it has loaded its data and
// answers PING.
func (r *Redis) Start(ctx context.Context) error {
	cmd := exec.Command("redis-server", r.args...) //nolint:noctx // ended by Kill, never by a context
	cmd.Dir = r.Dir
	cmd.SysProcAttr = redisproc.SysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	r.mu.Lock()
	r.cmd, r.done = cmd, done
	r.mu.Unlock()
	err := until(ctx, redisStartTimeout, 20*time.Millisecond, "redis-server on "+r.Addr+" answers PING",
		func(ctx context.Context) (bool, error) {
			select {
			case <-done:
				return false, fmt.Errorf("redis-server on %s exited: %v (see %s)", r.Addr, cmd.ProcessState, r.Dir)
			default:
			}
			pong, err := commandString(ctx, r.Addr, "PING")
			return err == nil && pong == "PONG", err
		})
	if err != nil {
		r.Kill()
	}
	return err
}

// Restart starts the server again after Kill, retrying while the port is
// still held by the killed process.
func (r *Redis) Restart(ctx context.Context) error {
	var err error
	for range 20 {
		if err = r.Start(ctx); err == nil {
			return nil
		}
		if !pause(ctx, 100*time.Millisecond) {
			break
		}
	}
	return err
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it to
// be gone. Killing a stopped server does nothing.
func (r *Redis) Kill() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Running reports whether the process runs.
func (r *Redis) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// Do sends one command to the server (see command).
func (r *Redis) Do(ctx context.Context, args ...string) (any, error) {
	return command(ctx, r.Addr, args...)
}

// DoString sends one command whose reply is a string.
func (r *Redis) DoString(ctx context.Context, args ...string) (string, error) {
	return commandString(ctx, r.Addr, args...)
}

// Info returns a section of INFO.
func (r *Redis) Info(ctx context.Context, section string) (string, error) {
	return r.DoString(ctx, "INFO", section)
}
