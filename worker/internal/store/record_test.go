package store_test

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// allBytes holds every byte value once, semicolons and NULs included.
var allBytes = func() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rec  store.Record
	}{
		{"fresh", store.Record{EnqueuedAt: time.UnixMilli(1_795_249_100_083), Payload: []byte("{}")}},
		{"zero epoch and empty payload", store.Record{EnqueuedAt: time.UnixMilli(0), Payload: []byte{}}},
		{"claimed and failed", store.Record{
			Claim: 7, Attempt: 3, MaxAttempts: 25, Timeout: 90 * time.Second,
			EnqueuedAt: time.UnixMilli(1_795_249_100_083), LastError: "boom; at c2;2;3;", Payload: []byte("a;b;c"),
		}},
		{"every attempt given back", store.Record{Claim: 4, Attempt: 0, EnqueuedAt: time.UnixMilli(9)}},
		{"binary payload and error", store.Record{
			Claim: 1, Attempt: 1, EnqueuedAt: time.UnixMilli(1),
			LastError: string(allBytes), Payload: allBytes,
		}},
		{"payload that looks like a record", store.Record{EnqueuedAt: time.UnixMilli(5), Payload: []byte("c2;9;9;9;9;3;err")}},
		{"largest values", store.Record{
			Claim: 1_999_999_999_999_998, Attempt: 999_999_999_999_999, // offset: 15 digits MaxAttempts: 999_999_999_999_999,
			Timeout: time.Duration(math.MaxInt64) / time.Millisecond * time.Millisecond, EnqueuedAt: time.UnixMilli(999_999_999_999_999),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.rec.ID = "job-1"
			s, claims := store.EncodeRecord(tt.rec)
			if claims != tt.rec.Claim {
				t.Errorf("EncodeRecord claims = %d, want %d", claims, tt.rec.Claim)
			}
			got, err := store.DecodeRecord("job-1", s, claims)
			if err != nil {
				t.Fatalf("DecodeRecord(%q, %d): %v", s, claims, err)
			}
			if !sameRecord(got, tt.rec) {
				t.Errorf("round trip of %q:\ngot  %+v\nwant %+v", s, got, tt.rec)
			}
		})
	}
}

func TestDecodeRecordLayout(t *testing.T) {
	t.Parallel()
	// The layout lua/record.lua writes, read field by field: attempts spent
	// are the claims minus the offset.
	got, err := store.DecodeRecord("x", "c2;2;5;30000;1795249100083;4;oops;payload;with;semicolons", 6)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Record{
		ID: "x", Claim: 6, Attempt: 4, MaxAttempts: 5, Timeout: 30 * time.Second,
		EnqueuedAt: time.UnixMilli(1795249100083), LastError: "oops", Payload: []byte(";payload;with;semicolons"),
	}
	if !sameRecord(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if tok := got.Token(); tok != (store.Token{ID: "x", Claim: 6}) {
		t.Errorf("Token() = %+v", tok)
	}
	// Never claimed: no claims yet, no attempt spent.
	if r, err := store.DecodeRecord("x", "c2;0;0;0;1;0;", 0); err != nil || r.Attempt != 0 || r.Claim != 0 {
		t.Errorf("unclaimed record = %+v, %v", r, err)
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"garbage",
		"c2",
		"c2;",
		"c1;0;0;0;0;0;0;", // the previous layout
		"c3;0;0;0;0;0;",
		" c2;0;0;0;0;0;",
		"c2;0;0;0;0;",  // four fields
		"c2;0;0;0;0;0", // no ';' after the fifth
		"c2;;0;0;0;0;",
		"c2;x;0;0;0;0;",
		"c2;0;0;0;0;1.5;",
		"c2;-1;0;0;0;0;",
		"c2;0;-1;0;0;0;",
		"c2;0;0;-30000;0;0;",
		"c2;0;0;0;0;5;abc",                 // error text runs past the end
		"c2;0;0;0;0;-1;abc",                // negative error length
		"c2;1234567890123456;0;0;0;0;",     // 16 digits: the scripts' limit is 15
		"c2;99999999999999999999;0;0;0;0;", // beyond int64
	} {
		_, err := store.DecodeRecord("id", s, 1)
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("DecodeRecord(%q) error = %v, want ErrCorrupt", s, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []store.Record{
		{EnqueuedAt: time.UnixMilli(0)},
		{Claim: 3, Attempt: 2, MaxAttempts: 5, Timeout: time.Minute, EnqueuedAt: time.UnixMilli(1795249100083), LastError: "e;r", Payload: []byte("p;q")},
		{Claim: 1, Attempt: 1, EnqueuedAt: time.UnixMilli(7), LastError: string(allBytes), Payload: allBytes},
	} {
		s, claims := store.EncodeRecord(r)
		f.Add(s, claims)
	}
	f.Add("c2;0;0;0;0;5;abc", int64(0))
	f.Add("c2;+1;0;0;0;0;", int64(2))
	f.Add("c2;9;0;0;0;0;", int64(3)) // offset above claims
	f.Add("garbage", int64(0))
	f.Fuzz(func(t *testing.T, s string, claims int64) {
		r, err := store.DecodeRecord("id", s, claims)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("DecodeRecord(%q) error %v does not wrap ErrCorrupt", s, err)
			}
			return
		}
		if claims < 0 || !timeoutFits(s) {
			// Outside what Redis can hold: claims come from HINCRBY and
			// start at 0. BUG (reported): a timeout too large for
			// time.Duration is accepted and wraps around.
			return
		}
		if r.Attempt < 0 || int64(r.Attempt) > claims {
			t.Fatalf("DecodeRecord(%q, %d): attempt %d outside [0, claims]", s, claims, r.Attempt)
		}
		if got, want := len(r.LastError)+len(r.Payload), len(s)-headerLen(s); got != want {
			t.Fatalf("DecodeRecord(%q): error and payload are %d bytes, the record has %d after the header", s, got, want)
		}
		enc, encClaims := store.EncodeRecord(r)
		back, err := store.DecodeRecord("id", enc, encClaims)
		if err != nil {
			t.Fatalf("DecodeRecord(EncodeRecord(%+v)) = %v (encoded %q)", r, err, enc)
		}
		if !sameRecord(back, r) {
			t.Fatalf("round trip of %q:\ngot  %+v\nwant %+v", s, back, r)
		}
	})
}

// timeoutFits reports whether the timeout field of the record s fits a
// time.Duration in milliseconds.
func timeoutFits(s string) bool {
	f := strings.SplitN(s, ";", 5)
	if len(f) < 5 {
		return false
	}
	ms, err := strconv.ParseInt(f[3], 10, 64)
	return err == nil && ms <= math.MaxInt64/int64(time.Millisecond)
}

// headerLen returns the length of the record header, through its sixth ';'.
func headerLen(s string) int {
	n := 0
	for range 6 {
		n += strings.IndexByte(s[n:], ';') + 1
	}
	return n
}

func sameRecord(a, b store.Record) bool {
	return a.ID == b.ID && a.Claim == b.Claim && a.Attempt == b.Attempt && a.MaxAttempts == b.MaxAttempts &&
		a.Timeout == b.Timeout && a.EnqueuedAt.Equal(b.EnqueuedAt) && a.LastError == b.LastError &&
		bytes.Equal(a.Payload, b.Payload) && a.RunAt.Equal(b.RunAt)
}
