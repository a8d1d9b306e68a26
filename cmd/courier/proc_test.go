package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The tests in this file run the courier binary as users do: built once
// with go build, started as a process, stopped with signals.

// courierBinary builds cmd/courier once per test run and returns its path.
func courierBinary(t *testing.T) string {
	t.Helper()
	return testkit.Build(t, ".")
}

// How often a wait on a courier process looks again: each look reads its
// whole log, or sends it an HTTP request.
const (
	logPollEvery  = 10 * time.Millisecond
	httpPollEvery = 20 * time.Millisecond
)

// proc is a running courier process.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout testkit.Buffer
	stderr testkit.Buffer
	done   chan struct{}
	err    error
}

// startCourier starts the binary with args and a clean COURIER_ environment
// plus env.
func startCourier(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, done: make(chan struct{})}
	p.cmd = exec.Command(courierBinary(t), args...)
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("courier %s stderr:\n%s", strings.Join(args, " "), p.stderr.String())
		}
	})
	return p
}

// cleanEnv is the test's environment without COURIER_* configuration.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COURIER_") {
			env = append(env, kv)
		}
	}
	return env
}

// signal sends sig to the process.
func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal: %v", err)
	}
}

// wait waits up to d for the process to exit and returns its exit code.
func (p *proc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.t.Fatalf("courier did not exit within %s; stderr:\n%s", d, p.stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return exit.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("wait: %v", p.err)
	}
	return 0
}

// waitOutput waits up to d for re to match the process's stderr (or stdout)
// and returns the first submatch, or the whole match.
func (p *proc) waitOutput(re *regexp.Regexp, d time.Duration) string {
	p.t.Helper()
	var match string
	err := testkit.Poll{Every: logPollEvery, Stop: p.done}.Until(p.t, d, func() bool {
		for _, s := range []string{p.stderr.String(), p.stdout.String()} {
			if m := re.FindStringSubmatch(s); m != nil {
				match = m[len(m)-1]
				return true
			}
		}
		return false
	})
	switch {
	case errors.Is(err, testkit.ErrStopped):
		p.t.Fatalf("courier exited (%v) before its output matched %s; stderr:\n%s", p.err, re, p.stderr.String())
	case err != nil:
		p.t.Fatalf("output did not match %s within %s; stderr:\n%s", re, d, p.stderr.String())
	}
	return match
}

var httpAddrRE = regexp.MustCompile(`"http listening" addr=(127\.0\.0\.1:\d+)`)

// courierCLI runs the binary to completion and returns its exit code and
// output.
func courierCLI(ctx context.Context, t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, courierBinary(t), args...)
	cmd.Env = cleanEnv()
	cmd.Stdin = stdin
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("courier %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// writeConfig writes a YAML configuration for a test.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "courier.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lines returns the non-empty lines of s, for scanning logs.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// serveInProcess runs a worker.Daemon of the test's own, serving queue
// with h, on the test Redis under cfg (Prefix required; the logs are
// discarded and the shutdown timeout is a second), until the test ends:
// for what no built-in handler of courier run does (report progress, set a
// result, block until cancelled).
func serveInProcess(t *testing.T, cfg worker.Config, queue string, h worker.Handler, opts worker.QueueOptions) {
	t.Helper()
	reg := worker.NewRegistry()
	if err := reg.Register(queue, h, opts); err != nil {
		t.Fatal(err)
	}
	cfg.Logger, cfg.ShutdownTimeout = slog.New(slog.DiscardHandler), time.Second
	d, err := worker.NewDaemon(testkit.Single(t), reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}
