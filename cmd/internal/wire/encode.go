package wire

import (
	"encoding/json"
	"io"
)

// Encode writes v to w as JSON followed by a newline, without escaping
// HTML characters: a JSON payload goes out byte for byte as it came in
// (json.Marshal would turn its "<" into "\u003c", and a client reading
// the payload back would get other bytes).
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
