package chaos

import (
	"slices"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	graceful := Promise{Lost: Zero, Duplicates: Zero}
	lostOnly := Promise{Lost: Zero, Duplicates: Shown, Overlaps: Zero}
	shown := Promise{Lost: Shown, Duplicates: Shown, Overlaps: Shown}
	fault := []FaultReport{{Kind: "k"}}
	confirmed := Promise{Lost: Zero, Confirmed: true, Duplicates: Shown, Overlaps: Shown, Resume: 2 * time.Second}
	noErrors := Promise{Lost: Zero, Duplicates: Zero, NoErrors: true}
	spread := Promise{Lost: Zero, Duplicates: Zero, Spread: true}
	cutFault := func(resume time.Duration) []FaultReport {
		// killed at +1s, served again at +4s
		return []FaultReport{{Kind: "kill -9 master", Partitions: []int{0, 5}, Start: time.Second, Back: 4 * time.Second, Resume: resume}}
	}
	ready := Promise{Lost: Zero, Duplicates: Shown, Overlaps: Zero, Ready: 2 * time.Second}
	readyFault := func(ready ...time.Duration) []FaultReport {
		return []FaultReport{{Kind: "restart of every daemon during kill -9 of", Target: "redis", Back: 3 * time.Second, Ready: ready}}
	}
	shares := func(jobs ...float64) []Share {
		var out []Share
		for _, j := range jobs {
			out = append(out, Share{Master: "m", Jobs: j})
		}
		return out
	}
	cases := []struct {
		name       string
		r          Result
		allowKnown bool
		verdict    string
		broken     int
		failed     bool
	}{
		{"clean", Result{promise: graceful, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault}}, false, VerdictPass, 0, false},
		{"duplicates where allowed", Result{promise: lostOnly, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 4, Faults: fault}}, false, VerdictPass, 0, false},
		{"duplicates on a graceful path", Result{promise: graceful, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 1, Faults: fault}}, false, VerdictFail, 1, true},
		{"loss where promised none", Result{promise: lostOnly, ran: true, Tally: Tally{Jobs: 10, Delivered: 9, Lost: 1, Faults: fault}}, false, VerdictFail, 1, true},
		{"overlap where promised none", Result{promise: lostOnly, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 1, Overlaps: 1, Faults: fault}}, false, VerdictFail, 1, true},
		{"overlap on a graceful path", Result{promise: graceful, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 1, Overlaps: 1, Faults: fault}}, false, VerdictFail, 2, true},
		{"overlap shown", Result{promise: shown, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 1, Overlaps: 1, Faults: fault}}, false, VerdictPass, 0, false},
		{"loss and duplicates", Result{promise: graceful, ran: true, Tally: Tally{Jobs: 10, Delivered: 9, Lost: 1, Duplicates: 2, Faults: fault}}, false, VerdictFail, 2, true},
		{"loss shown", Result{promise: shown, ran: true, Tally: Tally{Jobs: 10, Delivered: 7, Lost: 3, Duplicates: 2, Faults: fault}}, false, VerdictPass, 0, false},
		{"known failure allowed", Result{promise: graceful, ran: true, Known: "why", Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 1, Faults: fault}}, true, VerdictKnown, 1, false},
		{"known failure not allowed", Result{promise: graceful, ran: true, Known: "why", Tally: Tally{Jobs: 10, Delivered: 10, Duplicates: 1, Faults: fault}}, false, VerdictKnown, 1, true},
		{"known but passing", Result{promise: graceful, ran: true, Known: "why", Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault}}, true, VerdictPass, 0, false},
		{"an anomaly breaks the promise", Result{promise: shown, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault, Anomalies: []string{"d1#1 exited with status 1 after SIGTERM"}}}, false, VerdictFail, 1, true},
		{"no fault proves nothing", Result{promise: graceful, ran: true, Tally: Tally{Jobs: 10, Delivered: 10}}, false, VerdictError, 0, true},
		{"no job proves nothing", Result{promise: graceful, ran: true, Tally: Tally{Faults: fault}}, false, VerdictError, 0, true},
		{"set-up error", Result{promise: graceful, ran: true, Error: "set up: boom"}, true, VerdictError, 0, true},
		{"left out", Result{promise: graceful, Error: "full run only"}, false, VerdictNotRun, 0, false},
		{"unconfirmed losses shown", Result{promise: confirmed, ran: true, Tally: Tally{Jobs: 10, Delivered: 8, Lost: 2, LostUnconfirmed: 2, Faults: cutFault(3 * time.Second)}}, false, VerdictPass, 0, false},
		{"a confirmed loss", Result{promise: confirmed, ran: true, Tally: Tally{Jobs: 10, Delivered: 8, Lost: 2, LostConfirmed: 1, LostUnconfirmed: 1, Faults: cutFault(3 * time.Second)}}, false, VerdictFail, 1, true},
		{"resumed in time", Result{promise: confirmed, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: cutFault(5 * time.Second)}}, false, VerdictPass, 0, false},
		{"resumed too late", Result{promise: confirmed, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: cutFault(5100 * time.Millisecond)}}, false, VerdictFail, 1, true},
		{"never resumed", Result{promise: confirmed, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: cutFault(0)}}, false, VerdictFail, 1, true},
		{"no resume promised", Result{promise: shown, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: cutFault(0)}}, false, VerdictPass, 0, false},
		{"producer errors where promised none", Result{promise: noErrors, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, ProducerErrors: 1, Faults: fault}}, false, VerdictFail, 1, true},
		{"producer errors shown", Result{promise: graceful, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, ProducerErrors: 1, Faults: fault}}, false, VerdictPass, 0, false},
		{"an even spread", Result{promise: spread, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault, Spread: shares(0.30, 0.40, 0.30)}}, false, VerdictPass, 0, false},
		{"an uneven spread", Result{promise: spread, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault, Spread: shares(0.20, 0.45, 0.35)}}, false, VerdictFail, 2, true},
		{"no spread measured", Result{promise: spread, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault}}, false, VerdictFail, 1, true},
		{"ready in time", Result{promise: ready, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: readyFault(time.Second, 2*time.Second)}}, false, VerdictPass, 0, false},
		{"ready too late", Result{promise: ready, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: readyFault(time.Second, 2100*time.Millisecond, 3*time.Second)}}, false, VerdictFail, 2, true},
		{"ready not measured", Result{promise: ready, ran: true, Tally: Tally{Jobs: 10, Delivered: 10, Faults: fault}}, false, VerdictFail, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := c.r
			r.judge(c.allowKnown)
			if r.Verdict != c.verdict || len(r.Broken) != c.broken || r.Failed() != c.failed {
				t.Errorf("verdict %q, broken %q, failed %v; want %q, %d broken, failed %v",
					r.Verdict, r.Broken, r.Failed(), c.verdict, c.broken, c.failed)
			}
		})
	}
}

