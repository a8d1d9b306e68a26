package chaos

import (
	"slices"
	"testing"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	graceful := Promise{Lost: Zero, Duplicates: Zero}
	lostOnly := Promise{Lost: Zero, Duplicates: Shown, Overlaps: Zero}
	shown := Promise{Lost: Shown, Duplicates: Shown, Overlaps: Shown}
	fault := []FaultReport{{Kind: "k"}}
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
	}
	if want := []string{"lost=0 dup=0", "lost=0 overlap=0", "lost=0", "shown"}; !slices.Equal(got, want) {
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
}

func findScenario(name string) *Scenario {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s
		}
	}
	return nil
}
