package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ToleranceDefault is Verifier.Tolerance's default.
const ToleranceDefault = 5 * time.Minute

// Why Verify refuses a request; its errors wrap one of these.
var (
	// ErrNoSignature: the request has no Courier-Signature header.
	ErrNoSignature = errors.New("webhook: no Courier-Signature header")
	// ErrBadSignature: no signature of the request matches, or the headers
	// it covers are missing or malformed.
	ErrBadSignature = errors.New("webhook: bad signature")
	// ErrStale: the signature matches, but Courier-Timestamp is further
	// from the receiver's clock than the tolerance: a replayed capture, or
	// a clock that is off.
	ErrStale = errors.New("webhook: stale timestamp")
)

// Verifier checks that requests come from Courier, signed with a shared
// secret, and are recent. The zero value of each field but Secret is its
// default.
type Verifier struct {
	// Secret is the key of Settings.Secret. Required: with none, every
	// request is refused.
	Secret []byte
	// Tolerance is how far Courier-Timestamp may be from Now, in the past
	// or the future, so that a captured request cannot be replayed later.
	// Allow for the clocks' skew and the request's time in flight.
	// Default ToleranceDefault (5m).
	Tolerance time.Duration
	// Now returns the current time. Default time.Now.
	Now func() time.Time
	// AcceptV1 accepts v1 signatures as well as v2, while senders move to
	// v2. A v1 signature does not cover the queue, job id or attempt, so
	// that a capture can be replayed under another Courier-Job-Id within
	// the tolerance. Default false.
	AcceptV1 bool
}

// Verify checks the signature of a request received from Courier, given
// its headers and its body as received (before any parsing), and then its
// timestamp. It compares in constant time and accepts upper-case hex; a
// Courier-Signature header may list several signatures, separated by
// commas, of which one must match. It refuses a request that repeats a
// header the signature covers, since the receiver might read another
// value than the one checked. The error wraps ErrNoSignature,
// ErrBadSignature or ErrStale.
func (v Verifier) Verify(h http.Header, body []byte) error {
	header := strings.Join(h.Values(HeaderSignature), ",")
	if header == "" {
		return ErrNoSignature
	}
	if len(v.Secret) == 0 {
		return fmt.Errorf("%w: the verifier has no secret", ErrBadSignature)
	}
	ts, one := single(h, HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if !one || err != nil || !isDigits(ts) {
		return fmt.Errorf("%w: %s is missing, repeated or not Unix seconds", ErrBadSignature, HeaderTimestamp)
	}
	if err := v.checkSignature(header, h, ts, body); err != nil {
		return err
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = ToleranceDefault
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	switch skew := now().Sub(time.Unix(sec, 0)); {
	case skew > tolerance:
		return fmt.Errorf("%w: %s is %s old; the tolerance is %s", ErrStale, HeaderTimestamp, skew.Truncate(time.Second), tolerance)
	case skew < -tolerance:
		return fmt.Errorf("%w: %s is %s in the future; the tolerance is %s", ErrStale, HeaderTimestamp, (-skew).Truncate(time.Second), tolerance)
	}
	return nil
}

// checkSignature reports whether one signature listed in header signs the
// request.
func (v Verifier) checkSignature(header string, h http.Header, ts string, body []byte) error {
	var v2 []byte // computed once, when a v2 signature is listed
	var v2Err error
	seen := false
	for entry := range strings.SplitSeq(header, ",") {
		scheme, sig, _ := strings.Cut(strings.TrimSpace(entry), "=")
		var want []byte
		switch {
		case scheme == "v2":
			if v2 == nil && v2Err == nil {
				var m Message
				if m, v2Err = messageOf(h, ts, body); v2Err == nil {
					v2 = macV2(v.Secret, m)
				}
			}
			want = v2
		case scheme == "v1" && v.AcceptV1:
			want = macV1(v.Secret, ts, body)
		default:
			continue // a scheme this receiver does not take
		}
		seen = true
		got, err := hex.DecodeString(sig)
		if err == nil && want != nil && hmac.Equal(got, want) {
			return nil
		}
	}
	switch {
	case v2Err != nil:
		return v2Err
	case !seen && v.AcceptV1:
		return fmt.Errorf("%w: %s holds no v1 or v2 signature", ErrBadSignature, HeaderSignature)
	case !seen:
		return fmt.Errorf("%w: %s holds no v2 signature (set AcceptV1 to take v1)", ErrBadSignature, HeaderSignature)
	}
	return fmt.Errorf("%w: the signature does not match the request", ErrBadSignature)
}

// messageOf reads what a v2 signature covers from a request's headers.
func messageOf(h http.Header, ts string, body []byte) (Message, error) {
	m := Message{Timestamp: ts, Body: body}
	queue, oneQueue := single(h, HeaderQueue)
	id, oneID := single(h, HeaderJobID)
	raw, oneAttempt := single(h, HeaderAttempt)
	n, err := strconv.Atoi(raw)
	switch {
	case !oneAttempt || err != nil || strconv.Itoa(n) != raw:
		return Message{}, fmt.Errorf("%w: %s is missing, repeated or not a decimal number", ErrBadSignature, HeaderAttempt)
	case !oneQueue || queue == "" || strings.Contains(queue, "\n"):
		return Message{}, fmt.Errorf("%w: %s is missing, repeated or holds a newline", ErrBadSignature, HeaderQueue)
	case !oneID || id == "" || strings.Contains(id, "\n"):
		return Message{}, fmt.Errorf("%w: %s is missing, repeated or holds a newline", ErrBadSignature, HeaderJobID)
	}
	m.Queue, m.JobID, m.Attempt = queue, id, n
	return m, nil
}

// single returns the value of the header name, and false when the request
// has none or several: a receiver reading the last of several values, or
// all of them joined, as some frameworks do, would act on a value the
// signature does not cover.
func single(h http.Header, name string) (string, bool) {
	values := h.Values(name)
	if len(values) != 1 {
		return "", false
	}
	return values[0], true
}

// Verify is Verifier{Secret: secret}.Verify: it checks a request's v2
// signature, and that its timestamp is within ToleranceDefault of now.
func Verify(secret []byte, h http.Header, body []byte) error {
	return Verifier{Secret: secret}.Verify(h, body)
}