func TestPromiseString(t *testing.T) {
	t.Parallel()
	got := []string{
		Promise{Lost: Zero, Duplicates: Zero, Overlaps: Zero}.String(),
		Promise{Lost: Zero, Duplicates: Shown, Overlaps: Zero}.String(),
		Promise{Lost: Zero, Duplicates: Shown, Overlaps: Shown}.String(),
		Promise{Lost: Shown, Duplicates: Shown, Overlaps: Shown}.String(),
		Promise{Lost: Zero, Confirmed: true, Duplicates: Shown, Overlaps: Shown}.String(),
		Promise{Lost: Zero, Duplicates: Zero, Overlaps: Zero, NoErrors: true}.String(),
	}
	if want := []string{"lost=0 dup=0", "lost=0 overlap=0", "lost=0", "shown", "confirmed lost=0", "lost=0 dup=0 err=0"}; !slices.Equal(got, want) {
		t.Errorf("promises = %q, want %q", got, want)
	}
}

func TestEveryScenarioIsComplete(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		if s.Name == "" || s.Fault == "" || s.Inject == nil || seen[s.Name] {
			t.Errorf("scenario %+v: needs a unique name, a fault and an Inject", s)
		}
		seen[s.Name] = true
		// Graceful paths promise no duplicates; only a real death may
		// duplicate.
		if s.Promise.Lost == Shown && s.Topology == OnSingle && s.Fsync != "everysec" {
			t.Errorf("%s: loss may only be shown where Redis's own window allows it", s.Name)
		}
	}
	for _, name := range []string{"daemon-sigterm", "redis-blip", "redis-oom", "cluster-reshard"} {
		s := findScenario(name)
		if s == nil || s.Promise != (Promise{Lost: Zero, Duplicates: Zero, Overlaps: Zero}) {
			t.Errorf("%s must promise lost=0 dup=0: a graceful path", name)
		}
	}
	// Issue 17: a partition's slot resharded under load is graceful, and
	// the producer sees no error.
	if s := findScenario("cluster-reshard-partition"); s == nil || !s.Short || s.Partitions < 2 || s.Target == 0 ||
		s.Promise != (Promise{Lost: Zero, Duplicates: Zero, Overlaps: Zero, NoErrors: true}) {
		t.Errorf("cluster-reshard-partition: want a short-run reshard of a partition other than 0, graceful, no producer error: %+v", s)
	}
	// Issue 17: a master's failover loses no enqueue a replica confirmed,
	// processing resumes within 2 s of the promotion, and the jobs spread
	// over the masters.
	if s := findScenario("cluster-failover"); s == nil || !s.Short || s.Partitions < 3 || s.Durability.Replicas < 1 ||
		s.Promise.Lost != Zero || !s.Promise.Confirmed || s.Promise.Resume != failoverResume || !s.Promise.Spread {
		t.Errorf("cluster-failover: want a short-run failover of a partitioned queue with replicated enqueues, confirmed lost=0, resume and spread promised: %+v", s)
	}
}

func findScenario(name string) *Scenario {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s
		}
	}
	return nil
}
