package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The conventions of every command:
//
//   - help ("courier help [CMD [ACTION]]", -h, --help) goes to stdout and
//     exits 0; "courier" alone prints the list of commands to stderr and
//     exits 2;
//   - a usage error is one line on stderr, "courier CMD: problem", and the
//     hint "Run 'courier help CMD' for usage.", exit 2: never the flags;
//   - failures exit with the codes of exit.go, and with --json print
//     {"error": {...}} on stdout too.

// run runs the command line args and returns the exit code.
func run(ctx context.Context, args []string, std streams) int {
	cmds := commands()
	if len(args) == 0 {
		printCommands(std.err, cmds)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return help(ctx, cmds, args[1:], std)
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(std.err, "courier: unknown command %q\n", args[0])
		if hint := didYouMean(nearest(args[0], commandNames(cmds))); hint != "" {
			fmt.Fprintln(std.err, hint)
		}
		fmt.Fprintln(std.err, "Run 'courier help' for usage.")
		return exitUsage
	}
	c, err := execute(ctx, args[0], cmd, args[1:], std)
	return c.report(err, std)
}

// call is one run of a command, for reporting its outcome.
type call struct {
	name   string            // "enqueue", "dead requeue"
	fields map[string]string // see command.fields
	fs     *flag.FlagSet     // nil for external commands
}

// json reports whether the call asked for --json.
func (c *call) json() bool {
	if c.fs == nil {
		return false
	}
	f := c.fs.Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// execute picks the action, parses the flags and runs the command; -h
// prints its help on stdout.
func execute(ctx context.Context, name string, cmd command, args []string, std streams) (*call, error) {
	c := &call{name: name, fields: cmd.fields}
	if cmd.external != nil {
		return c, cmd.external(ctx, args, std)
	}
	act := ""
	if len(cmd.actions) > 0 {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			if len(args) > 0 && isHelp(args[0]) {
				return c, commandHelp(ctx, std.out, name, cmd, "")
			}
			return c, usagef("name an action: %s", actionList(cmd.actions))
		}
		i := slices.IndexFunc(cmd.actions, func(a action) bool { return a.name == args[0] })
		if i < 0 {
			msg := fmt.Sprintf("unknown action %q: use %s", args[0], actionList(cmd.actions))
			if hint := didYouMean(nearest(args[0], actionNames(cmd.actions))); hint != "" {
				msg += "; d" + hint[1:]
			}
			return c, usagef("%s", msg)
		}
		a := cmd.actions[i]
		act, c.name, c.fields, args = a.name, name+" "+a.name, a.fields, args[1:]
	}
	c.fs = newFlagSet(c.name)
	do := cmd.define(c.fs, act)
	if err := parse(c.fs, args, cmd.words != nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, commandHelp(ctx, std.out, name, cmd, act)
		}
		return c, err
	}
	return c, do(ctx, std)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// help is "courier help [CMD [ACTION]]": the list of commands, or a
