package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// report prints a mode's figures: the key=value line as it is, or with
// asJSON one JSON object of the same keys, in the same order, numbers as
// numbers.
func report(w io.Writer, line string, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprintln(w, line)
		return err
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields(line) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(f[0])
		b.Write(key)
		b.WriteByte(':')
		if _, err := strconv.ParseFloat(f[1], 64); err == nil && !strings.ContainsAny(f[1], "xXnN") {
			b.WriteString(f[1]) // a number as written: 1e-05, 20.63, 126851
		} else {
			val, _ := json.Marshal(f[1])
			b.Write(val)
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fields splits a key=value line into its pairs; a word without '=' (a
// value holding a space, such as "100 per 1s") belongs to the value before.
func fields(line string) [][2]string {
	var out [][2]string
	for _, word := range strings.Fields(line) {
		k, v, ok := strings.Cut(word, "=")
		if !ok && len(out) > 0 {
			out[len(out)-1][1] += " " + word
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out
}
