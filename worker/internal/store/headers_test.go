package store_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestHeadersTravelWithTheJob: a job's headers are written once, in a c4
// record, and come back from every read, unchanged by a retry, a claim of
// a job with its own max (the header migrates to the state entry), a death
// and a requeue; a job without headers keeps the c3 record.
func TestHeadersTravelWithTheJob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		h := map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "x-tenant": "a=b;c"}
		withOpts := store.NewJob{ID: "opts", Payload: []byte("p2"), Headers: h, MaxAttempts: 2, Priority: store.PriorityHigh}
		enqueue(t, s, store.NewJob{ID: "plain", Payload: []byte("p1"), Headers: h}, withOpts, job("bare", "p3"))

		for id, magic := range map[string]string{"plain": "c4;", "opts": "c4;", "bare": "c3;"} {
			raw, _ := testkit.HGet(t, c, k.Jobs, id)
			if !strings.HasPrefix(raw, magic) {
				t.Errorf("record of %s = %q, want it to start with %q", id, raw, magic)
			}
		}
		wantHeaders := func(what string, r store.Record, want map[string]string, payload string) {
			t.Helper()
			if !maps.Equal(r.Headers, want) || string(r.Payload) != payload {
				t.Errorf("%s: headers %v payload %q, want %v %q", what, r.Headers, r.Payload, want, payload)
			}
		}
		wantHeaders("get plain", get(t, s, "plain").Record, h, "p1")
		wantHeaders("get bare", get(t, s, "bare").Record, nil, "p3")

		got := claim(t, s, 3, time.Minute)
		if len(got.Jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3", len(got.Jobs))
		}
		byID := map[string]store.Record{}
		for _, r := range got.Jobs {
			byID[r.ID] = r
		}
		wantHeaders("claimed plain", byID["plain"], h, "p1")
		wantHeaders("claimed opts", byID["opts"], h, "p2")
		if r := byID["opts"]; r.MaxAttempts != 2 || r.Attempt != 1 {
			t.Errorf("claimed opts: attempt %d of %d, want 1 of 2 (the c4 header decoded)", r.Attempt, r.MaxAttempts)
		}

		// A retry, a second claim, a death and a requeue keep the headers.
		opts := byID["opts"]
		if ok, err := s.Retry(t.Context(), queue, opts.Token(), 0, "boom"); err != nil || !ok {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		again := claimOne(t, s, time.Minute)
		wantHeaders("claimed after retry", again, h, "p2")
		if again.Attempt != 2 || again.LastError != "boom" {
			t.Errorf("after retry: attempt %d, error %q; want 2, boom", again.Attempt, again.LastError)
		}
		if ok, err := s.Kill(t.Context(), queue, again.Token(), "dead"); err != nil || !ok {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		wantHeaders("dead", get(t, s, "opts").Record, h, "p2")
		if moved, err := s.Requeue(t.Context(), queue, store.SetDead, []string{"opts"}); err != nil || !moved[0] {
			t.Fatalf("Requeue = %v, %v", moved, err)
		}
		requeued := claimOne(t, s, time.Minute)
		wantHeaders("claimed after requeue", requeued, h, "p2")
	})
}

func TestRecordCodecWithHeaders(t *testing.T) {
	t.Parallel()
	in := store.Record{ID: "x", Attempt: 3, MaxAttempts: 5, Timeout: time.Second, EnqueuedAt: time.UnixMilli(1700000000000),
		LastError: "e;rr", Headers: map[string]string{"a": "1=2", "b": ""}, Payload: []byte("c4;pay\nload")}
	s := store.EncodeRecord(in)
	if !strings.HasPrefix(s, "c4;3;5;1000;1700000000000;4;9;") {
		t.Fatalf("EncodeRecord = %q", s)
	}
	out, err := store.DecodeRecord("x", s)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(out.Headers, in.Headers) || string(out.Payload) != string(in.Payload) || out.LastError != in.LastError || out.Attempt != 3 {
		t.Errorf("round trip = %+v, want %+v", out, in)
	}
	for _, bad := range []string{
		"c4;0;0;0;0;0;9;a=1\n",        // headers past the end
		"c4;0;0;0;0;0;4;abc\npayload", // a header without '='
		"c4;0;0;0;0;0;3;a=1",          // no newline at the end of the section
		"c4;0;0;0;0;0;",               // the headers' length missing
	} {
		if _, err := store.DecodeRecord("x", bad); err == nil {
			t.Errorf("DecodeRecord(%q) = nil error, want corrupt", bad)
		}
	}
}
