package api

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/worker"
)

// readHeaders reads a job's headers member, an object of strings. Only the
// shape is checked here: the library checks names, values and sizes
// (worker.MaxHeaders and the rest) before it stores anything, and its
// error names the header (Headers["x"]), which jsonField turns into this
// API's headers["x"]. An empty object is no headers.
func readHeaders(field string, raw json.RawMessage) (map[string]string, *Error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, invalidField(field, "must be an object of strings, not "+kind(raw))
	}
	var h map[string]string
	err := decodeObject(raw, func(dec *json.Decoder) *Error {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err)
		}
		if tok != json.Delim('{') {
			return invalidField(field, "must be an object of strings")
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return syntaxError(err)
			}
			name, _ := tok.(string) // object keys are strings
			member := headerField(field, name)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return syntaxError(err)
			}
			s, e := stringField(member, v)
			if e != nil {
				return e
			}
			if _, dup := h[name]; dup {
				return invalidField(member, "appears twice")
			}
			if h == nil {
				h = make(map[string]string)
			}
			h[name] = s
		}
		_, err = dec.Token() // the closing brace
		if err != nil {
			return syntaxError(err)
		}
		return nil
	})
	return h, err
}

// headerField names one header of the headers member field as the library
// does (quoted, cut to the name limit): headers["x-y"].
func headerField(field, name string) string {
	q := strconv.Quote(name)
	if len(name) > worker.MaxHeaderNameLen {
		q = strconv.Quote(name[:worker.MaxHeaderNameLen]) + "…"
	}
	return field + "[" + q + "]"
}

// headersJSON and headersGo are the headers member's names in the two
// vocabularies: the library's Headers["x"] is the API's headers["x"].
const (
	headersGo   = "Headers"
	headersJSON = "headers"
)

// renameHeaders renames a header field from one vocabulary to the other
// (from "Headers" to "headers" or back); ok is false for any other field.
func renameHeaders(field, from, to string) (string, bool) {
	rest, ok := strings.CutPrefix(field, from)
	if !ok || (rest != "" && rest[0] != '[') {
		return "", false
	}
	return to + rest, true
}
