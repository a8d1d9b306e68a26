package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// servingKinds is the UI's backend with the processes of each queue of
// kinds reporting those kinds, as processes that register worker.Kinds
// report them (admin.FleetProcess.Kinds): the pages are tested here on
// any fleet the library may read.
type servingKinds struct {
	ui.Backend
	kinds map[string][]string
}

func (s servingKinds) Fleet(ctx context.Context, queue string) (admin.Fleet, error) {
	f, err := s.Backend.Fleet(ctx, queue)
	for i := range f.Processes {
		f.Processes[i].Kinds = s.kinds[queue]
	}
	return f, err
}

// TestKindsOnPages: the queue's page lists the kinds its processes serve
// and marks each job listed whose kind none serves; its tables have a
// kind column only when a job listed has a kind; the job's page shows
// the kind, and the fleet page the kinds each process serves per queue.
// On single Redis and on Cluster.
func TestKindsOnPages(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]func(*testing.T) config{
		"single":  func(*testing.T) config { return config{} },
		"cluster": func(t *testing.T) config { return config{rdb: testkit.Cluster(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := cfg(t)
			c.uiOpts = func(o *ui.Options) {
				backend := o.Backend
				o.Backend = func() ui.Backend {
					return servingKinds{backend(), map[string][]string{"kq": {"email.send", "report:build"}}}
				}
			}
			b := setup(t, c)
			nop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
			b.serve("kq", nop)
			b.serve("plain", nop)
			b.enqueue(
				worker.JobSpec{Queue: "kq", ID: "e", Kind: "email.send", Delay: time.Hour},
				worker.JobSpec{Queue: "kq", ID: "typo", Kind: "reprot:build", Delay: time.Hour},
				worker.JobSpec{Queue: "kq", ID: "none", Delay: time.Hour},
				worker.JobSpec{Queue: "plain", ID: "p", Delay: time.Hour},
			)
			br := b.login(adminSecret)
			testkit.Eventually(t, 10*time.Second, "both queues served", func() bool {
				p := br.get("/ui/fleet").body
				return strings.Contains(p, `data-queue="kq"`) && strings.Contains(p, `data-queue="plain"`)
			})

			p := br.get("/ui/queues/kq?state=scheduled").want(t, http.StatusOK, `id="kinds-served"`,
				`<span class="chip" data-kind="email.send">email.send</span>`, `<span class="chip" data-kind="report:build">report:build</span>`,
				`<th>ID<th>Kind<th>Priority`)
			for id, want := range map[string]struct {
				cell     string
				unserved bool
			}{"e": {`<td class="id kind">email.send`, false}, "typo": {`<td class="id kind">reprot:build`, true}, "none": {`<td class="id kind">—`, true}} {
				row := rowOf(p.body, id)
				if !strings.Contains(row, want.cell) || strings.Contains(row, "not served") != want.unserved {
					t.Errorf("row of job %s: want %q, marked unserved %v: %s", id, want.cell, want.unserved, row)
				}
			}
			p = br.get("/ui/queues/plain?state=scheduled").want(t, http.StatusOK, `data-job-id="p"`)
			if strings.Contains(p.body, `<th>Kind`) || strings.Contains(p.body, `id="kinds-served"`) || strings.Contains(p.body, "not served") {
				t.Error("a queue without kinds shows a kind column, the kinds served or an unserved job")
			}

			br.get("/ui/queues/kq/jobs/e").want(t, http.StatusOK, `<dd id="job-kind"><code>email.send</code>`)
			br.get("/ui/queues/kq/jobs/none").want(t, http.StatusOK, `<dd id="job-kind">—`)

			p = br.get("/ui/fleet").want(t, http.StatusOK, `· kinds served: email.send, report:build</span>`)
			_, chip, _ := strings.Cut(p.body, `data-queue="plain"`)
			if chip, _, _ = strings.Cut(chip, "</span>"); strings.Contains(chip, "kinds") {
				t.Errorf("the fleet page lists kinds for queue plain: %s", chip)
			}
		})
	}
}

// warnOn is an API backend that warns on every job of queue and on no
// other, as admin.Client does on a queue no daemon has served.
type warnOn struct {
	admin.Operator
	queue string
}

func (w warnOn) Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error) {
	res, err := w.Operator.Enqueue(ctx, specs)
	for i := range res {
		res[i].Warning = ""
		if specs[i].Queue == w.queue {
			res[i].Warning = fmt.Sprintf("no daemon has ever served queue %q", w.queue)
		}
	}
	return res, err
}

// TestEnqueueFormKind: the enqueue form sends its kind, the API refuses
// a bad one naming kind, and the API's warning on an enqueue to a queue
// no daemon has served qualifies the flash, the job stored all the same.
func TestEnqueueFormKind(t *testing.T) {
	t.Parallel()
	b := setup(t, config{apiOpts: func(o *api.Options) {
		backend := o.Backend
		o.Backend = func() admin.Operator { return warnOn{backend(), "reprots"} }
	}})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "first"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q").want(t, http.StatusOK, `id="enqueue-kind"`)

	p := br.submit("/ui/queues/q/enqueue", url.Values{"payload": {"{}"}, "id": {"k"}, "kind": {"email.send"}})
	wantFlash(t, p, "ok", "Enqueued job k")
	if strings.Contains(p.body, `id="flash-warning"`) {
		t.Error("an enqueue the backend did not warn on shows a warning")
	}
	if j := b.job("q", "k"); j.Kind != "email.send" {
		t.Errorf("enqueued kind %q, want email.send", j.Kind)
	}
	p = br.submit("/ui/queues/q/enqueue", url.Values{"kind": {"email send"}})
	p.want(t, http.StatusBadRequest)
	wantFlash(t, p, "error", "kind")
	if !strings.Contains(p.body, `value="email send"`) {
		t.Error("the refused form does not keep its kind")
	}

	br.get("/ui/queues/reprots")
	p = br.submit("/ui/queues/reprots/enqueue", url.Values{"id": {"w"}})
	wantFlash(t, p, "ok", "Enqueued job w")
	if !strings.Contains(p.body, `<span class="warning" id="flash-warning">Warning: no daemon has ever served queue &#34;reprots&#34;</span>`) {
		t.Errorf("the enqueue's flash lacks the API's warning: %s", p.body)
	}
	b.job("reprots", "w")
}
