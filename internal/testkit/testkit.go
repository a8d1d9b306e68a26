// Package testkit is the shared kit of Courier's tests, imported only from
// _test.go files. It offers:
//
//   - Backends: a real single Redis (Single, SingleAddr) and a 3-master
//     Redis Cluster (Cluster, ClusterAddrs), each started at most once per
//     test binary, lazily, and stopped by Main; Prefix gives each test a
//     key prefix of its own.
//   - Waits on the real clock (wait.go): WaitUntil, Eventually and
//     EventuallyState look at a condition every few milliseconds until it
//     holds; a Poll sets how often, and a channel that ends the wait early.
//     Tests on a fake clock (testing/synctest) use synctest.Wait instead.
//   - Raw Redis readers (raw.go): Do, HGetAll, HGet, ZScore, PTTL, Exists,
//     Del, RedisNow and Subscribers look at Redis behind the code under
//     test, and fail the test when Redis does not answer.
//   - Metric readers (metric.go): Metric reads one series of a Prometheus
//     Gatherer, Series all of them as `name{label="value",...}` strings.
//   - Certificates (certs.go): NewCA makes a CA for one test, which issues
//     server certificates for 127.0.0.1 and localhost and client
//     certificates, in memory or as files.
//
// Where the Redis comes from, in order:
//
//   - Single: REDIS_ADDR; else a redis-server process from PATH on a free
//     port.
//   - Cluster: REDIS_CLUSTER_ADDRS (comma-separated seeds); else three
//     redis-server processes joined by redis-cli --cluster create.
//
// With go test -short, the tests that need Redis skip; nothing else does.
// DEVELOPERS.md at the repository root explains the set-up.
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// Environment variables that choose where the Redis comes from.
const (
	EnvAddr         = "REDIS_ADDR"          // host:port of a running single Redis
	EnvClusterAddrs = "REDIS_CLUSTER_ADDRS" // comma-separated seeds of a running Redis Cluster
)

// startTimeout bounds starting one backend: a set of processes.
const startTimeout = 2 * time.Minute

const help = `testkit: the integration tests need Redis. Provide one of:
  - redis-server and redis-cli on PATH (make test installs them; Debian: apt-get install redis-server redis-tools);
  - REDIS_ADDR=host:port of a running Redis (and REDIS_CLUSTER_ADDRS=host:port,... of a running Redis Cluster).
The cluster tests need REDIS_CLUSTER_ADDRS or redis-server and redis-cli on PATH.
See DEVELOPERS.md; go test -short skips these tests.`

// A backend is started at most once per test binary. The error is kept, so
// every later caller fails with it too instead of trying again.
type backend struct {
	once  sync.Once
	addrs []string
	err   error
}

// The state below lives for the whole test binary because the servers do:
// they are shared by every test of the package and stopped by Main.
var (
	mainRunning     atomic.Bool
	single, cluster backend

	stopMu sync.Mutex
	stops  []func() error // run in reverse order by Main
)

// Main runs the package's tests (m.Run) then stops any Redis this package
// started; use from TestMain: func TestMain(m *testing.M) { testkit.Main(m) }
func Main(m *testing.M) {
	mainRunning.Store(true)
	code := m.Run()
	if err := stopAll(); err != nil {
		fmt.Fprintf(os.Stderr, "testkit: stopping Redis: %v\n", err)
	}
	os.Exit(code)
}

// onStop registers f to run when Main tears down.
func onStop(f func() error) {
	stopMu.Lock()
	defer stopMu.Unlock()
	stops = append(stops, f)
}

func stopAll() error {
	stopMu.Lock()
	defer stopMu.Unlock()
	var errs []error
	for i := len(stops) - 1; i >= 0; i-- {
		errs = append(errs, stops[i]())
	}
	stops = nil
	return errors.Join(errs...)
}

// Single returns a rueidis.Client connected to a single (non-cluster) Redis
// shared by the package's tests; closed at test cleanup.
func Single(t testing.TB) rueidis.Client {
	t.Helper()
	return connect(t, rueidis.ClientOption{InitAddress: []string{SingleAddr(t)}})
}

// SingleAddr returns "host:port" of that Redis (for tests that build their
// own client or run a subprocess).
func SingleAddr(t testing.TB) string {
	t.Helper()
	return ensure(t, &single, startSingle)[0]
}

// Cluster returns a rueidis.Client connected to a 3-master Redis Cluster.
func Cluster(t testing.TB) rueidis.Client {
	t.Helper()
	return connect(t, rueidis.ClientOption{InitAddress: ClusterAddrs(t)})
}

// ClusterAddrs returns the cluster's seed addresses.
func ClusterAddrs(t testing.TB) []string {
	t.Helper()
	return append([]string(nil), ensure(t, &cluster, startCluster)...)
}

// ensure starts b on first use and returns its addresses, or ends the test.
func ensure(t testing.TB, b *backend, start func(ctx context.Context, logf func(string, ...any)) ([]string, error)) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis; run without -short")
	}
	if !mainRunning.Load() {
		t.Fatal("testkit: the package's TestMain must call testkit.Main(m), which stops the Redis it starts")
	}
	b.once.Do(func() {
		// The servers outlive this test: its context may end, the start may not.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), startTimeout)
		defer cancel()
		b.addrs, b.err = start(ctx, t.Logf)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.addrs
}

// connect returns a new client built with opt, closed at test cleanup.
// rueidis detects a cluster by itself.
func connect(t testing.TB, opt rueidis.ClientOption) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("testkit: connect to Redis at %s: %v", strings.Join(opt.InitAddress, ","), err)
	}
	t.Cleanup(c.Close)
	return c
}

// maxPrefixName bounds the test-name part of a prefix.
const maxPrefixName = 40

// Prefix returns a key prefix unique to this test (and safe as a Redis key
// part: no braces, no spaces), e.g. "ct-<8 random hex>-<sanitized test
// name, max ~40 chars>".
func Prefix(t testing.TB) string {
	t.Helper()
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		t.Fatalf("testkit: random prefix: %v", err)
	}
	name := []byte(t.Name())
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		case c == '/':
			name[i] = '.'
		default:
			name[i] = '_'
		}
	}
	// Keep the end: subtest names ("single", "cluster") say the most.
	if len(name) > maxPrefixName {
		name = name[len(name)-maxPrefixName:]
	}
	return "ct-" + hex.EncodeToString(r[:]) + "-" + string(name)
}
