package script

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/seed-53d105c9/courier/lua"
)

// helperFiles are the files of helpers scripts share: the record codec
// and the common helpers, those of priorities and unique jobs, those of
// paging, of rate limits and of job keys. Every other .lua file is a
// script.
func helperFiles() []string {
	return []string{"record.lua", "options.lua", "paging.lua", "rate.lua", "keys.lua"}
}

// isHelperFile reports whether file (a name in package lua) holds helpers.
func isHelperFile(file string) bool { return slices.Contains(helperFiles(), file) }

// loadHelpers reads and parses the helper files, as one list: a name
// defined twice, in one file or in two, is an error.
func loadHelpers() ([]helper, error) {
	texts := make([]string, 0, len(helperFiles()))
	for _, f := range helperFiles() {
		b, err := fs.ReadFile(lua.Files, f)
		if err != nil {
			return nil, err
		}
		texts = append(texts, string(b))
	}
	// A blank line between files ends the last comment block of one.
	return parseHelpers(strings.Join(texts, "\n\n"))
}

// helper is one top-level definition of a helper file.
type helper struct {
	name string
	text string   // its comment and definition
	uses []string // the other helpers its definition names
}

// definition matches the line that starts a helper: "function name(" or
// "NAME = ".
var definition = regexp.MustCompile(`^(?:function ([A-Za-z_]\w*)\(|([A-Za-z_]\w*) = )`)

// parseHelpers splits the helpers file into its definitions, in file order.
// A definition runs from the comment above it to the comment above the next.
func parseHelpers(src string) ([]helper, error) {
	lines := strings.Split(src, "\n")
	var out []helper
	start := -1 // first line of the current definition's comment block
	commentFrom := -1
	for i, line := range lines {
		switch m := definition.FindStringSubmatch(line); {
		case m != nil:
			from := i
			if commentFrom >= 0 {
				from = commentFrom
			}
			if len(out) > 0 {
				out[len(out)-1].text = strings.Join(lines[start:from], "\n")
			}
			name := m[1] + m[2]
			if slices.ContainsFunc(out, func(h helper) bool { return h.name == name }) {
				return nil, fmt.Errorf("the helpers (%s): %s is defined twice", strings.Join(helperFiles(), ", "), name)
			}
			out = append(out, helper{name: name})
			start, commentFrom = from, -1
		case strings.HasPrefix(line, "--"):
			if commentFrom < 0 {
				commentFrom = i
			}
		case strings.TrimSpace(line) == "":
			commentFrom = -1 // a blank line ends a comment block
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the helper files (%s) define no helper", strings.Join(helperFiles(), ", "))
	}
	out[len(out)-1].text = strings.TrimRight(strings.Join(lines[start:], "\n"), "\n")
	for i := range out {
		out[i].uses = named(out[i].text, out, out[i].name)
	}
	return out, nil
}

// named returns the names of the helpers that code refers to, comments left
// out, except self.
func named(code string, helpers []helper, self string) []string {
	var out []string
	words := identifiers(code)
	for _, h := range helpers {
		if h.name != self && words[h.name] {
			out = append(out, h.name)
		}
	}
	return out
}

// identifierRE matches a Lua name.
var identifierRE = regexp.MustCompile(`[A-Za-z_]\w*`)

// identifiers returns the names code uses outside comments (a comment runs
// from "--" to the end of its line; no script has "--" inside a string).
func identifiers(code string) map[string]bool {
	words := map[string]bool{}
	for _, line := range strings.Split(code, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		for _, w := range identifierRE.FindAllString(line, -1) {
			words[w] = true
		}
	}
	return words
}

// assemble returns what is sent to Redis for the script body: body alone
// when it names no helper, else
//
//	local <helpers>; local function main() <line 1 of body>
//	<the other lines of body>
//	end
//	<the helpers' definitions>
//	return main()
//
// so that every line of body keeps its number. A first line starting with
// "#!" (Redis 7 script flags) stays first; the declaration goes on line 2.
func assemble(body string, helpers []helper) string {
	want := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if want[name] {
			return
		}
		want[name] = true
		for _, h := range helpers {
			if h.name == name {
				for _, u := range h.uses {
					visit(u)
				}
			}
		}
	}
	for _, name := range named(body, helpers, "") {
		visit(name)
	}
	if len(want) == 0 {
		return body
	}
	var names, defs []string
	for _, h := range helpers { // file order: a helper's text may rely on an earlier one's value
		if want[h.name] {
			names = append(names, h.name)
			defs = append(defs, h.text)
		}
	}
	shebang := ""
	if strings.HasPrefix(body, "#!") {
		line, rest, _ := strings.Cut(body, "\n")
		shebang, body = line+"\n", rest
	}
	return shebang + "local " + strings.Join(names, ", ") + "; local function main() " +
		strings.TrimRight(body, "\n") + "\nend\n" + strings.Join(defs, "\n") + "\nreturn main()\n"
}

// allowOOMLine is the flags line of AllowOOM scripts: Redis 7 runs them
// when it is out of memory.
const allowOOMLine = "#!lua flags=allow-oom"

// withFlags returns body with flags on its first line. The flags line
// takes the place of the file's first line, the start of its header
// comment, so that every line of code keeps its number (Redis counts the
// flags line as line 1).
func withFlags(body, flags string) (string, error) {
	first, rest, _ := strings.Cut(body, "\n")
	if !strings.HasPrefix(first, "--") {
		return "", fmt.Errorf("line 1 is %q, not the header's first comment line, which the flags line replaces", first)
	}
	return flags + "\n" + rest, nil
}

// sources reads the script called name from package lua and assembles it
// twice: flagged is what Redis gets (behind the flags line when oom is
// AllowOOM), plain the same without flags.
func sources(name string, oom OOM) (flagged, plain string, err error) {
	body, err := fs.ReadFile(lua.Files, name+".lua")
	if err != nil {
		return "", "", fmt.Errorf("script %s: %w", name, err)
	}
	if strings.HasPrefix(string(body), "#!") {
		return "", "", fmt.Errorf("script %s: the file has a flags line; the catalog (scripts.go) sets flags", name)
	}
	helpers, err := loadHelpers()
	if err != nil {
		return "", "", fmt.Errorf("script %s: %w", name, err)
	}
	plain = assemble(string(body), helpers)
	if oom != AllowOOM {
		return plain, plain, nil
	}
	flaggedBody, err := withFlags(string(body), allowOOMLine)
	if err != nil {
		return "", "", fmt.Errorf("script %s: %w", name, err)
	}
	return assemble(flaggedBody, helpers), plain, nil
}
