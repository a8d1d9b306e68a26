package workertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// ClockSlack allows for the Redis clock being read a little before or after
// the local one, and for millisecond rounding.
const ClockSlack = 25 * time.Millisecond

// Within fails unless lo-ClockSlack <= got <= hi+ClockSlack; what names got
// in the failure.
func Within(t testing.TB, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo.Add(-ClockSlack)) || got.After(hi.Add(ClockSlack)) {
		t.Errorf("%s = %s, want within [%s, %s] (±%s)", what,
			got.Format(time.StampMilli), lo.Format(time.StampMilli), hi.Format(time.StampMilli), ClockSlack)
	}
}

// AllBytes returns the 256 byte values in order, a payload no encoding may
// change.
func AllBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// Second returns the error of a two-value call.
func Second[T any](_ T, err error) error { return err }

// CheckInvalid fails unless err is a validation error of field whose message
// contains where (a batch's spec, "specs[2]", or "" for a single spec).
func CheckInvalid(t testing.TB, err error, field, where string) {
	t.Helper()
	if !errors.Is(err, worker.ErrInvalid) {
		t.Fatalf("err = %v, want one wrapping ErrInvalid", err)
	}
	var ve *worker.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want a *ValidationError", err, err)
	}
	if where != "" {
		field = where + "." + field // a batch names the spec: specs[2].Delay
	}
	if ve.Field != field {
		t.Errorf("ValidationError.Field = %q, want %q (err: %v)", ve.Field, field, err)
	}
	if !strings.Contains(err.Error(), where) {
		t.Errorf("err = %q, want it to name %q", err, where)
	}
}
