package ui

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// maxShown is the most of a payload (or a result) a job's page shows.
const maxShown = 64 << 10

// Bounds of a result's preview in a list of jobs.
const (
	previewRunes = 120 // characters of text
	previewBytes = 16  // bytes of binary, in hex
)

// payloadView is a payload (or a completed job's result) as the job's page
// shows it: as text, which the template escapes.
type payloadView struct {
	Kind      string // "JSON", "text", "binary" or "empty"
	Text      string
	Size      int
	Truncated bool // Text shows only the first maxShown bytes
	// For the template "bytes" (layout.html): the heading ("Result"), in
	// lower case the block's id and its note's word; None, what shows
	// instead of an empty block ("": the empty block).
	Title, Name, None string
}

// titled is v under the heading title, showing none when empty (see
// payloadView).
func (v payloadView) titled(title, none string) payloadView {
	v.Title, v.Name, v.None = title, strings.ToLower(title), none
	return v
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

// preview is p in one short line, for a list of jobs: as text (JSON
// included) with its runs of white space as one space, cut to previewRunes
// characters; else "binary, N bytes: " and its first previewBytes bytes
// in hex; "—" when empty. Past the UTF-8 check, it formats at most a few
// hundred bytes of p.
func preview(p []byte) string {
	switch {
	case len(p) == 0:
		return "—"
	case utf8.Valid(p):
		head, cut := cutUTF8(p, 4*previewRunes) // previewRunes characters, unless mostly white space
		s := strings.Join(strings.Fields(head), " ")
		if short := truncate(previewRunes, s); short != s {
			s, cut = strings.TrimSuffix(short, "…"), true
		}
		if cut {
			s = strings.TrimRight(s, " ") + "…"
		}
		return s
	}
	n := min(len(p), previewBytes)
	s := "binary, " + formatCount(int64(len(p))) + " bytes: " + hex.EncodeToString(p[:n])
	if n < len(p) {
		s += "…"
	}
	return s
}
