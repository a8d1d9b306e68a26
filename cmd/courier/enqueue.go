package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// defineEnqueue is courier enqueue: put one job on a queue and print its
// id.
func defineEnqueue(fs *flag.FlagSet, _ string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	id := fs.String("id", "", "job id; a job with this id already in the queue is refused (default: a generated id)")
	kind := fs.String("kind", "", "the job's kind, for a queue that serves several (A-Z a-z 0-9 . _ - : /, e.g. email.send; default: none)")
	key := fs.String("key", "", "the job's key: the tenant, customer or resource it belongs to, which the queue's key_concurrency and the key's own limits cap (default: none)")
	delay := fs.Duration("delay", 0, "run the job after this long, e.g. 90s or 2h")
	at := fs.String("at", "", "run the job at this time, RFC 3339 (2026-11-21T18:00:00Z)")
	maxAttempts := fs.Int("max-attempts", 0, "attempts before the job goes dead (default: the queue's)")
	timeout := fs.Duration("timeout", 0, "run time limit of each attempt (default: the queue's)")
	payload := fs.String("payload", "", "the payload, as text")
	payloadFile := fs.String("payload-file", "", "read the payload from this file")
	priority := fs.String("priority", "normal", "low, normal or high: the queue's due jobs of a higher level start first")
	uniqueKey := fs.String("unique-key", "", "refuse the job while another job of the queue holds this key (until that job finishes, or --unique-for)")
	uniqueFor := fs.Duration("unique-for", 0, "keep the unique key held this long after the enqueue, even once the job finished, e.g. 24h")
	uniqueAfterFinish := fs.Bool("unique-after-finish", false, "count --unique-for from the job's finish instead of its enqueue")
	replicas := fs.Int("replicas", 0, "wait until this many replicas confirm the job (Redis WAIT); when fewer do in time, the job is stored all the same and the command warns and fails (default: the queue's durability, or none)")
	replicasTimeout := fs.Duration("replicas-timeout", time.Second, "how long --replicas (or --aof) waits, 1ms to 1m")
	aof := fs.Bool("aof", false, "also wait until the master and the replicas have written the job to their append-only file (WAITAOF: Redis 7.2 or later)")
	var headers headerFlag
	fs.Var(&headers, "header", "a header the job carries, `NAME=VALUE` (name: a-z 0-9 . _ -); repeat for more")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		// The flags are mapped to a JobSpec and nothing more: every rule of
		// a job is the library's (worker.Client.EnqueueMany, or the API's
		// server, which hands it on), and its errors name the flag
		// (enqueueFlags in main.go).
		given := setFlags(fs)
		if err := enqueueShape(fs, given, *queue); err != nil {
			return err
		}
		level, err := worker.ParsePriority(*priority)
		if err != nil {
			return err
		}
		spec := worker.JobSpec{Queue: *queue, ID: *id, Kind: *kind, Key: *key, Delay: *delay, MaxAttempts: *maxAttempts, Timeout: *timeout,
			Priority: level, UniqueKey: *uniqueKey, UniqueFor: *uniqueFor, UniqueAfterFinish: *uniqueAfterFinish, Headers: headers}
		if given["replicas"] || given["replicas-timeout"] || given["aof"] {
			spec.Durability = worker.Durability{Replicas: *replicas, Timeout: *replicasTimeout, AOF: *aof}
		}
		if given["at"] {
			t, err := time.Parse(time.RFC3339Nano, *at)
			if err != nil {
				return &usageError{field: "--at", msg: fmt.Sprintf("--at %q is not an RFC 3339 time such as 2026-11-21T18:00:00Z", *at)}
			}
			spec.RunAt = t
		}
		remote, err := af.remote(fs)
		if err != nil {
			return err
		}
		// The payload is read first, so that a bad one never waits on Redis.
		// The library (or the API's server) holds it to the limit;
		// reading stops past the largest limit there is.
		limit := worker.MaxPayloadBytesLimit
		switch {
		case given["payload"]:
			spec.Payload, err = readPayload("--payload", strings.NewReader(*payload), limit)
		case given["payload-file"]:
			spec.Payload, err = readPayloadFile(*payloadFile, limit)
		default:
			if f, ok := std.in.(*os.File); ok && isTerminal(f) {
				return usagef("no payload: give --payload TEXT or --payload-file FILE, or pipe it on stdin (--payload '' for an empty one)")
			}
			spec.Payload, err = readPayload("stdin", std.in, limit)
		}
		if err != nil {
			return err
		}

		client, closeClient, err := af.open(ctx, remote, cf)
		if err != nil {
			return err
		}
		defer closeClient()
		res, err := enqueueOne(ctx, client, spec)
		jobID := res.ID
		if errors.Is(err, worker.ErrNotReplicated) {
			warnPrefix(ctx, client, std)
			warnUnserved(res, std)
			return notReplicated(res, err, *asJSON, std)
		}
		if errors.Is(err, worker.ErrDuplicate) {
			// Refused for its unique key, the client returns the holder's id.
			if errors.Is(err, worker.ErrUniqueKeyHeld) {
				return &explainedError{existingID: jobID, cause: worker.ErrUniqueKeyHeld,
					msg: fmt.Sprintf("queue %q: unique key %q is held by job %q; nothing was changed", spec.Queue, spec.UniqueKey, jobID)}
			}
			return &explainedError{existingID: jobID, cause: worker.ErrDuplicate,
				msg: fmt.Sprintf("queue %q already has a job with id %q; nothing was changed", spec.Queue, jobID)}
		}
		if err != nil {
			return err
		}
		warnPrefix(ctx, client, std)
		warnUnserved(res, std)
		if *asJSON {
			// The id and warning members of the API's reply to an enqueue.
			return writeJSON(std.out, struct {
				ID      string `json:"id"`
				Warning string `json:"warning,omitempty"`
			}{jobID, res.Warning})
		}
		fmt.Fprintln(std.out, printable(jobID)) // through --api, the server says what the id is
		return nil
	}
}