// command's help, on stdout.
func help(ctx context.Context, cmds map[string]command, args []string, std streams) int {
	if len(args) == 0 {
		printCommands(std.out, cmds)
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	act := ""
	if ok && len(args) > 1 {
		act = args[1]
		ok = len(args) == 2 && slices.ContainsFunc(cmd.actions, func(a action) bool { return a.name == act })
	}
	if !ok {
		fmt.Fprintf(std.err, "courier help: no help for %q\n", strings.Join(args, " "))
		if _, known := cmds[args[0]]; !known {
			if hint := didYouMean(nearest(args[0], commandNames(cmds))); hint != "" {
				fmt.Fprintln(std.err, hint)
			}
		}
		fmt.Fprintln(std.err, "Run 'courier help' for usage.")
		return exitUsage
	}
	if err := commandHelp(ctx, std.out, args[0], cmd, act); err != nil {
		fmt.Fprintf(std.err, "courier help: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// printCommands prints the list of commands and the exit codes.
func printCommands(w io.Writer, cmds map[string]command) {
	fmt.Fprintf(w, "Usage: courier <command> [flags]\n\nCommands:\n")
	for _, n := range commandNames(cmds) {
		fmt.Fprintf(w, "  %-12s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, "\nExit codes:\n")
	for _, e := range exitCodes {
		fmt.Fprintf(w, "  %-3d %s\n", e.code, e.meaning)
	}
	fmt.Fprintf(w, "\nRun 'courier help <command>' for a command's flags.\n")
}

// commandHelp prints the help of a command, or of one of its actions.
func commandHelp(ctx context.Context, w io.Writer, name string, cmd command, act string) error {
	switch {
	case cmd.external != nil:
		err := cmd.external(ctx, []string{"-h"}, streams{out: w, err: w})
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	case len(cmd.actions) > 0 && act == "":
		fmt.Fprintf(w, "Usage: courier %s %s [flags]\n\n%s.\n\nActions:\n", name, strings.Join(actionNames(cmd.actions), "|"), capitalize(cmd.summary))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, a := range cmd.actions {
			fmt.Fprintf(tw, "  %s\t%s\n", a.name, a.summary)
		}
		_ = tw.Flush()
		fmt.Fprintf(w, "\nRun 'courier help %s ACTION' for an action's flags.\n", name)
		return nil
	}
	synopsis, summary := cmd.synopsis, cmd.summary
	if act != "" {
		i := slices.IndexFunc(cmd.actions, func(a action) bool { return a.name == act })
		synopsis, summary, name = cmd.actions[i].synopsis, cmd.actions[i].summary, name+" "+act
	}
	fs := newFlagSet(name)
	cmd.define(fs, act)
	fmt.Fprintf(w, "Usage: courier %s %s\n\n%s.\n", name, synopsis, capitalize(summary))
	printFlags(w, fs)
	return nil
}

// printFlags prints the flags of fs as --name, with their defaults.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintf(w, "\nFlags:\n")
			first = false
		}
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		line += "\n        " + strings.ReplaceAll(usage, "\n", "\n        ")
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			line += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintln(w, line)
	})
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// newFlagSet returns a silent flag set: run reports its errors, and -h
// prints the command's help.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("courier "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args, returning a usage error (or flag.ErrHelp); words
// after the flags are refused unless the command takes some.
func parse(fs *flag.FlagSet, args []string, words bool) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return flagParseError(err)
	}
	if fs.NArg() > 0 && !words {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// oneDashFlag finds the flag the flag package names with one dash in its
// errors ("flag provided but not defined: -job", "invalid value \"soon\"
// for flag -delay: …", "flag needs an argument: -queue").
var oneDashFlag = regexp.MustCompile(`(not defined: |for flag |an argument: )-([A-Za-z0-9][A-Za-z0-9-]*)`)

// flagParseError is a parse error of the flag package as a usage error,
// naming the flag with two dashes, as the help and docs/cli.md write it.
func flagParseError(err error) error {
	msg, field := err.Error(), ""
	if m := oneDashFlag.FindStringSubmatch(msg); m != nil {
		field = "--" + m[2]
		msg = oneDashFlag.ReplaceAllString(msg, "${1}--${2}")
	}
	return &usageError{msg: msg, field: field}
}

// usageError is a mistake on the command line: exit 2, reported as one
// line and a hint to the command's help.
type usageError struct {
	msg string
	// field is the flag at fault, when one is ("--delay").
	field string
	// printed is set when the command printed the problem itself (bench).
	printed bool
}

func (e *usageError) Error() string { return e.msg }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func commandNames(cmds map[string]command) []string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func actionNames(actions []action) []string {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.name
	}
	return names
}

// actionList is "list, requeue or purge".
func actionList(actions []action) string {
	names := actionNames(actions)
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// nearest returns the candidates closest to word by edit distance, none
// when the closest is further than a third of its length (at least 1). A
// candidate word starts counts as 1 away ("de": dead and dev).
func nearest(word string, candidates []string) []string {
	var best []string
	bestDist := max(1, len(word)/3)
	for _, c := range candidates {
		d := editDistance(word, c)
		if word != "" && strings.HasPrefix(c, word) {
			d = min(d, 1)
		}
		switch {
		case d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	return best
}

// didYouMean is "Did you mean "dead" or "dev"?", or "" for no candidates.
func didYouMean(near []string) string {
	if len(near) == 0 {
		return ""
	}
	quoted := make([]string, len(near))
	for i, n := range near {
		quoted[i] = strconv.Quote(n)
	}
	if len(quoted) == 1 {
		return "Did you mean " + quoted[0] + "?"
	}
	return "Did you mean " + strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1] + "?"
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
