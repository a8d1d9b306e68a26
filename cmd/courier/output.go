package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
)

// addJSONFlag adds --json: the command prints the shapes of cmd/internal/wire,
// as the HTTP API writes them, and a failure {"error": {...}} on stdout
// (see call.report).
func addJSONFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, `print JSON for machines: the HTTP API's shapes; on failure {"error": {"code", "message"}} on stdout`)
}

// writeJSON prints v as indented JSON, exact (a payload that is not
// compact JSON travels in payload_base64, byte for byte) and free of raw
// control characters (see jsonPrintable).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a JSON payload prints as it was stored
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonPrintable(buf.Bytes()))
	return err
}
