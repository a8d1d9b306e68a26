package chaos

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// tableResults are a passing, a known-failing, an erroring and a left-out
// scenario, judged.
func tableResults() []Result {
	rs := []Result{{
		Scenario: "daemon-kill9", Fault: "kill -9", promise: Promise{Lost: Zero, Duplicates: Shown, Overlaps: Zero}, ran: true,
		Elapsed: 14 * time.Second,
		Tally: Tally{
			Jobs: 960, Delivered: 960, Duplicates: 12, Recover: 9500 * time.Millisecond,
			Faults: []FaultReport{{Kind: "kill -9", Target: "daemon d0#1", Start: 2 * time.Second, Recover: 9500 * time.Millisecond}},
			DupSamples: []DupSample{{ID: "j000434", Deliveries: []string{"attempt 1 by d1#1 at +5.55s", "attempt 2 by d2#1 at +8.56s"},
				After: "kill -9 daemon d1#1 at +5.7s"}},
		},
	}, {
		Scenario: "cluster-reshard", Fault: "reshard", promise: Promise{Lost: Zero, Duplicates: Zero}, ran: true,
		Known: "TRYAGAIN is not retried",
		Tally: Tally{Jobs: 496, Delivered: 490, Duplicates: 4, Lost: 6, LostByState: map[string]int{"active": 6},
			LostSamples: []LostSample{{ID: "j000001", State: "active"}},
			Faults:      []FaultReport{{Kind: "reshard", Target: "slot 1", Note: "8 keys moved"}}},
	}, {
		Scenario: "cluster-failover", Fault: "failover", promise: Promise{Lost: Shown, Duplicates: Shown, Overlaps: Shown}, ran: true,
		Error: "set up: redis-cli --cluster create: exit status 1",
	}, {
		Scenario: "redis-kill9-everysec", promise: Promise{Lost: Shown, Duplicates: Shown, Overlaps: Shown}, Error: "full run only",
	}}
	for i := range rs {
		rs[i].judge(true)
	}
	return rs
}

func TestWriteTableAlignsTheColumns(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteTable(&b, tableResults())
	lines := strings.Split(b.String(), "\n")
	header, rows := lines[0], lines[1:5]
	want := []string{
		"scenario              jobs  delivered  dup  dead  lost  recover  promise           result",
		"daemon-kill9           960        960   12     0     0     9.5s  lost=0 overlap=0  pass",
		"cluster-reshard        496        490    4     0     6     0.0s  lost=0 dup=0      FAIL (known, issue 12)",
		"cluster-failover         0          0    0     0     0        -  shown             ERROR",
		"redis-kill9-everysec     -          -    -     -     -        -  shown             not run: full run only",
	}
	for i, got := range append([]string{header}, rows...) {
		if got != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, got, want[i])
		}
	}
	// Each numeric column ends where its header ends.
	for _, col := range []string{"jobs", "delivered", "dup", "dead", "lost", "recover"} {
		end := strings.Index(header, col) + len(col)
		for _, row := range rows {
			if row[end-1] == ' ' {
				t.Errorf("column %s: row %q does not end at %d", col, row, end)
			}
		}
	}
}

func TestWriteTableExplainsEachRow(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteTable(&b, tableResults())
	out := b.String()
	for _, want := range []string{
		"daemon-kill9: kill -9; 1 episodes in 14s",
		"  slowest recovery: 9.5s after kill -9 daemon d0#1 at +2s",
		"  duplicate j000434: attempt 1 by d1#1 at +5.55s, attempt 2 by d2#1 at +8.56s; after kill -9 daemon d1#1 at +5.7s",
		"  broken: 6 acknowledged jobs lost",
		"  broken: 4 duplicate deliveries on a graceful path",
		"  known failing: TRYAGAIN is not retried",
		"  episode at +0s, reshard slot 1: 8 keys moved",
		"  lost: 6 active in Redis after the drain; e.g. j000001 (active)",
		"  error: set up: redis-cli --cluster create: exit status 1",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the notes lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "redis-kill9-everysec:") {
		t.Errorf("a scenario that did not run has no notes:\n%s", out)
	}
}

func TestWriteJSONKeepsEveryFigure(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	rep := Report{Mode: "short", Elapsed: time.Minute, Failed: true, Results: tableResults()}
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	r := back.Results[1]
	if back.Mode != "short" || len(back.Results) != 4 || r.Scenario != "cluster-reshard" ||
		r.Jobs != 496 || r.Lost != 6 || r.Duplicates != 4 || r.Verdict != VerdictKnown ||
		r.Promise != "lost=0 dup=0" || len(r.Broken) != 2 || r.Faults[0].Note != "8 keys moved" {
		t.Errorf("round trip lost figures: %+v", r)
	}
}

