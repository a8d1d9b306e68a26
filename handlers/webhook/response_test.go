package webhook

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 7 ", 7 * time.Second, true},
		{"86400", 24 * time.Hour, true},
		{"86401", 24 * time.Hour, true},
		{"99999999999999999999999", 24 * time.Hour, true},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sunday, 01-Mar-26 13:00:00 GMT", time.Hour, true},
		{"Sun Mar  1 12:01:00 2026", time.Minute, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
		{"Mon, 09 Mar 2026 12:00:00 GMT", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.value, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("retryAfter(%q) = %s, %t; want %s, %t", tt.value, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	c := &config{}
	c.redact.addKey("s3cret-value")
	c.redact.addSecret("Bearer 0123456789")
	tests := []struct {
		name string
		body string
		want string
	}{
		{"empty", "", ""},
		{"blank", " \n\t ", ""},
		{"text", "service down", ": service down"},
		{"one line", "a\r\nb\tc\x00d\x1b[0m", ": a b c d [0m"},
		{"invalid UTF-8", "a\xffb", ": a\uFFFDb"},
		{"redacted", "key s3cret-value, auth Bearer 0123456789", ": key [redacted], auth [redacted]"},
		{"cut", strings.Repeat("x", 300), ": " + strings.Repeat("x", 256) + " …"},
		{"cut at a character", "x" + strings.Repeat("é", 200), ": x" + strings.Repeat("é", 127) + " …"},
		{"read in part", strings.Repeat("y ", responseReadMax/2), ": " + strings.Repeat("y ", 128)[:255] + " …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := c.snippet([]byte(tt.body)); got != tt.want {
				t.Errorf("snippet(%q) = %q; want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://example.com/hooks/a", "https://example.com/hooks/a"},
		{"https://user:pw@example.com:8443/p?token=t#frag", "https://example.com:8443/p"},
		{"http://example.com", "http://example.com"},
		{"http://example.com/a%2Fb", "http://example.com/a%2Fb"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := display(u); got != tt.want {
			t.Errorf("display(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
