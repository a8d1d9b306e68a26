package main

import (
	"context"
	"errors"

	"github.com/seed-53d105c9/courier/internal/bench"
)

// runBench is courier bench; package bench does the measuring.
func runBench(ctx context.Context, args []string, std streams) error {
	err := bench.Run(ctx, args, std.out, std.err)
	if errors.Is(err, bench.ErrUsage) {
		return errUsage // bench has printed the problem and the flags
	}
	return err
}
