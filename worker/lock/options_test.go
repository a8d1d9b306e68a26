package lock

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    Options
		wantErr string // a part of the error naming the field; "" = valid
		check   func(t *testing.T, c *Client)
	}{
		{name: "zero value", check: func(t *testing.T, c *Client) {
			if c.lease != LeaseDefault || c.interval != LeaseDefault/3 {
				t.Errorf("lease %v interval %v, want %v and a third", c.lease, c.interval, LeaseDefault)
			}
			if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(c.ID()) {
				t.Errorf("default ID %q, want a UUID v4", c.ID())
			}
			if c.label("x") != "x" {
				t.Errorf("default metric label of x = %q", c.label("x"))
			}
		}},
		{name: "explicit", opts: Options{ID: "proc-7", Lease: 1500*time.Millisecond + 300*time.Microsecond}, check: func(t *testing.T, c *Client) {
			if c.Field("h") != "proc-7:h" {
				t.Errorf("Field = %q", c.Field("h"))
			}
			if c.lease != 1500*time.Millisecond {
				t.Errorf("lease %v, want whole milliseconds", c.lease)
			}
		}},
		{name: "ID with colon", opts: Options{ID: "a:b"}, wantErr: "ID"},
		{name: "lease too short", opts: Options{Lease: 10 * time.Millisecond}, wantErr: "Lease"},
		{name: "negative lease", opts: Options{Lease: -time.Second}, wantErr: "Lease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := fakeClientErr(newFakeRedis(), tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("newClient = %v, want an error naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tc.check(t, c)
		})
	}
	if _, err := NewClient(nil, Options{}); err == nil {
		t.Error("NewClient(nil) succeeded")
	}
}

func TestAcquireValidates(t *testing.T) {
	t.Parallel()
	c := fakeClient(t, newFakeRedis(), Options{})
	for _, tc := range []struct {
		name, lock, holder string
		o                  AcquireOptions
		wantErr            string
	}{
		{"empty name", "", "h", AcquireOptions{}, "empty name"},
		{"empty holder", "L", "", AcquireOptions{}, "empty holder"},
		{"negative lease", "L", "h", AcquireOptions{Lease: -time.Second}, "Lease"},
		{"lease under 1ms", "L", "h", AcquireOptions{Lease: 500 * time.Microsecond}, "Lease"},
	} {
		if _, err := c.Acquire(t.Context(), tc.lock, tc.holder, tc.o); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: Acquire = %v, want an error about %s", tc.name, err, tc.wantErr)
		}
	}
}

func TestMargin(t *testing.T) {
	t.Parallel()
	for lease, want := range map[time.Duration]time.Duration{
		30 * time.Second:        3 * time.Second,
		300 * time.Millisecond:  50 * time.Millisecond,
		60 * time.Millisecond:   30 * time.Millisecond,
		2 * time.Millisecond:    time.Millisecond,
		1000 * time.Millisecond: 100 * time.Millisecond,
	} {
		if got := Margin(lease); got != want {
			t.Errorf("Margin(%v) = %v, want %v", lease, got, want)
		}
	}
}
