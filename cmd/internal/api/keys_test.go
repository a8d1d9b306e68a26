package api

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestEnqueueKey: a job's key, sent as "key" with a single enqueue or in
// a batch, is stored as worker.JobSpec.Key and shown as "key" by GET and
// the listing; a job without one shows no "key". The API's Go client
// sends and reads it as admin.Client does. On single Redis and on
// Cluster, where a partitioned queue holds each key in its partition.
func TestEnqueueKey(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupOn(t, rdb(t))
			ctx := t.Context()
			b.serve("kq", func(context.Context, *worker.Job) error { return nil }, worker.QueueOptions{Partitions: 3, KeyConcurrency: 2}, worker.Config{})
			b.want(b.do("POST", "/v1/queues/kq/jobs", producerSecret, `{"id": "k1", "key": "acme", "delay": "1h"}`), http.StatusCreated)
			b.want(b.do("POST", "/v1/queues/kq/jobs/batch", producerSecret,
				`{"jobs": [{"id": "k2", "key": "globex", "delay": "1h"}, {"id": "k3", "delay": "1h"}, {"id": "k4", "key": "tenant/42", "delay": "1h"}]}`), http.StatusOK)
			c := newClient(t, b, producerSecret)
			if _, err := enqueueOne(ctx, c, worker.JobSpec{Queue: "kq", ID: "k5", Key: "acme", Delay: time.Hour}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"k1": "acme", "k2": "globex", "k3": "", "k4": "tenant/42", "k5": "acme"}
			for id, key := range want {
				direct, err := b.client.Get(ctx, "kq", id)
				if err != nil {
					t.Fatal(err)
				}
				if direct.Key != key {
					t.Errorf("%s: stored key %q, want %q", id, direct.Key, key)
				}
				r := b.want(b.do("GET", "/v1/queues/kq/jobs/"+id, producerSecret, ""), http.StatusOK)
				var v wire.Job
				r.json(t, &v)
				if v.Key != key || strings.Contains(string(r.body), `"key"`) != (key != "") {
					t.Errorf("%s: GET %s; want key %q", id, r.body, key)
				}
				viaAPI, err := c.Get(ctx, "kq", id)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(viaAPI, direct) {
					t.Errorf("%s: Get through the API\n%+v\ndirectly\n%+v", id, viaAPI, direct)
				}
			}
			var page wire.Page
			b.want(b.do("GET", "/v1/queues/kq/jobs?state=scheduled", adminSecret, ""), http.StatusOK).json(t, &page)
			listed := map[string]string{}
			for _, j := range page.Jobs {
				listed[j.ID] = j.Key
			}
			if !reflect.DeepEqual(listed, want) {
				t.Errorf("listing shows keys %q, want %q", listed, want)
			}
		})
	}
}

