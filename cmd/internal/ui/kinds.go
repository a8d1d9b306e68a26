package ui

import (
	"slices"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Job kinds on the queue's page: the kinds its live processes serve
// (admin.FleetProcess.Kinds), and the jobs listed whose kind none of them
// serves, which would die for want of a handler.

// kindsServed is what a queue's live processes serve.
type kindsServed struct {
	// Kinds are the kinds some process serves by name (worker.Kinds),
	// sorted, "" for jobs without a kind.
	Kinds []string
	// Any: a process has one handler for every job of the queue.
	Any bool
	// Live: a process serves the queue at all.
	Live bool
}

// servedBy is what fleet f serves.
func servedBy(f admin.Fleet) kindsServed {
	k := kindsServed{Live: len(f.Processes) > 0}
	for _, p := range f.Processes {
		if p.Kinds == nil {
			k.Any = true
			continue
		}
		for _, kind := range p.Kinds {
			if !slices.Contains(k.Kinds, kind) {
				k.Kinds = append(k.Kinds, kind)
			}
		}
	}
	slices.Sort(k.Kinds)
	return k
}

// Shown: the page says which kinds are served, as a process serves
// several by name.
func (k kindsServed) Shown() bool { return len(k.Kinds) > 0 }

// Serves reports whether a job of kind finds a handler among the live
// processes; true when none lives, which the page says otherwise (no
// worker).
func (k kindsServed) Serves(kind string) bool {
	return !k.Live || k.Any || slices.Contains(k.Kinds, kind)
}

// anyKind reports whether a job of jobs has a kind: the page's tables
// then have a kind column.
func anyKind(jobs []*worker.Job) bool {
	return slices.ContainsFunc(jobs, func(j *worker.Job) bool { return j.Kind != "" })
}

// kindName is a kind as a page shows it: "" is jobs without a kind.
func kindName(kind string) string {
	if kind == "" {
		return "(no kind)"
	}
	return kind
}

// kindCell is a job's kind in a table of the queue's page.
type kindCell struct {
	Kind     string
	Unserved bool // no live process serves it
}

// KindCell is the cell of a job of kind on v's page.
func (v queueView) KindCell(kind string) kindCell {
	return kindCell{Kind: kind, Unserved: !v.Served.Serves(kind)}
}
