package main

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Text that came from a job, a handler's error, Redis or the API is not
// Courier's to trust: a TLS error quoting a certificate's names, a job id
// written to Redis by hand, a reply from a hostile API server. Written raw
// to a terminal, its control characters set the window title, clear the
// screen or draw lines Courier never printed. So the client commands pass
// every such string through printable before printing it, and through
// writeJSON, whose output is exact but still safe to cat.

// printable renders s for a terminal: control characters (C0, DEL, C1),
// Unicode format and bidi controls, line and paragraph separators and
// invalid UTF-8 become visible escapes (\n, \x1b, \u202e, \xff); all else,
// letters of any script included, is kept. A backslash is kept too: the
// output is for eyes, not for parsing (--json is for that).
func printable(s string) string { return termEscape(s, false) }

// printableError is printable for an error message, keeping \n and \t:
// Courier's own errors are laid out on several lines ("invalid
// configuration:\n  key: …"). A newline injected into a message from Redis
// or the API can then fake a line, but not move the cursor, recolour or
// retitle the terminal as ESC, BEL and \r can; the fields of jobs are
// escaped in full where the commands print them.
func printableError(s string) string { return termEscape(s, true) }

// termEscape is printable, keeping \n and \t when layout is set.
func termEscape(s string, layout bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case layout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff && isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only, the common case,
// which termEscape returns without copying.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isControl reports whether r does something to a terminal or to the
// order of the text around it rather than show a glyph.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f ||
		unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// jsonPrintable rewrites, in JSON that encoding/json produced, the
// control characters it leaves raw (DEL, C1, format and bidi controls) as
// \u escapes: the document decodes to the same values, and reads safely
// on a terminal. encoding/json already escapes C0 (so the raw newlines
// left are the indentation's) and U+2028/U+2029, and its output is valid
// UTF-8 with every non-ASCII character inside a string, so no parsing is
// needed.
func jsonPrintable(data []byte) []byte {
	var out bytes.Buffer
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r < 0x7f || !isControl(r):
			out.Write(data[i : i+size])
		case r <= 0xffff:
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
		}
		i += size
	}
	return out.Bytes()
}
