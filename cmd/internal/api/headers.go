package api

import (
	"bytes"
	"encoding/json"
	"strconv"

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
	name := func(key string) string { return headerField(field, key) }
	var h map[string]string
	err := readNamedObject(json.NewDecoder(bytes.NewReader(raw)), field+".", name, rawMember(func(key string, raw json.RawMessage) *Error {
		s, err := stringField(name(key), raw)
		if err != nil {
			return err
		}
		if h == nil {
			h = make(map[string]string)
		}
		h[key] = s
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return h, nil
}

// headerField names the header name of the headers member field for the
// API's own decoding errors (a value that is not a string, a name given
// twice) as worker/headers.go's quoteName does for the library's (quoted,
// cut to the name limit), so both read headers["x-y"].
func headerField(field, name string) string {
	q := strconv.Quote(name)
	if len(name) > worker.MaxHeaderNameLen {
		q = strconv.Quote(name[:worker.MaxHeaderNameLen]) + "…"
	}
	return field + "[" + q + "]"
}
