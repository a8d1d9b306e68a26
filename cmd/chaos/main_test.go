package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"extra"}, 2, `unexpected arguments ["extra"]`},
		{[]string{"-scenario", "daemon-kill9,nope"}, 1, `no scenario "nope" (have daemon-kill9, daemon-sigterm,`},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != c.code || !strings.Contains(errOut.String(), c.say) {
			t.Errorf("chaos %q: exit %d, stderr %q; want exit %d saying %q", c.args, code, errOut.String(), c.code, c.say)
		}
		if out.Len() != 0 {
			t.Errorf("chaos %q wrote to stdout: %q", c.args, out.String())
		}
	}
}
