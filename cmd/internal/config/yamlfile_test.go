package config

import (
	"strings"
	"testing"
)

// TestYAMLSyntaxErrorLine: a syntax error names the line the mistake is
// on, where the YAML parser itself names the line before (or the one
// before the construct holding the mistake).
func TestYAMLSyntaxErrorLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want string // after "config file F: "
	}{
		{"key indented too little", "redis:\n  addr: [x:1]\n db: 2\nlog:\n  level: info\n",
			"line 3: did not find expected key"},
		{"key indented too little, deeper", "# comment\n\nqueues:\n  emails:\n    handler: log\n    concurrency: 2\n   timeout: 1m\n",
			"line 7: did not find expected key"},
		{"key indented too much", "redis:\n  addr: [x:1]\n  db: 2\n    prefix: a\nlog:\n  level: info\n",
			"line 4: mapping values are not allowed in this context"},
		{"unclosed list", "log:\n  level: info\nredis:\n  addr: [unclosed\nhttp:\n  addr: x:1\n",
			"line 4: did not find expected ',' or ']'"},
		{"unclosed section", "log:\n  level: info\nredis: {addr: x:1\nhttp:\n  addr: x:1\n",
			"line 3: did not find expected ',' or '}'"},
		{"unclosed quote", "log:\n  level: info\nredis:\n  prefix: 'abc\n  db: 1\n",
			"line 4: found unexpected end of stream"},
		{"tab", "log:\n  level: info\nredis:\n\taddr: x:1\n", "line 4: found character that cannot start any token"},
		{"key among list items", "log:\n  level: info\nredis:\n  addr:\n    - x:1\n    db: 1\n",
			"line 6: did not find expected '-' indicator"},
		{"duplicate key", "log:\n  level: info\nredis:\n  db: 1\n  db: 2\n", `line 5: mapping key "db" already defined at line 4`},
		{"not a mapping", "- a\n- b\n", "line 1: cannot unmarshal !!seq into map[string]interface {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.yaml)
			_, err := Load(Sources{File: path})
			if err == nil || IsProblem(err) {
				t.Fatalf("Load: %v; want a syntax error", err)
			}
			want := "config file " + path + ": " + tt.want
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Load:\n %v\nwant it to start with\n %s", err, want)
			}
		})
	}
}
