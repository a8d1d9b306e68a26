package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Record is a decoded job, from its record in the queue's jobs hash and its
// claim count in the claims hash. The layout is defined by lua/record.lua:
//
//	jobs[id]   = "c2;<offset>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;" + err + payload
//	claims[id] = claims so far; attempts spent = claims - offset
type Record struct {
	ID          string
	Claim       int64 // claim token: claims so far, never reset
	Attempt     int   // attempts spent, including a running one
	MaxAttempts int   // 0 = the queue's default
	Timeout     time.Duration
	EnqueuedAt  time.Time
	LastError   string
	Payload     []byte

	// RunAt is not part of the stored record: Claim sets it to the run-at
	// the job was due at.
	RunAt time.Time
}

// Token identifies the claim a worker holds the job under.
func (r *Record) Token() Token { return Token{ID: r.ID, Claim: r.Claim} }

// Token is a job id with the claim number a worker holds it under. Scripts
// given a stale token (the job was recovered, handed back or claimed again)
// do nothing.
type Token struct {
	ID    string
	Claim int64
}

// ErrCorrupt reports a record that does not decode.
var ErrCorrupt = errors.New("corrupt job record")

const recordMagic = "c2;"

// DecodeRecord parses the record s stored under id, whose claim count is
// claims.
func DecodeRecord(id, s string, claims int64) (Record, error) {
	r := Record{ID: id, Claim: claims}
	if !strings.HasPrefix(s, recordMagic) {
		return r, fmt.Errorf("job %q: %w: bad header", id, ErrCorrupt)
	}
	rest := s[len(recordMagic):]
	var f [5]int64
	for i := range f {
		end := strings.IndexByte(rest, ';')
		if end < 0 {
			return r, fmt.Errorf("job %q: %w: short header", id, ErrCorrupt)
		}
		v, err := strconv.ParseInt(rest[:end], 10, 64)
		if err != nil || v < 0 || end > 15 {
			return r, fmt.Errorf("job %q: %w: header field %d", id, ErrCorrupt, i+1)
		}
		f[i] = v
		rest = rest[end+1:]
	}
	if f[4] > int64(len(rest)) {
		return r, fmt.Errorf("job %q: %w: error text runs past the record", id, ErrCorrupt)
	}
	r.Attempt = int(max(claims-f[0], 0))
	r.MaxAttempts = int(f[1])
	r.Timeout = time.Duration(f[2]) * time.Millisecond
	r.EnqueuedAt = time.UnixMilli(f[3])
	r.LastError = rest[:f[4]]
	r.Payload = []byte(rest[f[4]:])
	return r, nil
}

// EncodeRecord is the inverse of DecodeRecord: it returns the jobs hash value
// and the claims hash value of r. Scripts build records themselves; this
// exists for tests and tools that write records directly.
func EncodeRecord(r Record) (record string, claims int64) {
	var b strings.Builder
	b.Grow(64 + len(r.LastError) + len(r.Payload))
	b.WriteString(recordMagic)
	for _, v := range []int64{r.Claim - int64(r.Attempt), int64(r.MaxAttempts), r.Timeout.Milliseconds(), r.EnqueuedAt.UnixMilli(), int64(len(r.LastError))} {
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte(';')
	}
	b.WriteString(r.LastError)
	b.Write(r.Payload)
	return b.String(), r.Claim
}
