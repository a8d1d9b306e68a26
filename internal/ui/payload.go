package ui

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"unicode/utf8"
)

// maxShown is the most of a payload a job's page shows.
const maxShown = 64 << 10

// payloadView is a payload as the job's page shows it: as text, which the
// template escapes.
type payloadView struct {
	Kind      string // "JSON", "text", "binary" or "empty"
	Text      string
	Size      int
	Truncated bool // Text shows only the first maxShown bytes
}

// showPayload renders p: indented when it is JSON, as is when it is UTF-8
// text, else as a hex dump; at most maxShown bytes of it.
func showPayload(p []byte) payloadView {
	v := payloadView{Size: len(p)}
	switch {
	case len(p) == 0:
		v.Kind = "empty"
	case utf8.Valid(p) && json.Valid(p):
		v.Kind = "JSON"
		var buf bytes.Buffer
		if json.Indent(&buf, p, "", "  ") != nil {
			buf.Reset()
			buf.Write(p)
		}
		v.Text, v.Truncated = cutUTF8(buf.Bytes(), maxShown)
	case utf8.Valid(p):
		v.Kind = "text"
		v.Text, v.Truncated = cutUTF8(p, maxShown)
	default:
		v.Kind = "binary"
		shown := p[:min(len(p), maxShown)]
		v.Text, v.Truncated = hex.Dump(shown), len(shown) < len(p)
	}
	return v
}

// cutUTF8 returns the first n bytes of p, or fewer to end on a whole
// character, and whether it cut.
func cutUTF8(p []byte, n int) (string, bool) {
	if len(p) <= n {
		return string(p), false
	}
	for n > 0 && !utf8.RuneStart(p[n]) {
		n--
	}
	return string(p[:n]), true
}
