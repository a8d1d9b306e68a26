package store_test

import (
	"bufio"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// The sizes TestPayloadWork runs with. The suite's defaults keep it small;
// the figures quoted for issue 12 come from
//
//	go test ./worker/internal/store -run TestPayloadWork -v -args -payload.jobs=1000 -payload.kib=1024
//
// which holds 1 GiB in a Redis of the test's own.
var (
	payloadJobs = flag.Int("payload.jobs", 100, "TestPayloadWork: jobs per step (at most 1000: one recover or requeue call)")
	payloadKiB  = flag.Int("payload.kib", 256, "TestPayloadWork: the large payload, KiB")
)

// TestPayloadWork: recover, retry, kill, requeue and an enqueue of ids that
// exist never read nor write a stored record, so their work does not grow
// with the payloads' size. It runs each on jobs with 16-byte payloads and
// on jobs with payload.kib ones, in a Redis of its own, and logs Redis's own
// time per call (INFO commandstats, which leaves the network out). Times are
// reported, not asserted (speed is measured, never asserted by tests); what
// it asserts is that the jobs hash is bit for bit what enqueue wrote
// (DEBUG DIGEST-VALUE), and that each step moved every job.
func TestPayloadWork(t *testing.T) {
	t.Parallel()
	n := min(*payloadJobs, store.MaxBatch)
	p := testkit.StartPrivate(t)
	c := p.Client(t)
	s := store.New(c, testkit.Prefix(t), nil)
	t.Logf("%d jobs per step; Redis time per call, µs (per job in recover and requeue: /%d)", n, n)
	t.Logf("%-9s %9s %9s %9s %9s %9s", "payload", "recover", "retry", "kill", "requeue", "dup-enq")
	for _, size := range []int{16, *payloadKiB << 10} {
		queue := fmt.Sprintf("q%d", size)
		f := payloadSteps(t, s, c, p, queue, n, size)
		t.Logf("%-9s %9.0f %9.1f %9.1f %9.0f %9.0f", sizeName(size), f.recover, f.retry, f.kill, f.requeue, f.dupEnqueue)
		k := s.Keys(queue)
		do(t, c, c.B().Del().Key(k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State).Build())
	}
}

// payloadFigures is Redis's time per call of each step, µs.
type payloadFigures struct {
	recover, retry, kill, requeue, dupEnqueue float64
}

func payloadSteps(t *testing.T, s *store.Store, c rueidis.Client, p *testkit.Private, queue string, n, size int) payloadFigures {
	t.Helper()
	ctx := t.Context()
	k := s.Keys(queue)
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("j%04d", i)
	}
	// Enqueue and claim in chunks of about 32 MiB.
	chunk := max(1, min(store.MaxBatch, 32<<20/max(size, 1)))
	for i := 0; i < n; i += chunk {
		var jobs []store.NewJob
		for _, id := range ids[i:min(n, i+chunk)] {
			jobs = append(jobs, store.NewJob{ID: id, Payload: payload})
		}
		enqueueTo(t, s, queue, jobs...)
	}
	digest := digestOf(t, c, k.Jobs)
	claimAll := func(lease time.Duration) []store.Token {
		var toks []store.Token
		for len(toks) < n {
			got := claimFrom(t, s, queue, chunk, lease)
			if len(got.Jobs) == 0 {
				t.Fatalf("claimed %d of %d jobs", len(toks), n)
			}
			toks = append(toks, tokens(got.Jobs)...)
		}
		return toks
	}
	var f payloadFigures

	// Leases that ran out: recover all, in one call.
	claimAll(time.Millisecond)
	waitLeasesExpired(t, c, k, ids...)
	leader := leaderField(t, s, c, queue)
	f.recover = redisTime(t, p, func() {
		if got, err := s.Recover(ctx, queue, leader, n, 10); err != nil || got != (store.Recovered{Due: n}) {
			t.Fatalf("Recover = %+v, %v; want %d due", got, err, n)
		}
	})

	// Retry each (due at once), then kill each.
	toks := claimAll(time.Hour)
	f.retry = redisTime(t, p, func() {
		for _, tok := range toks {
			if ok, err := s.Retry(ctx, queue, tok, 0, "failed"); !ok || err != nil {
				t.Fatalf("Retry = %v, %v", ok, err)
			}
		}
	}) / float64(n)
	toks = claimAll(time.Hour)
	f.kill = redisTime(t, p, func() {
		for _, tok := range toks {
			if ok, err := s.Kill(ctx, queue, tok, "gave up"); !ok || err != nil {
				t.Fatalf("Kill = %v, %v", ok, err)
			}
		}
	}) / float64(n)

	// Requeue all, in one call; then enqueue the same ids again.
	f.requeue = redisTime(t, p, func() {
		moved, err := s.Requeue(ctx, queue, store.SetDead, ids)
		if err != nil || len(moved) != n || strings.Contains(fmt.Sprint(moved), "false") {
			t.Fatalf("Requeue = %v, %v; want every job moved", moved, err)
		}
	})
	dups := make([]store.NewJob, n)
	for i, id := range ids {
		dups[i] = store.NewJob{ID: id}
	}
	f.dupEnqueue = redisTime(t, p, func() {
		added, err := s.Enqueue(ctx, queue, dups)
		if err != nil || strings.Contains(fmt.Sprint(added), "true") {
			t.Fatalf("Enqueue of existing ids = %v, %v; want none added", added, err)
		}
	})

	if got := digestOf(t, c, k.Jobs); got != digest {
		t.Errorf("%s payloads: the jobs hash changed (digest %s, was %s): a record was rewritten", sizeName(size), got, digest)
	}
	if snap, err := s.Get(ctx, queue, ids[0]); err != nil || snap.Record.Attempt != 0 || snap.Record.LastError != "gave up" || len(snap.Record.Payload) != size {
		r := snap.Record
		t.Errorf("%s payloads: %s after the steps = attempt %d, error %q, %d bytes, %v; want 0, gave up, %d bytes",
			sizeName(size), ids[0], r.Attempt, r.LastError, len(r.Payload), err, size)
	}
	return f
}

// digestOf returns the digest of key's value (DEBUG DIGEST-VALUE).
func digestOf(t *testing.T, c rueidis.Client, key string) string {
	t.Helper()
	d, err := c.Do(t.Context(), c.B().Arbitrary("DEBUG", "DIGEST-VALUE").Keys(key).Build()).AsStrSlice()
	if err != nil || len(d) != 1 {
		t.Fatalf("DEBUG DIGEST-VALUE %s = %v, %v", key, d, err)
	}
	return d[0]
}

// redisTime runs f and returns the time Redis spent in scripts meanwhile,
// µs, by INFO commandstats (EVALSHA and EVAL).
func redisTime(t *testing.T, p *testkit.Private, f func()) float64 {
	t.Helper()
	before := scriptUsec(t, p)
	f()
	return scriptUsec(t, p) - before
}

func scriptUsec(t *testing.T, p *testkit.Private) float64 {
	t.Helper()
	var total float64
	sc := bufio.NewScanner(strings.NewReader(p.MustDo(t, "INFO", "commandstats")))
	for sc.Scan() {
		name, stats, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for field := range strings.SplitSeq(stats, ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				us, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("INFO commandstats: %s: %v", sc.Text(), err)
				}
				total += us
			}
		}
	}
	return total
}

func sizeName(size int) string {
	if size >= 1<<10 {
		return fmt.Sprintf("%dKiB", size>>10)
	}
	return fmt.Sprintf("%dB", size)
}
