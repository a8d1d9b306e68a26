// Command courier runs and drives Courier, the Redis-backed job daemon.
//
//	courier run      the daemon: serve the queues of a config file
//	courier dev      the daemon on an embedded in-memory store, for trying it
//	courier enqueue  put a job on a queue
//	courier inspect  queue sizes by state, or one job
//	courier dead     list, requeue or purge dead jobs
//	courier cancel   cancel a job, running or not
//	courier queue    pause or resume a queue, or show its state
//	courier bench    measure throughput and latency against a Redis server
//	courier version  print the version
//
// Run "courier help" for the list, "courier CMD -h" for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/seed-53d105c9/courier/worker"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// streams are a command's standard input and outputs.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// command is one subcommand: run parses args and does the work.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, std streams) error
	// flags maps the Go fields the worker library names in its validation
	// errors to the command's flags, so that an error names what the user
	// typed (see flagError).
	flags map[string]string
}

// Flags by the library field they set, per command.
var (
	enqueueFlags = map[string]string{
		"Queue": "--queue", "ID": "--id", "Payload": "--payload", "Delay": "--delay",
		"RunAt": "--at", "MaxAttempts": "--max-attempts", "Timeout": "--timeout", "Priority": "--priority",
		"UniqueKey": "--unique-key", "UniqueFor": "--unique-for", "UniqueAfterFinish": "--unique-after-finish",
	}
	jobFlags    = map[string]string{"Queue": "--queue", "ID": "--job", "Limit": "--limit", "Cursor": "--cursor"}
	cancelFlags = map[string]string{"Queue": "--queue", "ID": "--job"}
)

// flagError rewrites a validation error of the library to name the flag
// that set the field: "invalid --at: …" rather than "invalid RunAt: …".
func flagError(err error, flags map[string]string) error {
	var ve *worker.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	if flag, ok := flags[ve.Field]; ok {
		return fmt.Errorf("invalid %s: %s", flag, ve.Reason)
	}
	return err
}

func commands() map[string]command {
	return map[string]command{
		"run":     {"run the daemon: serve the queues of a config file", runRun, nil},
		"dev":     {"run the daemon on an embedded in-memory store (nothing persists)", runDev, nil},
		"enqueue": {"put a job on a queue", runEnqueue, enqueueFlags},
		"inspect": {"show queue sizes by state, or one job", runInspect, jobFlags},
		"dead":    {"list, requeue or purge dead jobs", runDead, jobFlags},
		"cancel":  {"cancel a job: delete it before it starts, or stop it while it runs", runCancel, cancelFlags},
		"queue":   {"pause or resume a queue, or show its state", runQueue, jobFlags},
		"bench":   {"measure throughput and latency against Redis", runBench, nil},
		"version": {"print the version", runVersion, nil},
	}
}

// errUsage marks a usage error (exit code 2); the flag package has printed it.
var errUsage = errors.New("usage error")

// exitSecondSignal is the exit code when a second signal cuts the drain short.
const exitSecondSignal = 130

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "courier: %s received: draining; send it again to exit at once\n", sig)
		cancel()
		sig = <-signals
		// Jobs still held come back to other workers when their leases lapse.
		fmt.Fprintf(os.Stderr, "courier: second %s: exiting without draining\n", sig)
		os.Exit(exitSecondSignal)
	}()
	code := run(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	cancel()
	os.Exit(code)
}

func run(ctx context.Context, args []string, std streams) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(std.err, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(std.err, "courier: unknown command %q\n\n", args[0])
		usage(std.err, cmds)
		return 2
	}
	err := cmd.run(ctx, args[1:], std)
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	// Errors carry text from Redis and the API; see printableError.
	fmt.Fprintf(std.err, "courier %s: %s\n", args[0], printableError(flagError(err, cmd.flags).Error()))
	return 1
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintf(w, "Usage: courier <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nRun \"courier <command> -h\" for a command's flags.\n")
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("courier "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: courier %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, mapping failures to errUsage (or flag.ErrHelp).
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}

// usageError prints msg and the flags, and returns errUsage.
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	fmt.Fprintf(fs.Output(), format+"\n", args...)
	fs.Usage()
	return errUsage
}

func runVersion(_ context.Context, args []string, std streams) error {
	fs := newFlagSet("version", "", std.err)
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(std.out, "courier %s %s %s/%s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// parseAction reads the action a command with actions takes first
// ("courier dead list …"): it prints the command's usage for -h (and
// returns flag.ErrHelp) and refuses, as usage errors, a missing action,
// flags before it and an unknown one.
func parseAction(cmd, synopsis string, actions []string, args []string, stderr io.Writer) (string, error) {
	list := strings.Join(actions[:len(actions)-1], ", ") + " or " + actions[len(actions)-1]
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs := newFlagSet(cmd, synopsis, stderr)
		fs.Usage = func() {
			fmt.Fprintf(stderr, "Usage: courier %s %s\n\nRun \"courier %s ACTION -h\" for an action's flags.\n", cmd, synopsis, cmd)
		}
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fs.Usage()
			return "", flag.ErrHelp
		}
		return "", usageError(fs, "name an action: "+list)
	}
	if !slices.Contains(actions, args[0]) {
		fmt.Fprintf(stderr, "unknown action %q: use %s\nUsage: courier %s %s\n", args[0], list, cmd, synopsis)
		return "", errUsage
	}
	return args[0], nil
}
