package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// readYAMLFile reads the configuration file as nested maps. A syntax error
// names the line the problem is on: "config file F: line N: message".
func readYAMLFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the file the operator asked for
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("config file %s: %s", path, yamlProblem(data, err))
	}
	return out, nil
}

// yamlLine is the "yaml: line N: " start of a syntax error.
var yamlLine = regexp.MustCompile(`^yaml: (?:line \d+: )?`)

// yamlProblem words a YAML error as "line N: message". The parser's own
// line number is unreliable: it names the line before the construct that
// holds the mistake, or one line short (a bad indent at line 3 is "line
// 2"). The first prefix of the document that fails with the very same
// error ends on the line where the parser met the mistake, so that line is
// the one named. Type errors (a duplicate key, a list at the top) carry
// correct lines and are kept as they are.
func yamlProblem(data []byte, err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	msg := yamlLine.ReplaceAllString(err.Error(), "")
	line, end := 0, 0
	for end < len(data) {
		line++
		if i := bytes.IndexByte(data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(data)
		}
		var probe map[string]any
		if perr := yaml.Unmarshal(data[:end], &probe); perr != nil && perr.Error() == err.Error() {
			return fmt.Sprintf("line %d: %s", line, msg)
		}
	}
	return err.Error() // not reproduced by any prefix: the parser's words
}
