package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// The tests in this file cover what keeps text from jobs, Redis and the
// API from driving the terminal: printable, printableError and the JSON
// pass of writeJSON.

func TestPrintable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain ASCII", `dial tcp 10.0.0.1:443: i/o timeout (a\b) ~`, `dial tcp 10.0.0.1:443: i/o timeout (a\b) ~`},
		{"letters of other scripts", "échec: 接続に失敗 Ωμέγα ✓ 😀", "échec: 接続に失敗 Ωμέγα ✓ 😀"},
		{"empty", "", ""},
		{"CSI clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"OSC window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"fake line", "x509: bad name\r\nstate: done", `x509: bad name\r\nstate: done`},
		{"tab", "a\tb", `a\tb`},
		{"other C0 and DEL", "\x00\x08\x0b\x0c\x7f", `\x00\x08\x0b\x0c\x7f`},
		{"C1 CSI", "\u009b2J", `\u009b2J`},
		{"C1 NEL and OSC", "\u0085\u009d", `\u0085\u009d`},
		{"bidi override", "cod\u202egnp.exe", `cod\u202egnp.exe`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"zero width and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`},
		{"line separators", "a\u2028b\u2029", `a\u2028b\u2029`},
		{"tag character", "a\U000e0041", `a\U000e0041`},
		{"invalid UTF-8", "bad \xff\xfe and a cut \xe6\x8e", `bad \xff\xfe and a cut \xe6\x8e`},
		{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := printable(tt.in); got != tt.want {
				t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestPrintableError: an error keeps the newlines and tabs of its layout,
// and loses every other control character.
func TestPrintableError(t *testing.T) {
	t.Parallel()
	in := "invalid configuration:\n\tredis.addr: \x1b]0;pwned\x07\x1b[2J\rstate: done\u009b\u202e\xff"
	want := "invalid configuration:\n\tredis.addr: \\x1b]0;pwned\\x07\\x1b[2J\\rstate: done\\u009b\\u202e\\xff"
	if got := printableError(in); got != want {
		t.Errorf("printableError(%q) = %q, want %q", in, got, want)
	}
}

// FuzzPrintable: whatever the input, the output is valid UTF-8 without a
// control character; input that has none comes out unchanged.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;pwned\x07", "\r\n\t", "\u009b\u202e\U000e0041", "\xff\xe6\x8e", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := printable(s)
		clean := utf8.ValidString(s)
		for _, r := range s {
			clean = clean && !isControl(r)
		}
		if clean && got != s {
			t.Errorf("printable(%q) = %q, want it unchanged", s, got)
		}
		if !utf8.ValidString(got) {
			t.Errorf("printable(%q) = %q, not UTF-8", s, got)
		}
		for _, r := range got {
			if isControl(r) {
				t.Fatalf("printable(%q) = %q holds %U", s, got, r)
			}
		}
	})
}

// TestWriteJSONEscapes: --json output holds no raw control character, and
// decodes to the very strings it was given; invalid UTF-8, which
// encoding/json cannot carry, decodes as U+FFFD per bad byte.
func TestWriteJSONEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"C0", "\x1b]0;pwned\x07\x1b[2J\r\nstate:\tdone", ""},
		{"DEL and C1", "\x7f\u0085\u009b2J", ""},
		{"bidi and format", "cod\u202egnp.exe\u2066\u200b\ufeff", ""},
		{"separators", "a\u2028b\u2029", ""},
		{"beyond the BMP", "tag \U000e0041, emoji 😀", ""},
		{"letters and HTML", "échec <b>&</b> 接続", ""},
		{"invalid UTF-8", "bad \xff\xfe.", "bad \ufffd\ufffd."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := tt.want
			if want == "" {
				want = tt.in
			}
			var buf bytes.Buffer
			if err := writeJSON(&buf, wire.Job{ID: "j", LastError: tt.in}); err != nil {
				t.Fatal(err)
			}
			assertTerminalSafe(t, buf.String())
			var got wire.Job
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %v: %q", err, buf.String())
			}
			if got.LastError != want {
				t.Errorf("last_error decodes to %q, want %q: %q", got.LastError, want, buf.String())
			}
		})
	}
}

// assertTerminalSafe fails t when out holds a byte or character that acts
// on a terminal: anything but the newlines and tabs of a layout. It is
// written apart from isControl, so as not to share its mistakes.
func assertTerminalSafe(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("output is not UTF-8: %q", out)
	}
	for i, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			t.Errorf("output holds %U at byte %d: %q", r, i, out)
			return
		}
	}
}