// TestKeys: GET …/keys lists the keys with the most waiting jobs, most
// first, cut at limit with the total; GET …/keys/{key} shows one (zeros
// for a key without jobs); PUT sets its limits on every partition, a
// member left out being the default, and DELETE removes them; each
// change's reply is the key after it, as the library reads it. On single
// Redis and on Cluster with a partitioned queue.
func TestKeys(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupOn(t, rdb(t))
			ctx := t.Context()
			// A paused queue of 4 partitions: its jobs wait.
			b.serve("kq", func(context.Context, *worker.Job) error { return nil }, worker.QueueOptions{Partitions: 4}, worker.Config{})
			testkit.Eventually(t, 10*time.Second, "the queue's 4 partitions", func() bool {
				f, err := b.client.Fleet(ctx, "kq")
				return err == nil && f.Partitions == 4
			})
			if err := b.client.Pause(ctx, "kq"); err != nil {
				t.Fatal(err)
			}
			var specs []worker.JobSpec
			for key, n := range map[string]int{"acme": 5, "globex": 3, "tenant/42": 1} {
				for range n {
					specs = append(specs, worker.JobSpec{Queue: "kq", Key: key})
				}
			}
			b.enqueue(append(specs, worker.JobSpec{Queue: "kq"})...)

			var list wire.KeyList
			b.want(b.do("GET", "/v1/queues/kq/keys", adminSecret, ""), http.StatusOK).json(t, &list)
			ptr := func(n int) *int { return &n }
			wantList := wire.KeyList{Total: 3, Keys: []wire.Key{
				{Key: "acme", Waiting: 5, Ready: 5, Weight: 1}, {Key: "globex", Waiting: 3, Ready: 3, Weight: 1}, {Key: "tenant/42", Waiting: 1, Ready: 1, Weight: 1},
			}}
			if !reflect.DeepEqual(list, wantList) {
				t.Errorf("GET keys: %+v, want %+v", list, wantList)
			}
			b.want(b.do("GET", "/v1/queues/kq/keys?limit=1", adminSecret, ""), http.StatusOK).json(t, &list)
			if len(list.Keys) != 1 || list.Keys[0].Key != "acme" || list.Total != 3 {
				t.Errorf("GET keys?limit=1: %+v", list)
			}
			key := func(path string) wire.Key {
				t.Helper()
				var k wire.Key
				b.want(b.do("GET", "/v1/queues/kq/keys/"+path, adminSecret, ""), http.StatusOK).json(t, &k)
				return k
			}
			if k := key("tenant%2F42"); !reflect.DeepEqual(k, wire.Key{Key: "tenant/42", Waiting: 1, Ready: 1, Weight: 1}) {
				t.Errorf("GET tenant/42: %+v", k)
			}
			r := b.want(b.do("GET", "/v1/queues/kq/keys/nobody", adminSecret, ""), http.StatusOK)
			if got := strings.TrimSpace(string(r.body)); got != `{"key":"nobody","waiting":0,"ready":0,"running":0,"concurrency":null,"weight":1,"rate_limit":null,"at_cap":false}` {
				t.Errorf("a key without jobs: %s", got)
			}

			// PUT sets, each member left out being the default; the reply is
			// the key after, as the library reads it.
			for _, tc := range []struct {
				body string
				want admin.KeyLimits
				view wire.Key
			}{
				{`{"concurrency": 2, "weight": 3}`, admin.KeyLimits{Concurrency: 2, Weight: 3}, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Concurrency: ptr(2), Weight: 3}},
				{`{"weight": 7}`, admin.KeyLimits{Concurrency: -1, Weight: 7}, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 7}},
				{`{"concurrency": 0, "weight": null}`, admin.KeyLimits{Concurrency: 0}, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Concurrency: ptr(0), Weight: 1}},
				{`{"concurrency": -1, "weight": 0}`, admin.DefaultKeyLimits, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 1}},
				{`{}`, admin.DefaultKeyLimits, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 1}},
				{`{"concurrency": 1000000, "weight": 1000}`, admin.KeyLimits{Concurrency: 1000000, Weight: 1000}, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Concurrency: ptr(1000000), Weight: 1000}},
				{`{"rate_limit": "10 per 1s"}`, admin.KeyLimits{Concurrency: -1, RateLimit: &worker.RateLimit{N: 10, Per: time.Second}},
					wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 1, RateLimit: new("10 per 1s")}},
				{`{"concurrency": 3, "rate_limit": "5000/1m"}`, admin.KeyLimits{Concurrency: 3, RateLimit: &worker.RateLimit{N: 5000, Per: time.Minute}},
					wire.Key{Key: "acme", Waiting: 5, Ready: 5, Concurrency: ptr(3), Weight: 1, RateLimit: new("5000 per 1m0s")}},
				{`{"rate_limit": ""}`, admin.KeyLimits{Concurrency: -1, RateLimit: &worker.RateLimit{}}, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 1, RateLimit: new("")}},
				{`{"rate_limit": null}`, admin.DefaultKeyLimits, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 1}},
				{`{"concurrency": 1000000, "weight": 1000}`, admin.KeyLimits{Concurrency: 1000000, Weight: 1000}, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Concurrency: ptr(1000000), Weight: 1000}},
			} {
				var got wire.Key
				b.want(b.do("PUT", "/v1/queues/kq/keys/acme", adminSecret, tc.body), http.StatusOK).json(t, &got)
				if !reflect.DeepEqual(got, tc.view) {
					t.Errorf("PUT %s: replied %+v, want %+v", tc.body, got, tc.view)
				}
				if s, err := b.client.Key(ctx, "kq", "acme"); err != nil || !reflect.DeepEqual(s.Limits, tc.want) {
					t.Errorf("PUT %s: the library reads %+v, %v; want limits %+v", tc.body, s, err, tc.want)
				}
			}
			if k := key("acme"); k.Concurrency == nil || *k.Concurrency != 1000000 || k.Weight != 1000 {
				t.Errorf("GET after PUT: %+v", k)
			}
			b.want(b.do("GET", "/v1/queues/kq/keys", adminSecret, ""), http.StatusOK).json(t, &list)
			if list.Keys[0].Key != "acme" || list.Keys[0].Weight != 1000 {
				t.Errorf("the list does not show acme's limits: %+v", list)
			}

			// DELETE removes them, twice alike.
			for range 2 {
				var got wire.Key
				b.want(b.do("DELETE", "/v1/queues/kq/keys/acme", adminSecret, ""), http.StatusOK).json(t, &got)
				if !reflect.DeepEqual(got, wire.Key{Key: "acme", Waiting: 5, Ready: 5, Weight: 1}) {
					t.Errorf("DELETE replied %+v", got)
				}
				if s, err := b.client.Key(ctx, "kq", "acme"); err != nil || !reflect.DeepEqual(s.Limits, admin.DefaultKeyLimits) {
					t.Errorf("after DELETE the library reads %+v, %v", s, err)
				}
			}

			// A key's limits through its percent-encoded path.
			b.want(b.do("PUT", "/v1/queues/kq/keys/tenant%2F42", adminSecret, `{"concurrency": 1}`), http.StatusOK)
			if s, err := b.client.Key(ctx, "kq", "tenant/42"); err != nil || !reflect.DeepEqual(s.Limits, admin.KeyLimits{Concurrency: 1}) {
				t.Errorf("tenant/42 after PUT: %+v, %v", s, err)
			}
			r = b.want(b.do("POST", "/v1/queues/kq/keys/acme", adminSecret, `{}`), http.StatusMethodNotAllowed)
			if allow := r.header.Get("Allow"); allow != "GET, PUT, DELETE" {
				t.Errorf("Allow %q on a key", allow)
			}
		})
	}
}

