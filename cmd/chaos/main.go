// Command chaos runs Courier's chaos suite (make chaos, make chaos-short):
// real redis-server processes, courier run daemons and a webhook receiver,
// faults injected under load, and one table of what each scenario
// delivered, duplicated and lost. See package cmd/internal/chaos.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/chaos"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its streams: 0 when every promise held, 1 when one
// broke or a scenario could not run, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "the short run (CI): fewer scenarios, fewer jobs")
	only := fs.String("scenario", "", "run only these scenarios, comma-separated")
	allowKnown := fs.Bool("allow-known", false, "a scenario marked known failing (issue 12) does not fail the run")
	jsonOut := fs.Bool("json", false, "print the report as JSON on stdout (the table goes to stderr)")
	courier := fs.String("courier", "", "a courier binary to use instead of building ./cmd/courier")
	dir := fs.String("dir", "", "keep logs and data here (default: a temporary directory, kept only on failure)")
	load := fs.Duration("load", 0, fmt.Sprintf("how long the producer enqueues in each scenario (default %v short, %v full)",
		chaos.ShortPlan.Load, chaos.FullPlan.Load))
	rate := fs.Int("rate", 0, fmt.Sprintf("jobs enqueued per second (default %d short, %d full)",
		chaos.ShortPlan.Rate, chaos.FullPlan.Rate))
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chaos: unexpected arguments %q\n", fs.Args())
		return 2
	}
	opt := chaos.Options{Short: *short, AllowKnown: *allowKnown, Courier: *courier, Dir: *dir, Log: stderr,
		Load: *load, Rate: *rate}
	if *quiet {
		opt.Log = nil
	}
	if *only != "" {
		opt.Only = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.Run(ctx, opt)
	table := stdout
	if *jsonOut {
		table = stderr
	}
	if len(rep.Results) > 0 {
		fmt.Fprintln(table)
		chaos.WriteTable(table, rep.Results)
		fmt.Fprintf(table, "%s run took %s\n", rep.Mode, rep.Elapsed.Round(time.Second))
		chaos.WriteFailures(table, rep.Results)
	}
	if *jsonOut {
		if jerr := chaos.WriteJSON(stdout, rep); jerr != nil {
			fmt.Fprintf(stderr, "chaos: %v\n", jerr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "chaos: %v\n", err)
		return 1
	}
	if rep.Failed {
		return 1
	}
	return 0
}
