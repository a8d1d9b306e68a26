package store_test

import (
	"bytes"
	"errors"
	"math"
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
		{"failed", store.Record{
			Attempt: 3, MaxAttempts: 25, Timeout: 90 * time.Second,
			EnqueuedAt: time.UnixMilli(1_795_249_100_083), LastError: "boom; at c3;2;3;", Payload: []byte("a;b;c"),
		}},
		{"binary payload and error", store.Record{
			Attempt: 1, EnqueuedAt: time.UnixMilli(1),
			LastError: string(allBytes), Payload: allBytes,
		}},
		{"payload that looks like a record", store.Record{EnqueuedAt: time.UnixMilli(5), Payload: []byte("c3;9;9;9;9;3;err")}},
		{"largest values", store.Record{
			Attempt: 999_999_999_999_999, MaxAttempts: 999_999_999_999_999,
			Timeout: time.Duration(math.MaxInt64) / time.Millisecond * time.Millisecond, EnqueuedAt: time.UnixMilli(999_999_999_999_999),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.rec.ID = "job-1"
			s := store.EncodeRecord(tt.rec)
			got, err := store.DecodeRecord("job-1", s)
			if err != nil {
				t.Fatalf("DecodeRecord(%q): %v", s, err)
			}
			if !sameRecord(got, tt.rec) {
				t.Errorf("round trip of %q:\ngot  %+v\nwant %+v", s, got, tt.rec)
			}
		})
	}
}

func TestDecodeRecordLayout(t *testing.T) {
	t.Parallel()
	// The layout lua/record.lua writes, read field by field.
	got, err := store.DecodeRecord("x", "c3;2;5;30000;1795249100083;4;oops;payload;with;semicolons")
	if err != nil {
		t.Fatal(err)
	}
	want := store.Record{
		ID: "x", Attempt: 2, MaxAttempts: 5, Timeout: 30 * time.Second,
		EnqueuedAt: time.UnixMilli(1795249100083), LastError: "oops", Payload: []byte(";payload;with;semicolons"),
	}
	if !sameRecord(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if tok := got.Token(); tok != (store.Token{ID: "x"}) {
		t.Errorf("Token() of a record that is not running = %+v, want no claim", tok)
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"",
		"garbage",
		"c3",
		"c3;",
		"c1;0;0;0;0;0;0;", // earlier layouts
		"c2;0;0;0;0;0;",
		" c3;0;0;0;0;0;",
		"c3;0;0;0;0;",  // four fields
		"c3;0;0;0;0;0", // no ';' after the fifth
		"c3;;0;0;0;0;",
		"c3;x;0;0;0;0;",
		"c3;+1;0;0;0;0;",
		"c3;0;0;0;0;1.5;",
		"c3;-1;0;0;0;0;",
		"c3;-0;0;0;0;0;",
		"c3;0;-1;0;0;0;",
		"c3;0;0;-30000;0;0;",
		"c3;0;0;0;0;5;abc",                 // error text runs past the end
		"c3;0;0;0;0;-1;abc",                // negative error length
		"c3;1234567890123456;0;0;0;0;",     // 16 digits: the scripts' limit is 15
		"c3;99999999999999999999;0;0;0;0;", // beyond int64
		"c3;0;0;999999999999999;0;0;",      // a timeout no time.Duration holds
	} {
		_, err := store.DecodeRecord("id", s)
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("DecodeRecord(%q) error = %v, want ErrCorrupt", s, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []store.Record{
		{EnqueuedAt: time.UnixMilli(0)},
		{Attempt: 2, MaxAttempts: 5, Timeout: time.Minute, EnqueuedAt: time.UnixMilli(1795249100083), LastError: "e;r", Payload: []byte("p;q")},
		{Attempt: 1, EnqueuedAt: time.UnixMilli(7), LastError: string(allBytes), Payload: allBytes},
	} {
		f.Add(store.EncodeRecord(r))
	}
	f.Add("c3;0;0;0;0;5;abc")
	f.Add("c3;+1;0;0;0;0;")
	f.Add("c3;0;0;999999999999999;0;0;")
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := store.DecodeRecord("id", s)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("DecodeRecord(%q) error %v does not wrap ErrCorrupt", s, err)
			}
			return
		}
		if r.Attempt < 0 || r.MaxAttempts < 0 || r.Timeout < 0 {
			t.Fatalf("DecodeRecord(%q): negative field in %+v", s, r)
		}
		if got, want := len(r.LastError)+len(r.Payload), len(s)-headerLen(s); got != want {
			t.Fatalf("DecodeRecord(%q): error and payload are %d bytes, the record has %d after the header", s, got, want)
		}
		enc := store.EncodeRecord(r)
		back, err := store.DecodeRecord("id", enc)
		if err != nil {
			t.Fatalf("DecodeRecord(EncodeRecord(%+v)) = %v (encoded %q)", r, err, enc)
		}
		if !sameRecord(back, r) {
			t.Fatalf("round trip of %q:\ngot  %+v\nwant %+v", s, back, r)
		}
	})
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