func TestWriteTableNotesTheClusterFigures(t *testing.T) {
	t.Parallel()
	rs := []Result{{
		Scenario: "cluster-failover", Fault: "failover", ran: true, Elapsed: 17 * time.Second,
		promise: Promise{Lost: Zero, Confirmed: true, Duplicates: Shown, Overlaps: Shown, Resume: 2 * time.Second, Spread: true},
		Tally: Tally{
			Jobs: 700, Delivered: 699, Lost: 1, LostByState: map[string]int{"absent": 1},
			Confirmed: 650, Unconfirmed: 50, LostUnconfirmed: 1, ProducerErrors: 7,
			Faults: []FaultReport{{Kind: "kill -9 master", Target: "127.0.0.1:7001", Start: 2 * time.Second, End: 2 * time.Second,
				Partitions: []int{0, 5}, Back: 5100 * time.Millisecond, Resume: 3400 * time.Millisecond}},
			Spread: []Share{
				{Master: "127.0.0.1:7001", Partitions: []int{0, 5}, Delivered: 233, Jobs: 0.333, Calls: 0.31, CPU: 0.29, CPUSeconds: 0.5},
				{Master: "127.0.0.1:7002", Partitions: []int{1, 2}, Delivered: 233, Jobs: 0.333, Calls: 0.35, CPU: 0.36, CPUSeconds: 0.62},
				{Master: "127.0.0.1:7003", Partitions: []int{3, 4}, Delivered: 233, Jobs: 0.334, Calls: 0.34, CPU: 0.35, CPUSeconds: 0.6},
			},
		},
	}, {
		Scenario: "restart-redis-down", Fault: "restarts during an outage", ran: true,
		promise: Promise{Lost: Zero, Duplicates: Shown, Overlaps: Zero, Ready: 2 * time.Second},
		Tally: Tally{Jobs: 500, Delivered: 500, Ready: 420 * time.Millisecond, Faults: []FaultReport{{
			Kind: "restart of every daemon during kill -9 of", Target: "redis (appendfsync always)",
			Start: 2300 * time.Millisecond, End: 5340 * time.Millisecond, Back: 5340 * time.Millisecond,
			Ready: []time.Duration{420 * time.Millisecond, 110 * time.Millisecond, 264 * time.Millisecond},
		}}},
	}, {
		Scenario: "cluster-reshard-partition", Fault: "reshard", ran: true,
		promise: Promise{Lost: Zero, Duplicates: Zero, Overlaps: Zero, NoErrors: true},
		Tally:   Tally{Jobs: 500, Delivered: 500, Faults: []FaultReport{{Kind: "reshard", Target: "slot 10235"}}},
	}}
	for i := range rs {
		rs[i].judge(false)
	}
	for _, r := range rs {
		if r.Verdict != VerdictPass {
			t.Fatalf("%s: verdict %s; broken %q", r.Scenario, r.Verdict, r.Broken)
		}
	}
	var b bytes.Buffer
	WriteTable(&b, rs)
	out := b.String()
	for _, want := range []string{
		"cluster-failover            700        699    0     0     1     0.0s  confirmed lost=0    pass",
		"  partitions 0, 5: processing resumed 3.4s after kill -9 master 127.0.0.1:7001 at +2s; served again after 3.1s, resumed 0.3s later; promised within 2.0s of that",
		"  spread over the masters (jobs, script calls, CPU of the master and its replica):",
		"    127.0.0.1:7001 (partitions 0, 5): 233 jobs 33.3%, calls 31.0%, CPU 29.0% (0.50 s)",
		"  enqueues: 650 confirmed by a replica, 50 not (stored on the master only, or found stored after a failed call); lost: 0 confirmed, 1 not",
		"  7 errors seen by the producer",
		"  0 errors seen by the producer",
		"  restart of every daemon during kill -9 of redis (appendfsync always) at +2.3s: daemons ready 420ms, 110ms, 260ms after Redis answered again at +5.34s (promised within 2.0s)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteFailuresNamesWhatBroke(t *testing.T) {
	t.Parallel()
	rs := tableResults()
	// judged as the full run does, the known failing scenario fails it too
	rs[1].judge(false)
	var b bytes.Buffer
	WriteFailures(&b, rs)
	want := "failed: cluster-reshard (known failing): 6 acknowledged jobs lost; 4 duplicate deliveries on a graceful path\n" +
		"failed: cluster-failover (ERROR): set up: redis-cli --cluster create: exit status 1\n"
	if b.String() != want {
		t.Errorf("got:\n%swant:\n%s", b.String(), want)
	}
}
