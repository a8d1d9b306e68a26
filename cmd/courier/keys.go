package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// keysTopDefault is how many keys courier keys list shows without --top:
// a screenful.
const keysTopDefault = 20

// defineKeys is courier keys list|show|set|reset: a queue's job keys
// (admin.Client.Keys and Key) and a key's own limits
// (admin.Client.SetKeyLimits), on Redis or through the API.
func defineKeys(fs *flag.FlagSet, action string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	var key, rate *string
	var top, concurrency, weight *int
	switch action {
	case "list":
		top = fs.Int("top", keysTopDefault, "show this many keys, those with the most waiting jobs, 1 to 1000")
	default:
		key = fs.String("key", "", "the job key (required)")
	}
	if action == "set" {
		concurrency = fs.Int("concurrency", -1, "how many of the key's jobs run at once across the fleet: 0 = no cap, 1 to 1000000; -1 or left out = the queue's key_concurrency")
		weight = fs.Int("weight", 0, "the key's share of the starts among the keys with work due, 1 to 1000; 0 or left out = 1")
		rate = fs.String("rate-limit", "", `at most N of the key's jobs start per window across the fleet, "N per DURATION" such as "100 per 1m"; "" = none; left out = the queue's key_rate_limit`)
	}
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *queue == "" {
			return usagef("--queue is required")
		}
		// Names the library refuses are mistyped flags: usage errors (see
		// classify), before any connection.
		if err := worker.ValidateQueueName(*queue); err != nil {
			return err
		}
		if key != nil {
			if *key == "" {
				return usagef("--key is required")
			}
			if err := worker.ValidateKey(*key); err != nil {
				return err
			}
		}
		var limits admin.KeyLimits
		if action == "set" {
			given := setFlags(fs)
			if !given["concurrency"] && !given["weight"] && !given["rate-limit"] {
				return usagef("give --concurrency, --weight or --rate-limit (courier keys reset removes a key's limits)")
			}
			limits = admin.KeyLimits{Concurrency: *concurrency, Weight: *weight}
			if given["rate-limit"] {
				r, err := worker.ParseRateLimit(*rate)
				if err != nil {
					return &usageError{field: "--rate-limit", msg: "invalid --rate-limit: " + err.Error()}
				}
				limits.RateLimit = &r
			}
		}
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()
		switch action {
		case "list":
			return listKeys(ctx, client, *queue, *top, *asJSON, std)
		case "set":
			err = client.SetKeyLimits(ctx, *queue, *key, limits)
		case "reset":
			err = client.SetKeyLimits(ctx, *queue, *key, admin.DefaultKeyLimits)
		}
		if err != nil {
			return err
		}
		s, err := client.Key(ctx, *queue, *key)
		if err != nil {
			return err
		}
		v := wire.KeyOf(s)
		switch {
		case *asJSON:
			return writeJSON(std.out, v)
		case action == "show":
			printKey(std.out, v)
			return nil
		}
		// Both calls are idempotent: set and reset name the limits the key
		// is left with.
		fmt.Fprintf(std.out, "%s key %s of queue %s: %s, weight %d, %s\n", action, printable(*key), printable(*queue),
			wire.CapPhrase(v.Concurrency), v.Weight, wire.RatePhrase(v.RateLimit))
		return nil
	}
}

// listKeys prints queue's top keys: a table, and how many keys were left
// out; with asJSON the API's list.
func listKeys(ctx context.Context, client admin.Operator, queue string, top int, asJSON bool, std streams) error {
	l, err := client.Keys(ctx, queue, top)
	if err != nil {
		return err
	}
	v := wire.KeyListOf(l)
	if asJSON {
		return writeJSON(std.out, v)
	}
	tw := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tWAITING\tREADY\tRUNNING\tCAP\tWEIGHT\tRATE LIMIT\tAT CAP")
	for _, k := range v.Keys {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%d\t%s\t%s\n", printable(k.Key), k.Waiting, k.Ready, k.Running, capText(k.Concurrency), k.Weight,
			wire.RateCell(k.RateLimit), yesNo(k.AtCap))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if int64(len(v.Keys)) < v.Total {
		fmt.Fprintf(std.out, "%d of %d keys with waiting jobs shown; --top N shows more\n", len(v.Keys), v.Total)
	}
	return nil
}

// printKey prints one key as courier keys show does.
func printKey(w io.Writer, k wire.Key) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "key:\t%s\n", printable(k.Key))
	fmt.Fprintf(tw, "waiting:\t%d (%d ready)\n", k.Waiting, k.Ready)
	fmt.Fprintf(tw, "running:\t%d\n", k.Running)
	fmt.Fprintf(tw, "cap:\t%s\n", capText(k.Concurrency))
	fmt.Fprintf(tw, "weight:\t%d\n", k.Weight)
	fmt.Fprintf(tw, "rate limit:\t%s\n", wire.RateCell(k.RateLimit))
	fmt.Fprintf(tw, "at cap:\t%s\n", yesNo(k.AtCap))
	if k.LimitedUntil != nil {
		fmt.Fprintf(tw, "held back until:\t%s (%s)\n", stamp(*k.LimitedUntil), relative(*k.LimitedUntil))
	}
	_ = tw.Flush()
}

// capText shows a key's cap: its own, "none" for no cap, or the queue's.
func capText(c *int) string {
	return wire.CapCell(c, func(n int64) string { return strconv.FormatInt(n, 10) })
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