// TestKeyLimitsHold: a cap set through the API holds the key's running
// jobs to it across the fleet, and its removal lets the queue's cap
// apply again: the API changes what the workers do, not only what Redis
// holds.
func TestKeyLimitsHold(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b.serve("kq", func(ctx context.Context, _ *worker.Job) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, worker.QueueOptions{Concurrency: 10, KeyConcurrency: 3}, worker.Config{})
	b.want(b.do("PUT", "/v1/queues/kq/keys/acme", adminSecret, `{"concurrency": 1}`), http.StatusOK)
	var specs []worker.JobSpec
	for range 6 {
		specs = append(specs, worker.JobSpec{Queue: "kq", Key: "acme"})
	}
	b.enqueue(specs...)
	running := func(want int64) func() bool {
		return func() bool {
			s, err := b.client.Key(ctx, "kq", "acme")
			return err == nil && s.Running == want && s.Waiting == 6-want
		}
	}
	testkit.Eventually(t, 10*time.Second, "one acme job running, at its own cap", running(1))
	var k wire.Key
	b.want(b.do("GET", "/v1/queues/kq/keys/acme", adminSecret, ""), http.StatusOK).json(t, &k)
	if !k.AtCap || k.Running != 1 || k.Waiting != 5 {
		t.Errorf("at its cap, GET shows %+v", k)
	}
	b.want(b.do("DELETE", "/v1/queues/kq/keys/acme", adminSecret, ""), http.StatusOK)
	testkit.Eventually(t, 10*time.Second, "three acme jobs running, at the queue's cap", running(3))
}

