package worker_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// dialOption is a client option for addr with short timeouts.
func dialOption(addr string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, Dialer: net.Dialer{Timeout: time.Second}}
}

// reasons records what Dial tells DialOptions.Waiting.
type reasons struct {
	mu   sync.Mutex
	told []error
}

func (r *reasons) add(err error) { r.mu.Lock(); r.told = append(r.told, err); r.mu.Unlock() }

// last returns how many times Waiting was told, and the last error.
func (r *reasons) last() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.told) == 0 {
		return 0, nil
	}
	return len(r.told), r.told[len(r.told)-1]
}

// TestDialWaitsForRedis: Dial, while nothing listens on the address, waits
// and says why; once Redis answers there it returns a working client, on
// which a Daemon runs jobs.
func TestDialWaitsForRedis(t *testing.T) {
	t.Parallel()
	redis := testkit.StartPrivate(t)
	redis.Kill()
	var r reasons
	type dialed struct {
		rdb rueidis.Client
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		rdb, err := worker.Dial(t.Context(), dialOption(redis.Addr), worker.DialOptions{Logger: testLogger(t), Waiting: r.add})
		done <- dialed{rdb, err}
	}()
	testkit.Eventually(t, 10*time.Second, "Dial to say it waits", func() bool {
		_, err := r.last()
		return worker.IsRedisUnavailable(err)
	})
	if len(done) > 0 {
		t.Fatalf("Dial returned while Redis was down: %v", (<-done).err)
	}
	redis.Restart(t)
	back := time.Now()
	var d dialed
	select {
	case d = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Dial did not return within 10 s of Redis answering")
	}
	t.Logf("Dial returned %s after Redis answered", time.Since(back).Round(time.Millisecond))
	if d.err != nil {
		t.Fatalf("Dial = %v", d.err)
	}
	t.Cleanup(d.rdb.Close)
	if n, err := r.last(); err != nil || n < 2 {
		t.Errorf("Waiting was last told %v (%d calls), want the errors then nil", err, n)
	}

	cfg := testConfig(t, testkit.Prefix(t))
	rec := newRecorder()
	startDaemon(t, d.rdb, register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{}), cfg)
	id := enqueue(t, newClient(t, d.rdb, cfg), worker.JobSpec{Queue: "q"})
	rec.WaitCalls(t, id, 1, 10*time.Second)
}

// TestDialRefused: what waiting cannot fix is returned at once: a wrong
// password, no password where one is needed, a server certificate of
// another CA.
func TestDialRefused(t *testing.T) {
	t.Parallel()
	auth := testkit.StartPrivate(t)
	auth.MustDo(t, "CONFIG", "SET", "requirepass", "right-password")
	_, tlsAddr := testkit.StartPrivateTLS(t, testkit.NewCA(t))
	withPassword := dialOption(auth.Addr)
	withPassword.Password = "wrong-password"
	otherCA := dialOption(tlsAddr)
	otherCA.TLSConfig = &tls.Config{RootCAs: testkit.NewCA(t).Pool(), MinVersion: tls.VersionTLS12}
	for _, tt := range []struct {
		name string
		opt  rueidis.ClientOption
	}{
		{"wrong password", withPassword},
		{"no password", dialOption(auth.Addr)},
		{"certificate of another CA", otherCA},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			rdb, err := worker.Dial(ctx, tt.opt, worker.DialOptions{Logger: testLogger(t)})
			if err == nil {
				rdb.Close()
				t.Fatal("Dial succeeded")
			}
			if ctx.Err() != nil || worker.IsRedisUnavailable(err) {
				t.Errorf("Dial = %v (context: %v); want the refusal at once", err, ctx.Err())
			}
		})
	}
}

// TestDialStops: Dial waiting for a Redis that is down returns when its
// context ends, with an error that wraps the context's.
func TestDialStops(t *testing.T) {
	t.Parallel()
	redis := testkit.StartPrivate(t)
	redis.Kill()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	rdb, err := worker.Dial(ctx, dialOption(redis.Addr), worker.DialOptions{Logger: testLogger(t)})
	if err == nil {
		rdb.Close()
		t.Fatal("Dial succeeded while Redis was down")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial = %v; want it to wrap the context's error", err)
	}
}