// zeroFlags are the flags whose zero value the library reads as the
// flag left out, with what that means: given, the zero is refused, as the
// HTTP API refuses the member (member in cmd/internal/api/jobfields.go):
// whoever wrote --max-attempts 0 or --id "" meant something else.
var zeroFlags = []struct{ name, means string }{
	{"id", "a generated id"},
	{"kind", "no kind"},
	{"key", "no key"},
	{"max-attempts", "the queue's default"},
	{"timeout", "the queue's default"},
	{"unique-key", "no unique key"},
	{"unique-for", "a key held until the job finishes"},
}

// enqueueShape checks the shape of courier enqueue's command line, given
// the flags set: the queue is required, flags that exclude each other are
// not both given, a flag given is not the zero that means leaving it out
// (each one's default). The job's rules are the library's.
func enqueueShape(fs *flag.FlagSet, given map[string]bool, queue string) error {
	switch {
	case queue == "":
		return &usageError{field: "--queue", msg: "--queue is required"}
	case given["delay"] && given["at"]:
		return &usageError{field: "--at", msg: "give --delay or --at, not both"}
	case given["payload"] && given["payload-file"]:
		return &usageError{field: "--payload-file", msg: "give --payload or --payload-file, not both"}
	}
	for _, z := range zeroFlags {
		if f := fs.Lookup(z.name); given[z.name] && f.Value.String() == f.DefValue {
			return &usageError{field: "--" + z.name, msg: fmt.Sprintf("invalid --%s: %q is no value; leave --%s out for %s", z.name, f.DefValue, z.name, z.means)}
		}
	}
	return nil
}

// notReplicated reports a job stored but not confirmed on the replicas
// asked for: its id on stdout (with --json, the API's 202 reply), the
// warning on stderr; the command fails with the code of not_replicated.
func notReplicated(res worker.EnqueueResult, err error, asJSON bool, std streams) error {
	id, msg := res.ID, printableError(err.Error())
	if asJSON {
		if werr := writeJSON(std.out, struct {
			ID         string     `json:"id"`
			Replicated bool       `json:"replicated"`
			Error      wire.Error `json:"error"`
			Warning    string     `json:"warning,omitempty"`
		}{id, false, wire.Error{Code: wire.CodeNotReplicated, Message: err.Error()}, res.Warning}); werr != nil {
			return werr
		}
	} else {
		fmt.Fprintln(std.out, printable(id))
	}
	fmt.Fprintf(std.err, "courier enqueue: warning: job %s: %s\n", printable(id), msg)
	return &printedError{err}
}

// readPayloadFile reads the payload from the file at path.
func readPayloadFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path) // #nosec G304 G703 -- the file the user names with --payload-file
	if err != nil {
		return nil, fmt.Errorf("--payload-file: %w", err)
	}
	defer f.Close()
	return readPayload(path, f, limit)
}

// readPayload reads a payload from in (named what in messages), refusing
// more than limit bytes without reading them all.
func readPayload(what string, in io.Reader, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read the payload from %s: %w", what, err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("the payload from %s is larger than jobs.max_payload_bytes (%d bytes)", what, limit)
	}
	return b, nil
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// isTerminal reports whether f is a character device other than /dev/null
// (which cron, systemd and containers give as stdin: an empty payload).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}

// enqueueOne adds spec through client and returns its result and error
// as worker.Client.Enqueue does: the id of the job, or of the one that
// holds its id or unique key (with an error wrapping worker.ErrDuplicate),
// or of a job stored but not confirmed on replicas
// (worker.ErrNotReplicated); and the operator's warning, if any.
func enqueueOne(ctx context.Context, client admin.Operator, spec worker.JobSpec) (worker.EnqueueResult, error) {
	res, err := client.Enqueue(ctx, []worker.JobSpec{spec})
	if err != nil {
		if len(res) == 1 {
			return res[0], err
		}
		return worker.EnqueueResult{}, err
	}
	return res[0], res[0].Err
}

// warnUnserved passes on, on stderr, the warning of an enqueue to a queue
// or kind no daemon has ever served (worker.EnqueueResult.Warning): a
// typo, or a daemon not deployed yet. The job is stored all the same and
// the exit code is unchanged.
func warnUnserved(res worker.EnqueueResult, std streams) {
	if res.Warning != "" {
		fmt.Fprintf(std.err, "courier enqueue: warning: %s\n", printableError(res.Warning))
	}
}

// warnPrefix warns, on stderr, when daemons run on Redis but none on the
// client's key prefix: the job was stored where no daemon looks. Through
// the API the daemon's own prefix was used, and without a live daemon at
// all (not started yet) there is nothing to compare.
func warnPrefix(ctx context.Context, client admin.Operator, std streams) {
	c, ok := client.(*admin.Client)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var pe *admin.PrefixError
	if err := c.CheckPrefix(ctx); errors.As(err, &pe) {
		fmt.Fprintf(std.err, "courier enqueue: warning: %s: set --prefix or redis.prefix to the daemons' prefix\n", printableError(pe.Error()))
	}
}