// TestClientKeys: the API's Go client reads keys and sets their limits
// as admin.Client does, with the same results and errors.
func TestClientKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, adminSecret)
	ctx := t.Context()
	b.enqueue(worker.JobSpec{Queue: "q", Key: "acme", Delay: time.Hour}, worker.JobSpec{Queue: "q", Key: "acme", Delay: time.Hour},
		worker.JobSpec{Queue: "q", Key: "b/c", Delay: time.Hour})

	for _, l := range []admin.KeyLimits{{Concurrency: 4, Weight: 9}, {Concurrency: 0, Weight: 2}, {Concurrency: -1, Weight: 5},
		{Concurrency: -1, RateLimit: &worker.RateLimit{N: 3, Per: 250 * time.Millisecond}}, {Concurrency: 2, RateLimit: &worker.RateLimit{}}, admin.DefaultKeyLimits} {
		if err := c.SetKeyLimits(ctx, "q", "b/c", l); err != nil {
			t.Fatal(err)
		}
		viaAPI, err := c.Key(ctx, "q", "b/c")
		if err != nil {
			t.Fatal(err)
		}
		direct, err := b.client.Key(ctx, "q", "b/c")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(direct.Limits, l) || !reflect.DeepEqual(wire.KeyOf(viaAPI), wire.KeyOf(direct)) {
			t.Errorf("limits %+v: through the API %+v, directly %+v", l, viaAPI, direct)
		}
	}
	viaAPI, err := c.Keys(ctx, "q", 10)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := b.client.Keys(ctx, "q", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wire.KeyListOf(viaAPI), wire.KeyListOf(direct)) || len(direct.Keys) != 2 || direct.Keys[0].Key != "acme" {
		t.Errorf("Keys through the API %+v, directly %+v", viaAPI, direct)
	}

	// Refusals read alike.
	for name, call := range map[string]func(op admin.Operator) error{
		"a bad key":    func(op admin.Operator) error { _, err := op.Key(ctx, "q", "a b"); return err },
		"a bad queue":  func(op admin.Operator) error { _, err := op.Keys(ctx, "a{b}", 10); return err },
		"an empty key": func(op admin.Operator) error { return op.SetKeyLimits(ctx, "q", "", admin.DefaultKeyLimits) },
		"a cap below -1": func(op admin.Operator) error {
			return op.SetKeyLimits(ctx, "q", "acme", admin.KeyLimits{Concurrency: -2})
		},
		"a cap over the max": func(op admin.Operator) error {
			return op.SetKeyLimits(ctx, "q", "acme", admin.KeyLimits{Concurrency: 1_000_001})
		},
		"a weight over 1000": func(op admin.Operator) error { return op.SetKeyLimits(ctx, "q", "acme", admin.KeyLimits{Weight: 1001}) },
		"a negative weight": func(op admin.Operator) error {
			return op.SetKeyLimits(ctx, "q", "acme", admin.KeyLimits{Concurrency: 1, Weight: -1})
		},
		"a key on a bad name": func(op admin.Operator) error { return op.SetKeyLimits(ctx, "a b", "acme", admin.DefaultKeyLimits) },
	} {
		viaAPI, direct := call(c), call(b.client)
		var ve, dve *worker.ValidationError
		if !errors.As(viaAPI, &ve) || !errors.As(direct, &dve) || ve.Field != dve.Field || viaAPI.Error() != direct.Error() {
			t.Errorf("%s: through the API %v, directly %v", name, viaAPI, direct)
		}
	}
	if s, err := b.client.Key(ctx, "q", "acme"); err != nil || !reflect.DeepEqual(s.Limits, admin.DefaultKeyLimits) {
		t.Errorf("after refused calls acme has %+v, %v", s, err)
	}
	err = newClient(t, b, producerSecret).SetKeyLimits(ctx, "q", "acme", admin.KeyLimits{Concurrency: 1})
	var e *Error
	if !errors.As(err, &e) || e.Code != wire.CodeForbidden {
		t.Errorf("producer: %v", err)
	}
}
