package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
)

// courier config: check and print the configuration the daemon would run
// with, without reaching Redis.

// configCommand is courier config's entry in the commands table.
func configCommand() command {
	return command{
		summary: "check the configuration, or print it with where each value came from",
		define:  defineConfig,
		actions: []action{
			{name: "check", summary: "load and validate the configuration as courier run would, without reaching Redis",
				synopsis: "[--config FILE] [--redis ADDRS] [--prefix P] [--json]"},
			{name: "print", summary: "print the merged configuration, secrets redacted, each value with the layer that set it",
				synopsis: "[--config FILE] [--redis ADDRS] [--prefix P] [--json]"},
		},
	}
}

// runConfig runs courier config with args, the words after "config".
func runConfig(ctx context.Context, args []string, std streams) error {
	_, err := execute(ctx, "config", configCommand(), args, std)
	return err
}

func defineConfig(fs *flag.FlagSet, act string) runFunc {
	return defineConfigIn(fs, act, os.Environ)
}

// defineConfigIn defines courier config's flags, reading the environment
// from environ when it runs.
func defineConfigIn(fs *flag.FlagSet, act string, environ func() []string) runFunc {
	cf := addConfigFlags(fs)
	jsonUsage := `print {"ok", "problems": [{"key", "message"}], "warnings"} as JSON on stdout`
	if act == "print" {
		jsonUsage = `print {"config", "sources": {"redis.addr": "file", ...}} as JSON instead of YAML`
	}
	asJSON := fs.Bool("json", false, jsonUsage)
	return func(_ context.Context, std streams) error {
		l, err := loadConfigFull(cf, environ())
		if act == "print" {
			return configPrint(std, l, err, *asJSON)
		}
		return configCheck(std, l, err, *asJSON)
	}
}

// loadConfigFull loads the configuration as configFlags.load does, keeping
// where each value came from; a flag's layer is named by the flag.
func loadConfigFull(cf *configFlags, environ []string) (*config.Loaded, error) {
	set := map[string]any{}
	flagOf := map[string]string{}
	cf.fs.Visit(func(fl *flag.Flag) {
		if key, ok := cf.keys[fl.Name]; ok {
			set[key] = fl.Value.String()
			flagOf[key] = fl.Name
		}
	})
	l, err := config.LoadFull(config.Sources{File: cf.file, Environ: environ, Flags: set})
	for key, name := range flagOf {
		if l.Sources[key] == config.SourceFlag {
			l.Sources[key] = config.SourceFlag + " --" + name
		}
	}
	return l, err
}

// checkReply is courier config check --json's output.
type checkReply struct {
	OK       bool           `json:"ok"`
	Problems []checkProblem `json:"problems"`
	Warnings []string       `json:"warnings"`
}

type checkProblem struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

// configCheck reports the outcome of the load and of what courier run
// checks beyond it, building the handlers as run does: "config OK: FILE"
// on stdout, or every problem on stderr and an error.
func configCheck(std streams, l *config.Loaded, err error, asJSON bool) error {
	problems := problemsOf(err)
	warnings := l.Warnings
	if l.Config != nil {
		more, derr := l.Config.CheckDaemon()
		warnings = append(warnings, more...)
		problems = append(problems, problemsOf(derr)...)
		if _, rerr := l.Config.Registry(slog.New(slog.DiscardHandler)); rerr != nil && derr == nil {
			problems = append(problems, problemsOf(rerr)...)
		}
	}
	if asJSON {
		reply := checkReply{OK: len(problems) == 0, Problems: []checkProblem{}, Warnings: append([]string{}, warnings...)}
		for _, p := range problems {
			reply.Problems = append(reply.Problems, checkProblem(p))
		}
		if err := writeJSON(std.out, reply); err != nil {
			return err
		}
	} else {
		printProblems(std.err, l.File, problems)
		printWarnings(std.err, warnings)
	}
	if len(problems) > 0 {
		return &printedError{fmt.Errorf("invalid configuration: %s", plural(len(problems), "problem"))}
	}
	if !asJSON {
		fmt.Fprintf(std.out, "config OK: %s\n", printable(fileLabel(l.File)))
	}
	return nil
}

// configPrint prints the loaded configuration as YAML (or JSON), each
// value with the layer that set it, secrets redacted.
func configPrint(std streams, l *config.Loaded, err error, asJSON bool) error {
	if err != nil {
		problems := problemsOf(err)
		printProblems(std.err, l.File, problems)
		printWarnings(std.err, l.Warnings)
		return fmt.Errorf("invalid configuration: %s", plural(len(problems), "problem"))
	}
	printWarnings(std.err, l.Warnings)
	if asJSON {
		out, err := l.JSON()
		if err != nil {
			return err
		}
		_, err = std.out.Write(append(out, '\n'))
		return err
	}
	out, err := l.YAML()
	if err != nil {
		return err
	}
	fmt.Fprintf(std.out, "# courier config print: %s\n", fileLabel(l.File))
	fmt.Fprintf(std.out, "# After each value, the layer that set it: default, file, env VARIABLE or flag --NAME.\n")
	fmt.Fprintf(std.out, "# Secrets that are set show as [redacted].\n")
	_, err = std.out.Write(out)
	return err
}

// problemsOf lists the problems of a load error: one per key of a
// *config.Error, or the error itself (a missing file, a YAML syntax error).
func problemsOf(err error) []config.Problem {
	var e *config.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e.Problems
	}
	return []config.Problem{{Message: err.Error()}}
}

func printProblems(w io.Writer, file string, problems []config.Problem) {
	if len(problems) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %s:\n", printable(fileLabel(file)), plural(len(problems), "problem"))
	for _, p := range problems {
		line := p.Message
		if p.Key != "" {
			line = p.Key + ": " + p.Message
		}
		fmt.Fprintf(w, "  %s\n", printableError(line))
	}
}

func printWarnings(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintf(w, "warning: %s\n", printableError(s))
	}
}

func fileLabel(file string) string {
	if file == "" {
		return "(no file: the defaults and the environment)"
	}
	return file
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printedError is a failure the command has reported in full already, on
// stderr and, with --json, on stdout.
type printedError struct{ err error }

func (e *printedError) Error() string { return e.err.Error() }
func (e *printedError) Unwrap() error { return e.err }
