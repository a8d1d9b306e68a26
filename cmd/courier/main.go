// Command courier runs and drives Courier, the Redis-backed job daemon.
//
//	courier run          the daemon: serve the queues of a config file
//	courier dev          the daemon on an embedded in-memory store, for trying it
//	courier enqueue      put a job on a queue
//	courier inspect      queues (sizes, leader, workers), or one job
//	courier jobs         list a queue's jobs in one state
//	courier dead         list, requeue or purge dead (or cancelled) jobs
//	courier cancel       cancel a job, running or not
//	courier import       move another queue system's jobs into Courier (asynq)
//	courier queue        pause, resume, wait for or forget a queue, or show its state
//	courier keys         show a queue's job keys, set or reset a key's own limits
//	courier config       check the configuration, or print it with its sources
//	courier bench        measure throughput and latency against a Redis server
//	courier healthcheck  probe a daemon's /readyz (the image's HEALTHCHECK)
//	courier completion   print a bash, zsh or fish completion script
//	courier version      print the version
//
// "courier help" lists them with the exit codes, "courier help CMD
// [ACTION]" prints a command's flags. The conventions every command keeps
// (help on stdout, one-line usage errors, the exit codes, --json) live in
// usage.go and exit.go; this file holds the command table.
package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// streams are a command's standard input and outputs, and the console
// through which the process's own notices (signals, the error it ends
// with) follow the log format a daemon command chose.
type streams struct {
	in       io.Reader
	out, err io.Writer
	console  *console // nil: plain text on err
}

// runFunc does a command's work once its flags are parsed.
type runFunc func(ctx context.Context, std streams) error

// command is one subcommand.
type command struct {
	summary string
	// synopsis follows "courier NAME" in the usage line of a command
	// without actions.
	synopsis string
	// fields maps the Go fields the worker library names in its validation
	// errors to the command's flags, so that an error names what the user
	// typed and counts as a usage error (see flagError).
	fields map[string]string
	// define adds the flags of the command, or of its action, to fs and
	// returns what runs with their values. Running, help and completion
	// all call it, so each flag is declared once.
	define func(fs *flag.FlagSet, action string) runFunc
	// actions, when set, are the words that must follow the command
	// ("courier dead list").
	actions []action
	// words, when set, are the words the command takes after its flags
	// (completion: the shells); other commands take none.
	words []string
	// external is a command that parses its own arguments (bench); its
	// help is what it prints for -h. Set instead of define.
	external func(ctx context.Context, args []string, std streams) error
}

// action is one action of a command with actions.
type action struct {
	name, summary, synopsis string
	fields                  map[string]string
}

// Flags by the library field they set, per command.
var (
	enqueueFlags = map[string]string{
		"Queue": "--queue", "ID": "--id", "Kind": "--kind", "Key": "--key", "Payload": "--payload", "Delay": "--delay",
		"RunAt": "--at", "MaxAttempts": "--max-attempts", "Timeout": "--timeout", "Priority": "--priority",
		"UniqueKey": "--unique-key", "UniqueFor": "--unique-for", "UniqueAfterFinish": "--unique-after-finish",
		"Durability.Replicas": "--replicas", "Durability.Timeout": "--replicas-timeout", "Durability.AOF": "--aof",
		"Headers": "--header",
	}
	// jobFlags are those of the commands that name an existing job.
	jobFlags   = map[string]string{"Queue": "--queue", "ID": "--job"}
	queueFlags = map[string]string{"Queue": "--queue"}
	// keyFlags are those of courier keys (admin.Client.Keys names its
	// count n; through the API it is the list's Limit).
	keyFlags = map[string]string{"Queue": "--queue", "Key": "--key", "Concurrency": "--concurrency", "Weight": "--weight",
		"RateLimit": "--rate-limit", "n": "--top", "Limit": "--top"}
)

