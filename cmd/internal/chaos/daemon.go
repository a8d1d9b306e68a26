package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// Timing of every daemon: a short lease and leader lease, so that what a
// killed process held comes back within a scenario; a drain long enough
// for every job the receiver holds (at most 2 s).
const (
	daemonLease         = 3 * time.Second
	daemonLeaderLease   = 3 * time.Second
	daemonShutdown      = 10 * time.Second
	daemonConcurrency   = 20
	daemonReadyTimeout  = 30 * time.Second
	daemonExitTimeout   = daemonShutdown + 10*time.Second
	daemonRecoverPeriod = 250 * time.Millisecond
	daemonPollInterval  = 500 * time.Millisecond
)

// daemonConfig is the courier run configuration of one daemon: its own
// HTTP port, the scenario's Redis addresses and prefix, and one webhook
// queue pointed at the receiver, naming the daemon in a header.
const daemonConfig = `# written by the chaos suite
redis:
  addr: [%s]
  prefix: %s
  dial_timeout: 1s
http:
  addr: %s
log:
  level: info
shutdown:
  timeout: %s
lease:
  duration: %s
leader:
  lease: %s
recover:
  interval: %s
poll:
  interval: %s
queues:
  %s:
    handler: webhook
    concurrency: %d%s
    max_attempts: 25
    timeout: 30s
    backoff:
      steps: [100ms, 500ms, 1s]
    webhook:
      url: %s
      allow_networks: [127.0.0.0/8] # the suite's receiver
      timeout: 20s
      headers:
        %s: "%s"
`

// Daemon is one courier run process, restarted as often as a scenario
// wants; each start is a new generation (d2#3), named in the webhook
// header so that the receiver knows who delivered.
type Daemon struct {
	Name string // d0, d1, ...

	bin, dir, httpAddr string
	redisAddrs         []string
	prefix, queue, url string
	partitions         int // the queue's; 0 or 1: not split
	keyCap             int // the queue's key_concurrency; 0: none

	mu   sync.Mutex
	gen  int
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the exit error of the last process, once done
}

// ID is the current generation's name: "d2#3".
func (d *Daemon) ID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.id()
}

// id is ID for a caller that holds d.mu.
func (d *Daemon) id() string { return fmt.Sprintf("%s#%d", d.Name, d.gen) }

// Start writes the daemon's configuration and starts a new process; its
// output goes to <dir>/<name>.log.
func (d *Daemon) Start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	id := d.id()
	addrs := make([]string, len(d.redisAddrs))
	for i, a := range d.redisAddrs {
		addrs[i] = `"` + a + `"`
	}
	split := ""
	if d.partitions > 1 {
		split = fmt.Sprintf("\n    partitions: %d", d.partitions)
	}
	if d.keyCap > 0 {
		split += fmt.Sprintf("\n    key_concurrency: %d", d.keyCap)
	}
	cfg := fmt.Sprintf(daemonConfig, strings.Join(addrs, ", "), d.prefix, d.httpAddr,
		daemonShutdown, daemonLease, daemonLeaderLease, daemonRecoverPeriod, daemonPollInterval,
		d.queue, daemonConcurrency, split, d.url, headerDaemon, id)
	path := filepath.Join(d.dir, d.Name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(d.dir, d.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "==> chaos: start %s at %s\n", id, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(d.bin, "run", "--config", path) //nolint:noctx // ended by signals, never by a context
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = redisproc.SysProcAttr()
	cmd.Env = daemonEnv()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", id, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		logf.Close()
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
		close(done)
	}()
	d.cmd, d.done = cmd, done
	return nil
}

// daemonEnv is the suite's environment without COURIER_ configuration, so
// that only the written file configures the daemon.
func daemonEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COURIER_") {
			env = append(env, kv)
		}
	}
	return env
}

// WaitReady waits until the daemon's /readyz answers 200: Redis answers and
// the pool runs.
func (d *Daemon) WaitReady(ctx context.Context) error {
	d.mu.Lock()
	done := d.done
	d.mu.Unlock()
	client := &http.Client{Timeout: time.Second}
	return until(ctx, daemonReadyTimeout, 50*time.Millisecond, d.ID()+" ready",
		func(ctx context.Context) (bool, error) {
			select {
			case <-done:
				return false, fmt.Errorf("%s exited (see %s.log)", d.ID(), filepath.Join(d.dir, d.Name))
			default:
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.httpAddr+"/readyz", nil)
			if err != nil {
				return false, err
			}
			resp, err := client.Do(req)
			if err != nil {
				return false, err
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
}

// Readyz asks the daemon's /readyz once: its status and the reason it
// gives when not ready.
func (d *Daemon) Readyz(ctx context.Context) (status int, reason string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.httpAddr+"/readyz", nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := (&http.Client{Timeout: time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var body struct{ Reason string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Reason, nil
}

// Kill ends the process with SIGKILL and waits for it.
func (d *Daemon) Kill() {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Term sends SIGTERM and waits for the drain to end. It returns an error
// when the process does not exit in time (it is killed then) or exits with
// a status other than 0.
func (d *Daemon) Term() error {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	id := d.id()
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(daemonExitTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("%s did not exit within %s of SIGTERM; killed", id, daemonExitTimeout)
	}
	d.mu.Lock()
	err := d.err
	d.mu.Unlock()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%s exited with status %d after SIGTERM", id, exit.ExitCode())
	}
	return err
}
