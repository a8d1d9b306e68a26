// The helpers in this file take apart the query text of dashboards and
// alert rules: the measures of an alert condition, Grafana variables and
// label_values queries, and the metric names a query uses.

package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMeasures: alertMeasures takes the measures out of alert conditions.
func TestMeasures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`histogram_quantile(0.95, sum by (queue, le) (rate(x_bucket[5m]))) > 30`,
			[]string{`histogram_quantile(0.95, sum by (queue, le) (rate(x_bucket[5m])))`}},
		{`max by (queue) (a) > 0 unless on (queue) max by (queue) (b) > 0`,
			[]string{`max by (queue) (a)`, `max by (queue) (b)`}},
		{`label_replace(sum by (lock) (increase(r{result=~"lost|error"}[10m])), "queue", "$1", "lock", "(.*):leader") > 0`,
			[]string{`label_replace(sum by (lock) (increase(r{result=~"lost|error"}[10m])), "queue", "$1", "lock", "(.*):leader")`}},
		{`(a > bool 1) and on (x) group_left () b`, []string{`a`, `b`}},
		{`courier_errors_total >= 2 or online_users < 1`, []string{`courier_errors_total`, `online_users`}},
		{`x{a!="b>c"} != 0`, []string{`x{a!="b>c"}`}},
		{`sum(rate(a[1m])) / sum(rate(b[1m]))`, []string{`sum(rate(a[1m])) / sum(rate(b[1m]))`}},
	} {
		if got := alertMeasures(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("alertMeasures(%s)\n got %q\nwant %q", tc.expr, got, tc.want)
		}
	}
}

// alertMeasures returns the measures an alert condition compares: the
// operands of its top-level comparison and set operators, without the
// numbers they are compared with. Alerts in configs/alerts.yml are written
// as `<measure> > <threshold>`, possibly two of them joined by `and` or
// `unless`: a healthy fleet leaves the condition empty, but each measure
// must return data, or the alert could never fire.
func alertMeasures(expr string) []string {
	var out []string
	for _, part := range splitTop(expr) {
		for {
			m := modifierRE.FindStringIndex(part)
			if m == nil {
				break
			}
			part = part[m[1]:]
		}
		part = strings.TrimSpace(part)
		if _, err := strconv.ParseFloat(part, 64); err == nil {
			continue // a threshold
		}
		if inner, ok := unwrapParens(part); ok {
			out = append(out, alertMeasures(inner)...)
			continue
		}
		out = append(out, part)
	}
	return out
}

// modifierRE matches what may follow a binary operator before its right
// operand.
var modifierRE = regexp.MustCompile(`^\s*(bool\b|(on|ignoring|group_left|group_right)\b\s*(\([^)]*\))?)`)

// splitTop splits a PromQL expression at its comparison and set operators
// outside parentheses, braces, brackets and strings.
func splitTop(expr string) []string {
	var parts []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if quote != 0 {
			switch {
			case c == '\\' && quote != '`':
				i++
			case c == quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'', '`':
			quote = c
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		}
		if depth != 0 {
			continue
		}
		if n := operatorAt(expr, i); n > 0 {
			parts = append(parts, expr[start:i])
			start = i + n
			i += n - 1
		}
	}
	return append(parts, expr[start:])
}

// operatorAt returns the length of the comparison or set operator at
// expr[i:], or 0.
func operatorAt(expr string, i int) int {
	for _, op := range []string{"==", "!=", ">=", "<=", ">", "<"} {
		if strings.HasPrefix(expr[i:], op) {
			return len(op)
		}
	}
	if i > 0 && isIdent(expr[i-1]) {
		return 0
	}
	for _, op := range []string{"and", "or", "unless"} {
		if end := i + len(op); strings.HasPrefix(expr[i:], op) && (end == len(expr) || !isIdent(expr[end])) {
			return len(op)
		}
	}
	return 0
}

func isIdent(c byte) bool {
	return c == '_' || c == ':' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// unwrapParens returns s without the parentheses around all of it.
func unwrapParens(s string) (string, bool) {
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	depth := 0
	for i := range len(s) {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i < len(s)-1 {
				return "", false // (a) + (b)
			}
		}
	}
	return s[1 : len(s)-1], true
}

var labelValuesRE = regexp.MustCompile(`^label_values\(([^,]+),\s*(\w+)\)$`)

var varRE = regexp.MustCompile(`\$(\w+)|\$\{(\w+)\}`)

// expandVars replaces Grafana variables in expr by their values.
func expandVars(expr string, vars map[string]string) (string, error) {
	var err error
	out := varRE.ReplaceAllStringFunc(expr, func(s string) string {
		m := varRE.FindStringSubmatch(s)
		name := m[1] + m[2]
		v, ok := vars[name]
		if !ok {
			err = fmt.Errorf("unknown variable $%s in %s", name, expr)
		}
		return v
	})
	return out, err
}

// metricNameRE matches the metric names the queries use.
var metricNameRE = regexp.MustCompile(`\b(?:courier|go|process)_[A-Za-z0-9_]*[A-Za-z0-9]`)
