package wire

import (
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Page is a page of jobs.
type Page struct {
	Jobs []Job `json:"jobs"`
	// NextCursor continues the list (the cursor parameter or --cursor);
	// null at the end.
	NextCursor *string `json:"next_cursor"`
}

// PageOf is a page of jobs as the API and the CLI show it; next is the
// library's cursor, "" at the end.
func PageOf(jobs []*worker.Job, next string) Page {
	p := Page{Jobs: make([]Job, len(jobs))}
	for i, j := range jobs {
		p.Jobs[i] = JobOf(j)
	}
	if next != "" {
		p.NextCursor = &next
	}
	return p
}

// Triage is the result of requeueing or purging dead jobs by ids or by a
// filter.
type Triage struct {
	// Action is "requeue" or "purge" (admin.TriageRequeue,
	// admin.TriagePurge).
	Action admin.TriageAction `json:"action"`
	// DryRun is set when nothing was changed: Matched says what would be.
	DryRun bool `json:"dry_run"`
	// Matched counts the dead jobs selected; Changed those requeued or
	// purged (0 on a dry run).
	Matched int `json:"matched"`
	Changed int `json:"changed"`
	// Sample holds the ids of the first matched jobs (at most 20).
	Sample []string `json:"sample"`
	// NextCursor resumes a walk that stopped early (a bound per request,
	// or an error): send it back as cursor. Null when the walk is done.
	NextCursor *string `json:"next_cursor"`
}

// TriageOf is the result r of a requeue or purge (action) as the API and
// the CLI show it.
func TriageOf(action admin.TriageAction, dryRun bool, r admin.TriageResult) Triage {
	t := Triage{Action: action, DryRun: dryRun, Matched: r.Matched, Changed: r.Changed, Sample: r.Sample}
	if t.Sample == nil {
		t.Sample = []string{}
	}
	if r.Next != "" {
		t.NextCursor = &r.Next
	}
	return t
}

// Result is the inverse of TriageOf.
func (t *Triage) Result() admin.TriageResult {
	r := admin.TriageResult{Matched: t.Matched, Changed: t.Changed, Sample: t.Sample}
	if t.NextCursor != nil {
		r.Next = *t.NextCursor
	}
	return r
}
