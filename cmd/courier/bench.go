package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"regexp"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/bench"
)

// runBench is courier bench; package bench parses its flags and does the
// measuring. Its help goes to stdout, as every command's, and its usage
// errors are reported as every command's.
func runBench(ctx context.Context, args []string, std streams) error {
	err := bench.Run(ctx, args, std.out, std.err)
	var ue *bench.UsageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil
	case errors.As(err, &ue):
		return flagParseError(errors.New(ue.Msg))
	}
	return err
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

// helpFlagRE matches a flag of bench's help: its name, its value's kind
// (none for a boolean) and the first line of its usage.
var helpFlagRE = regexp.MustCompile(`(?m)^  --?([a-zA-Z0-9][a-zA-Z0-9-]*)( \S+)?\n\s+(.*)$`)
