package admin_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// TestPrefixesKey: the public name is the key the store writes.
func TestPrefixesKey(t *testing.T) {
	t.Parallel()
	if rediskeys.PrefixesKey != store.PrefixesKey {
		t.Errorf("rediskeys.PrefixesKey = %q; the store writes %q", rediskeys.PrefixesKey, store.PrefixesKey)
	}
}

// TestCheckPrefix: a Client on the prefix of a running Daemon passes the
// check at once; a Client on another prefix gets a *PrefixError listing
// the Daemon's. The shared servers hold other tests' prefixes too, so the
// lists are checked for the Daemon's, not for equality.
func TestCheckPrefix(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		reg := workertest.Register(t, nil, "q", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), worker.QueueOptions{})
		workertest.StartDaemon(t, rdb, reg, workertest.Config(t, prefix))
		same := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		testkit.Eventually(t, 10*time.Second, "the daemon's prefix to be recorded", func() bool {
			return same.CheckPrefix(t.Context()) == nil
		})

		other := workertest.NewClient(t, rdb, workertest.Config(t, prefix+"-other"))
		err := other.CheckPrefix(t.Context())
		var pe *admin.PrefixError
		if !errors.As(err, &pe) || pe.Prefix != prefix+"-other" || !slices.Contains(pe.Live, prefix) {
			t.Fatalf("CheckPrefix on another prefix = %v; want a *PrefixError listing %q", err, prefix)
		}
		if errors.Is(err, admin.ErrNoDaemon) {
			t.Errorf("a *PrefixError matches ErrNoDaemon: %v", err)
		}
	})
}

// TestCheckPrefixExact: on a Redis of the test's own, the error lists
// exactly the live prefixes, and with no daemon at all CheckPrefix reports
// ErrNoDaemon.
func TestCheckPrefixExact(t *testing.T) {
	t.Parallel()
	rdb := testkit.StartPrivate(t).Client(t)
	c := workertest.NewClient(t, rdb, workertest.Config(t, "app"))
	if err := c.CheckPrefix(t.Context()); !errors.Is(err, admin.ErrNoDaemon) {
		t.Fatalf("CheckPrefix with no daemon = %v; want ErrNoDaemon", err)
	}

	reg := workertest.Register(t, nil, "q", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), worker.QueueOptions{})
	workertest.StartDaemon(t, rdb, reg, workertest.Config(t, "courier"))
	var pe *admin.PrefixError
	testkit.Eventually(t, 10*time.Second, "the daemon's prefix to be recorded", func() bool {
		return errors.As(c.CheckPrefix(t.Context()), &pe)
	})
	if want := `no courier daemon uses key prefix "app"; daemons run on "courier"`; pe.Error() != want || !slices.Equal(pe.Live, []string{"courier"}) {
		t.Errorf("CheckPrefix = %q, live %v; want %q", pe.Error(), pe.Live, want)
	}
}

// TestPrefixErrorMessage: the message names a few live prefixes and counts
// the rest.
func TestPrefixErrorMessage(t *testing.T) {
	t.Parallel()
	e := &admin.PrefixError{Prefix: "x", Live: []string{"a", "b", "c", "d", "e", "f", "g"}}
	want := `no courier daemon uses key prefix "x"; daemons run on "a", "b", "c", "d", "e" and 2 more`
	if e.Error() != want {
		t.Errorf("Error() = %q; want %q", e.Error(), want)
	}
}

// TestCheckPrefixUnreachable: when Redis does not answer, CheckPrefix
// returns that error, neither ErrNoDaemon nor a *PrefixError: it knows
// nothing of the daemons.
func TestCheckPrefixUnreachable(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	proxy, rdb := testkit.StartProxyClient(t, p.Addr)
	c := workertest.NewClient(t, rdb, workertest.Config(t, "app"))
	proxy.Stall()
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := c.CheckPrefix(ctx)
	var pe *admin.PrefixError
	if err == nil || errors.Is(err, admin.ErrNoDaemon) || errors.As(err, &pe) {
		t.Errorf("CheckPrefix with Redis unreachable = %v; want the Redis error", err)
	}
	proxy.Resume()
}

// TestDaemonWarnsOfWrongPrefix: a Daemon that is the first on its prefix,
// with no job, while a daemon runs on another prefix, says so at start.
func TestDaemonWarnsOfWrongPrefix(t *testing.T) {
	t.Parallel()
	rdb := testkit.StartPrivate(t).Client(t)
	noop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "mail", noop, worker.QueueOptions{}), workertest.Config(t, worker.PrefixDefault))
	first := workertest.NewClient(t, rdb, workertest.Config(t, worker.PrefixDefault))
	testkit.Eventually(t, 10*time.Second, "the first daemon to report its prefix", func() bool { return first.CheckPrefix(t.Context()) == nil })

	var logs testkit.Buffer
	cfg := workertest.Config(t, "mistyped")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "mail", noop, worker.QueueOptions{}), cfg)
	testkit.Eventually(t, 10*time.Second, "the wrong-prefix notice", func() bool {
		return strings.Contains(logs.String(), "first on its key prefix")
	})
	for _, attr := range []string{"prefix=mistyped", "other_prefixes=[courier]"} {
		if !strings.Contains(logs.String(), attr) {
			t.Errorf("the notice lacks %s:\n%s", attr, logs.String())
		}
	}
}

// TestPrefixUnderACL: a Redis user restricted to its prefix's keys cannot
// write PrefixesKey: the Daemon warns once and runs on, and CheckPrefix
// returns the refusal, not ErrNoDaemon.
func TestPrefixUnderACL(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	p.MustDo(t, "ACL", "SETUSER", "app", "on", ">pw", "resetkeys", "~app:*", "resetchannels", "&*", "+@all")
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{p.Addr}, Username: "app", Password: "pw", DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)

	var logs testkit.Buffer
	cfg := workertest.Config(t, "app")
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg := workertest.Register(t, nil, "q", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), worker.QueueOptions{})
	workertest.StartDaemon(t, rdb, reg, cfg)
	c := workertest.NewClient(t, rdb, workertest.Config(t, "app"))
	id := workertest.Enqueue(t, c, worker.JobSpec{Queue: "q"})
	testkit.Eventually(t, 10*time.Second, "the job to run and the warning", func() bool {
		return workertest.IsGone(t, c, "q", id) && strings.Contains(logs.String(), "may not write courier:prefixes")
	})
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings; want 1:\n%s", n, logs.String())
	}
	err = c.CheckPrefix(t.Context())
	if err == nil || errors.Is(err, admin.ErrNoDaemon) || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("CheckPrefix under the ACL = %v; want Redis' NOPERM", err)
	}
}
