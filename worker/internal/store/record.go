package store

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Record is a decoded job. The layout is defined by lua/record.lua:
//
//	jobs[id]   = "c3;<attempts>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;" + err + payload
//	           | "c4;<attempts>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;<hdrlen>;" + err + headers + payload
//	             (a job with headers; headers = "name=value\n" per header, by name)
//	state[id]  = "<attempts>;<max>;" + err, which overrides the header's (once the job has one)
//	claims[id] = claim token of the running attempt [+ "@" + process] (only while active)
type Record struct {
	ID string
	// Claim is the token of the running attempt, 0 when not active. Every
	// claim in a queue gets a token never used before in that queue, even
	// when Redis lost recent writes: the Redis clock in µs when it was
	// handed out, or just above the queue's previous token. It stays below
	// 2^53.
	Claim int64
	// Worker is the id of the process running the attempt under Claim, ""
	// when not active or not recorded (claims of older versions).
	Worker      string
	Attempt     int // attempts spent, including a running one
	MaxAttempts int // 0 = the queue's default
	Timeout     time.Duration
	EnqueuedAt  time.Time
	LastError   string
	Payload     []byte

	// RunAt is not part of the stored record: Claim sets it to the run-at
	// the job was due at.
	RunAt time.Time
	// Priority and Unique come from the job's options entry: Claim sets
	// Priority, Get both.
	Priority Priority
	Unique   Unique
	// Key is the job's key (NewJob.Key), "" for none: Claim, Get and List
	// set it.
	Key string

	// Headers are the job's headers (nil when it has none), from a c4
	// record.
	Headers map[string]string
	// Progress is the running attempt's last stored progress (Get, List),
	// nil when none was reported; it lives in the claims value.
	Progress *Progress
	// Result is a completed job's (Get, List of completed jobs): what its
	// handler returned. When it was acked is the Score beside the record.
	Result []byte
}

// Token identifies the claim a worker holds the job under.
func (r *Record) Token() Token { return Token{ID: r.ID, Claim: r.Claim} }

// Token is a job id with the claim token a worker holds it under. Scripts
// given a stale token (the job was recovered, handed back or finished
// elsewhere) do nothing.
type Token struct {
	ID    string
	Claim int64
}

// ErrCorrupt reports a record that does not decode.
var ErrCorrupt = errors.New("corrupt job record")

const (
	recordMagic  = "c3;" // a record without headers
	headersMagic = "c4;" // a record with a headers section
)

// maxTimeoutMs is the largest timeout a time.Duration holds, in ms.
const maxTimeoutMs = int64(math.MaxInt64 / time.Millisecond)

// DecodeRecord parses the record s stored under id. The Attempt it returns
// counts ended attempts; the caller adds the running one for an active job.
func DecodeRecord(id, s string) (Record, error) {
	r := Record{ID: id}
	var f [6]int64
	fields := f[:5]
	switch {
	case strings.HasPrefix(s, recordMagic):
	case strings.HasPrefix(s, headersMagic):
		fields = f[:]
	default:
		return r, fmt.Errorf("job %q: %w: bad header", id, ErrCorrupt)
	}
	rest, bad := parseFields(s[len(recordMagic):], fields)
	if bad > 0 {
		return r, fmt.Errorf("job %q: %w: header field %d", id, ErrCorrupt, bad)
	}
	if f[2] > maxTimeoutMs {
		return r, fmt.Errorf("job %q: %w: timeout of %d ms", id, ErrCorrupt, f[2])
	}
	if f[4] > int64(len(rest)) || f[5] > int64(len(rest))-f[4] {
		return r, fmt.Errorf("job %q: %w: error text or headers run past the record", id, ErrCorrupt)
	}
	r.Attempt = int(f[0])
	r.MaxAttempts = int(f[1])
	r.Timeout = time.Duration(f[2]) * time.Millisecond
	r.EnqueuedAt = time.UnixMilli(f[3])
	r.LastError = rest[:f[4]]
	if f[5] > 0 {
		h, err := DecodeHeaders(rest[f[4] : f[4]+f[5]])
		if err != nil {
			return r, fmt.Errorf("job %q: %w: %w", id, ErrCorrupt, err)
		}
		r.Headers = h
	}
	r.Payload = []byte(rest[f[4]+f[5]:])
	return r, nil
}

// decodeJob decodes the record s of job id with its state entry st ("" when
// it has none), which overrides the record's attempts, max attempts and last
// error. A state entry that does not parse is reported like a bad record.
func decodeJob(id, s, st string) (Record, error) {
	r, err := DecodeRecord(id, s)
	if err != nil || st == "" {
		return r, err
	}
	var f [2]int64
	rest, bad := parseFields(st, f[:])
	if bad > 0 {
		return Record{ID: id}, fmt.Errorf("job %q: %w: state field %d", id, ErrCorrupt, bad)
	}
	r.Attempt, r.MaxAttempts, r.LastError = int(f[0]), int(f[1]), rest
	return r, nil
}

// parseFields reads len(f) fields "<digits>;" from the start of s into f
// and returns what follows them. A field of 1 to 15 digits, as the scripts
// limit them (lua/record.lua), always fits. bad is the 1-based number of the
// first field that does not parse, 0 when all do.
func parseFields(s string, f []int64) (rest string, bad int) {
	for i := range f {
		end := strings.IndexByte(s, ';')
		if end < 1 || end > 15 || strings.Trim(s[:end], "0123456789") != "" {
			return s, i + 1
		}
		f[i], _ = strconv.ParseInt(s[:end], 10, 64)
		s = s[end+1:]
	}
	return s, 0
}

// EncodeRecord is the inverse of DecodeRecord for a job that is not running
// (Claim is not part of the record). Scripts build records themselves; this
// exists for tests and tools that write records directly. A record written
// so carries its attempts and last error in its header, as records of
// versions before the state hash did (lua/record.lua): the scripts read them
// from there while the job has no state entry. Negative numbers are written
// as 0.
func EncodeRecord(r Record) string {
	var b strings.Builder
	h := EncodeHeaders(r.Headers)
	b.Grow(64 + len(r.LastError) + len(h) + len(r.Payload))
	fields := []int64{int64(r.Attempt), int64(r.MaxAttempts), r.Timeout.Milliseconds(), r.EnqueuedAt.UnixMilli(), int64(len(r.LastError))}
	if h == "" {
		b.WriteString(recordMagic)
	} else {
		b.WriteString(headersMagic)
		fields = append(fields, int64(len(h)))
	}
	for _, v := range fields {
		b.WriteString(strconv.FormatInt(max(v, 0), 10))
		b.WriteByte(';')
	}
	b.WriteString(r.LastError)
	b.WriteString(h)
	b.Write(r.Payload)
	return b.String()
}