func commands() map[string]command {
	return map[string]command{
		"run": {summary: "run the daemon: serve the queues of a config file",
			synopsis: "[--config FILE] [flags]", define: defineRun},
		"dev": {summary: "run the daemon on an embedded in-memory store (nothing persists)",
			synopsis: "[--addr HOST:PORT] [--http-addr HOST:PORT] [flags]", define: defineDev},
		"enqueue": {summary: "put a job on a queue",
			synopsis: "--queue Q [--id ID] [--kind K] [--key K] [--delay D | --at RFC3339] [--max-attempts N] [--priority low|normal|high] " +
				"[--unique-key K [--unique-for D [--unique-after-finish]]] [--replicas N [--replicas-timeout D] [--aof]] [--header NAME=VALUE]... " +
				"[--payload TEXT | --payload-file FILE | < stdin] [--json] [--api URL]",
			fields: enqueueFlags, define: defineEnqueue},
		"inspect": {summary: "show queues (sizes by state, leader, workers), or one job",
			synopsis: "[--queue Q [--job ID]] [--json] [--api URL]", fields: jobFlags, define: defineInspect},
		"jobs": {summary: "list a queue's jobs in one state, a page at a time", define: defineJobs, actions: []action{
			{name: "list", summary: "list scheduled, ready, active (with worker, start and progress), dead, completed (with result) or cancelled jobs",
				synopsis: "--queue Q --state scheduled|ready|active|dead|completed|cancelled [--limit N] [--cursor C] [--error TEXT] [--older-than D] [--newer-than D] [--json] [--api URL]",
				fields:   listFlags},
		}},
		"dead": {summary: "list, requeue or purge dead (or cancelled: --state cancelled) jobs", define: defineDead, actions: []action{
			{name: "list", summary: "list a queue's dead jobs, oldest death first, a page at a time",
				synopsis: "--queue Q [--state dead|cancelled] [--error TEXT] [--older-than D] [--newer-than D] [--limit N] [--cursor C] [--json] [--api URL]", fields: listFlags},
			{name: "requeue", summary: "move dead jobs back to due now, attempts reset: by id, by filter or all",
				synopsis: "--queue Q [--state dead|cancelled] (--job ID... | --ids-file F | --error TEXT | --older-than D | --newer-than D | --all) [--dry-run] [--cursor C] [--json] [--api URL]",
				fields:   triageFlags},
			{name: "purge", summary: "delete dead jobs: by id, by filter or all (all asks first)",
				synopsis: "--queue Q [--state dead|cancelled] (--job ID... | --ids-file F | --error TEXT | --older-than D | --newer-than D | --all [--yes]) [--dry-run] [--cursor C] [--json] [--api URL]",
				fields:   triageFlags},
		}},
		"cancel": {summary: "cancel a job, before it starts or while it runs: it is kept as cancelled",
			synopsis: "--queue Q --job ID [--json] [--api URL]", fields: jobFlags, define: defineCancel},
		"queue": {summary: "pause, resume, wait for or forget a queue, or show its state", define: defineQueue, actions: []action{
			{name: "pause", summary: "stop every worker claiming the queue's jobs (running jobs finish)",
				synopsis: "--queue Q [--json] [--api URL]", fields: queueFlags},
			{name: "resume", summary: "let workers claim the queue's jobs again",
				synopsis: "--queue Q [--json] [--api URL]", fields: queueFlags},
			{name: "status", summary: "show whether the queue is paused, its sizes, leader and workers",
				synopsis: "--queue Q [--json] [--api URL]", fields: queueFlags},
			{name: "wait", summary: "wait until the queue holds no scheduled, ready or active job (dead ones do not count)",
				synopsis: "--queue Q [--timeout D] [--json]", fields: queueFlags},
			{name: "forget", summary: "remove a retired queue that holds nothing (refused while anything holds it)",
				synopsis: "--queue Q [--json] [--api URL]", fields: queueFlags},
		}},
		"keys": {summary: "show a queue's job keys (waiting, running, limits), or set or reset a key's own limits", define: defineKeys, actions: []action{
			{name: "list", summary: "list the queue's keys with the most waiting jobs, with their running jobs and limits",
				synopsis: "--queue Q [--top N] [--json] [--api URL]", fields: keyFlags},
			{name: "show", summary: "show one key: its waiting and running jobs, its limits, whether it runs at its cap",
				synopsis: "--queue Q --key K [--json] [--api URL]", fields: keyFlags},
			{name: "set", summary: "set a key's own cap, weight and rate limit (a flag left out is the default), replacing the queue's for it",
				synopsis: "--queue Q --key K [--concurrency N] [--weight W] [--rate-limit 'N per D'] [--json] [--api URL]", fields: keyFlags},
			{name: "reset", summary: "remove a key's own limits: the queue's key_concurrency, key_rate_limit and weight 1 apply again",
				synopsis: "--queue Q --key K [--json] [--api URL]", fields: keyFlags},
		}},
		"import": {summary: "move another queue system's jobs into Courier, exactly once", define: defineImport, actions: []action{
			{name: "asynq", summary: "move hibiken/asynq's pending, scheduled, retry and archived tasks (a dry run unless --apply)",
				synopsis: "--from redis://HOST:PORT/DB [--queues A,B] [--map ASYNQ=COURIER,...] [--batch N] [--apply]"},
		}},
		"config": configCommand(),
		"bench":  {summary: "measure throughput and latency against Redis", external: runBench},
		"healthcheck": {summary: "probe a running daemon's /readyz: exit 0 when ready (the image's HEALTHCHECK)",
			synopsis: "[--config FILE] [--url URL] [--timeout D]", define: defineHealthcheck},
		"completion": {summary: "print a shell completion script: bash, zsh or fish",
			synopsis: "bash|zsh|fish", words: shells, define: defineCompletion},
		"version": {summary: "print the version", synopsis: "[--json]", define: defineVersion},
	}
}

// exitSecondSignal is the exit code when a second signal cuts the drain short.
const exitSecondSignal = 130

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	con := &console{w: os.Stderr}
	go func() {
		sig := <-signals
		con.notice(sig.String()+" received: draining; send it again to exit at once", "signal", sig.String())
		cancel()
		sig = <-signals
		// Jobs still held come back to other workers when their leases lapse.
		con.notice("second "+sig.String()+": exiting without draining", "signal", sig.String())
		os.Exit(exitSecondSignal)
	}()
	code := run(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr, console: con})
	cancel()
	os.Exit(code)
}
