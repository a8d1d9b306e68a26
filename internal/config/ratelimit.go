package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// rateLimitSyntax is the message for a rate_limit that does not parse.
const rateLimitSyntax = `expected "N per DURATION" such as "100 per 1s" or "5000/1m"`

// parseRateLimit reads a queue's rate_limit: "N per DURATION" or
// "N/DURATION", e.g. "100 per 1s", "5000/1m"; "" is no limit. The numbers
// are checked by worker.QueueOptions.Validate, not here.
func parseRateLimit(s string) (worker.RateLimit, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return worker.RateLimit{}, nil
	}
	count, window, ok := strings.Cut(text, "/")
	if !ok {
		f := strings.Fields(text)
		if len(f) != 3 || !strings.EqualFold(f[1], "per") {
			return worker.RateLimit{}, fmt.Errorf("%s (got %q)", rateLimitSyntax, s)
		}
		count, window = f[0], f[2]
	}
	count, window = strings.TrimSpace(count), strings.TrimSpace(window)
	n, err := strconv.Atoi(count)
	if err != nil || strings.ContainsAny(count, "+-") {
		return worker.RateLimit{}, fmt.Errorf("%s (got %q: %q is not a whole number)", rateLimitSyntax, s, count)
	}
	per, err := time.ParseDuration(window)
	if err != nil || strings.HasPrefix(window, "-") {
		return worker.RateLimit{}, fmt.Errorf("%s (got %q: %q is not a duration such as 1s, 1m or 500ms)", rateLimitSyntax, s, window)
	}
	return worker.RateLimit{N: n, Per: per}, nil
}
