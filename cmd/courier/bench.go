package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/seed-53d105c9/courier/internal/bench"
)

// runBench is courier bench; package bench parses its flags and does the
// measuring. Its help goes to stdout, as every command's.
func runBench(ctx context.Context, args []string, std streams) error {
	if slices.ContainsFunc(args, isHelp) {
		if err := bench.Run(ctx, args, std.out, std.out); !errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil
	}
	stderr := &usageCut{w: std.err}
	err := bench.Run(ctx, args, std.out, stderr)
	if errors.Is(err, bench.ErrUsage) {
		// bench has printed the problem; run adds the hint.
		return &usageError{msg: "see above", printed: true}
	}
	return err
}

// usageCut passes what bench writes to stderr through, up to the flag
// list bench prints after a usage error ("Usage: courier bench …"), which
// it drops: the CLI's usage errors are one line and a hint.
type usageCut struct {
	w   io.Writer
	cut bool
}

func (u *usageCut) Write(p []byte) (int, error) {
	if u.cut || bytes.HasPrefix(p, []byte("Usage: courier bench ")) {
		u.cut = true
		return len(p), nil
	}
	return u.w.Write(p)
}

// externalFlags lists the flags of a command that parses its own (bench),
// read from its help, for completion.
func externalFlags(ctx context.Context, run func(context.Context, []string, streams) error) []compFlag {
	var buf bytes.Buffer
	_ = run(ctx, []string{"-h"}, streams{out: &buf, err: &buf})
	var flags []compFlag
	for _, m := range helpFlagRE.FindAllStringSubmatch(buf.String(), -1) {
		flags = append(flags, compFlag{name: m[1], value: m[2] != "", usage: strings.TrimSpace(m[3]), file: isFileFlag(m[1])})
	}
	return flags
}

// helpFlagRE matches a flag of the flag package's PrintDefaults: its name,
// its value's kind (none for a boolean) and the first line of its usage.
var helpFlagRE = regexp.MustCompile(`(?m)^  -([a-zA-Z0-9][a-zA-Z0-9-]*)( \S+)?\n\s+(.*)$`)
