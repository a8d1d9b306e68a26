package admin_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// operator connects the operator's Client the examples use, on the
// application's key prefix.
func operator() *admin.Client {
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	c, err := admin.NewClient(rdb, worker.Config{Prefix: "courier"})
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// List the dead jobs of a queue whose last error mentions a timeout, a page
// at a time.
func ExampleClient_Jobs() {
	ctx := context.Background()
	c := operator()
	p := admin.JobListParams{
		Queue: "emails",
		State: worker.StateDead,
		Dead:  admin.DeadFilter{ErrorContains: "timeout"},
	}
	for {
		page, err := c.Jobs(ctx, p)
		if err != nil {
			log.Fatal(err)
		}
		for _, job := range page.Jobs {
			fmt.Println(job.ID, job.DiedAt.Format(time.RFC3339), job.LastError)
		}
		if p.Cursor = page.Next; p.Cursor == "" {
			break
		}
	}
}

// Requeue every dead job of a queue that died in the last hour, after a
// dry run says how many that is.
func ExampleClient_Triage() {
	ctx := context.Background()
	c := operator()
	p := admin.TriageParams{
		Queue:  "emails",
		Action: admin.TriageRequeue,
		Filter: admin.DeadFilter{DiedAfter: time.Now().Add(-time.Hour)},
		DryRun: true,
	}
	dry, err := c.Triage(ctx, p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d jobs would be requeued, among them %v\n", dry.Matched, dry.Sample)
	p.DryRun = false
	for {
		res, err := c.Triage(ctx, p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("requeued %d\n", res.Changed)
		if p.Cursor = res.Next; p.Cursor == "" {
			break
		}
	}
}

// Count a queue's jobs by state.
func ExampleClient_Stats() {
	c := operator()
	s, err := c.Stats(context.Background(), "emails")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ready %d, scheduled %d, active %d, dead %d, paused %v\n", s.Ready, s.Scheduled, s.Active, s.Dead, s.Paused)
}

// Pause a queue while a downstream service is down, and resume it after.
func ExampleClient_Pause() {
	ctx := context.Background()
	c := operator()
	if err := c.Pause(ctx, "emails"); err != nil {
		log.Fatal(err)
	}
	// ... the mail relay is repaired ...
	if err := c.Resume(ctx, "emails"); err != nil {
		log.Fatal(err)
	}
}

// Show who serves a queue: each process, its concurrency and version, and
// which one leads.
func ExampleClient_Fleet() {
	c := operator()
	f, err := c.Fleet(context.Background(), "emails")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range f.Processes {
		fmt.Printf("%s concurrency %d version %s leader %v\n", p.ID, p.Concurrency, p.Version, p.Leader)
	}
	fmt.Println("the fleet runs at most", f.Concurrency(), "jobs at once")
}

// Page through every known queue.
func ExampleClient_Queues() {
	c := operator()
	var p admin.QueueListParams
	for {
		page, err := c.Queues(context.Background(), p)
		if err != nil {
			log.Fatal(err)
		}
		for _, name := range page.Names {
			fmt.Println(name)
		}
		if p.Cursor = page.Next; p.Cursor == "" {
			break
		}
	}
}

// Retire a queue: once no process serves it and it holds no job, forget
// it; the error says what still holds it otherwise.
func ExampleClient_Forget() {
	err := operator().Forget(context.Background(), "old-reports")
	if errors.Is(err, admin.ErrQueueInUse) {
		fmt.Println("not yet:", err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
}

// A tool written against Operator works straight on Redis (*Client) and
// through the HTTP API's Go client alike.
func ExampleOperator() {
	var op admin.Operator = operator()
	job, err := op.Get(context.Background(), "emails", "welcome-42")
	if errors.Is(err, worker.ErrNotFound) {
		fmt.Println("no such job")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.State, job.Attempt, job.LastError)
}
