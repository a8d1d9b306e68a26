package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/worker"

	// The documentation's test blocks (docs/testing.md) use the test kit;
	// importing it here keeps it among the cmd module's requirements.
	_ "github.com/seed-53d105c9/courier/worker/workertest"
)

// The tests in this file hold the user documentation (README.md and
// docs/*.md) to the code: every Go block compiles, every YAML block loads
// as a configuration, every courier command line parses with the real
// command table (some run against courier dev),
// every relative link and #anchor resolves, every name of a public package
// the prose writes exists, every page opens with a table
// of contents of its sections, and the configuration page lists every field
// of worker.Config. A block that cannot be checked says why in a
// <!-- not checked: reason --> comment right above it.

// docsRoot is the repository, seen from cmd/courier.
const docsRoot = "../.."

// Markers written on the line right above a fenced block.
const (
	markFragment = "<!-- fragment -->"
	markRunDev   = "<!-- run against courier dev -->"
	markSkip     = "<!-- not checked: "
)

// maxUnchecked bounds the blocks marked as not checked, so that the mark
// stays the exception.
const maxUnchecked = 8

// docFile is one Markdown file of the documentation.
type docFile struct {
	path string // relative to docsRoot, slash-separated
	text string
}

// block is one fenced code block.
type block struct {
	file   string
	line   int    // of the opening fence, from 1
	lang   string // the fence's info string
	marker string // the line right above the fence, if it is a comment
	body   string
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docFiles reads README.md and docs/*.md.
func docFiles(t *testing.T) []docFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append([]string{filepath.Join(docsRoot, "README.md")}, paths...)
	var files []docFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(docsRoot, p)
		files = append(files, docFile{path: filepath.ToSlash(rel), text: string(b)})
	}
	return files
}

// blocks returns the fenced code blocks of f.
func (f docFile) blocks() []block {
	var out []block
	lines := strings.Split(f.text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		b := block{file: f.path, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(lines[i], "```"))}
		for j := i - 1; j >= 0; j-- {
			if s := strings.TrimSpace(lines[j]); s != "" {
				if strings.HasPrefix(s, "<!--") {
					b.marker = s
				}
				break
			}
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		b.body = strings.Join(body, "\n")
		out = append(out, b)
	}
	return out
}

// prose returns f without its fenced blocks and inline code, for links.
func (f docFile) prose() []string {
	var out []string
	in := false
	for _, l := range strings.Split(f.text, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			out = append(out, "")
			continue
		}
		if in {
			out = append(out, "")
			continue
		}
		out = append(out, inlineCode.ReplaceAllString(l, "``"))
	}
	return out
}

var inlineCode = regexp.MustCompile("`[^`]*`")

// TestDocsBlocksAreMarked: every Go block is a program, a marked fragment
// or marked as not checked; the not-checked marks stay few and give a
// reason.
func TestDocsBlocksAreMarked(t *testing.T) {
	t.Parallel()
	unchecked := 0
	for _, f := range docFiles(t) {
		for _, b := range f.blocks() {
			if strings.HasPrefix(b.marker, markSkip) {
				unchecked++
				if reason := strings.TrimSuffix(strings.TrimPrefix(b.marker, markSkip), "-->"); strings.TrimSpace(reason) == "" {
					t.Errorf("%s: a not-checked mark without a reason", b.where())
				}
				continue
			}
			if b.lang == "go" && !strings.HasPrefix(strings.TrimSpace(b.body), "package ") && b.marker != markFragment {
				t.Errorf("%s: a go block that is neither a program (package ...) nor marked %s or %s...-->", b.where(), markFragment, markSkip)
			}
		}
	}
	t.Logf("%d block(s) marked as not checked", unchecked)
	if unchecked > maxUnchecked {
		t.Errorf("%d blocks are marked as not checked, more than %d: check them instead", unchecked, maxUnchecked)
	}
}

// TestDocsGoCompiles builds every Go block of the documentation: a program
// as it is, a fragment inside a package of its own whose prelude declares
// what the documentation's snippets take for granted (ctx, rdb, client,
// ops, reg, mailer...). Imports are added from the packages a block names.
func TestDocsGoCompiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go build")
	}
	// A directory inside the cmd module, so that the blocks build against
	// this checkout of the library and the module's dependencies; its
	// leading underscore keeps it out of every ./... of other tools.
	root, err := os.MkdirTemp("..", "_doccheck-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	where := map[string]string{} // package directory -> block
	n := 0
	for _, f := range docFiles(t) {
		for _, b := range f.blocks() {
			if b.lang != "go" || strings.HasPrefix(b.marker, markSkip) {
				continue
			}
			n++
			dir := filepath.Join(root, fmt.Sprintf("b%03d", n))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			where[filepath.Base(dir)] = b.where()
			files, err := goPackage(b)
			if err != nil {
				t.Errorf("%s: %v", b.where(), err)
				continue
			}
			for name, src := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go block found in the documentation")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	pkgs := make([]string, 0, len(where))
	for dir := range where {
		pkgs = append(pkgs, "./"+filepath.Base(root)+"/"+dir)
	}
	sort.Strings(pkgs)
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", os.DevNull}, pkgs...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Logf("%d Go block(s) compiled", n)
		return
	}
	// Name each failing block by its place in the documentation.
	msg := string(out)
	for dir, w := range where {
		msg = strings.ReplaceAll(msg, filepath.Base(root)+"/"+dir+"/", w+" → ")
	}
	t.Errorf("the documentation's Go blocks do not compile:\n%s", msg)
}

// goPackage returns the files of the package that compiles b.
func goPackage(b block) (map[string]string, error) {
	if strings.HasPrefix(strings.TrimSpace(b.body), "package ") {
		src := regexp.MustCompile(`(?m)^package \w+`).ReplaceAllString(b.body, "package main")
		return map[string]string{"main.go": src}, nil
	}
	decls, stmts := splitFragment(b.body)
	src := "package doc\n\n" + decls + "\n"
	if strings.TrimSpace(stmts) != "" {
		names, err := definedNames(stmts)
		if err != nil {
			return nil, err
		}
		var uses strings.Builder
		for _, n := range names {
			fmt.Fprintf(&uses, "\t_ = %s\n", n)
		}
		src += "func _() error {\n" + stmts + "\n" + uses.String() + "\treturn nil\n}\n"
	}
	imports, err := importsOf(src)
	if err != nil {
		return nil, err
	}
	src = strings.Replace(src, "package doc\n", "package doc\n\n"+imports, 1)
	return map[string]string{"fragment.go": src, "prelude.go": prelude}, nil
}

// splitFragment separates a fragment's top-level declarations (type, func,
// var, const at the start of a line, to the closing brace or parenthesis
// at the start of a line) from its statements; import lines are dropped
// (importsOf adds them).
func splitFragment(body string) (decls, stmts string) {
	var d, s []string
	lines := strings.Split(body, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "import ("):
			for i < len(lines) && lines[i] != ")" {
				i++
			}
		case strings.HasPrefix(l, "import "):
		case strings.HasPrefix(l, "type "), strings.HasPrefix(l, "func "), strings.HasPrefix(l, "var "), strings.HasPrefix(l, "const "):
			d = append(d, l)
			if strings.HasSuffix(l, "{") || strings.HasSuffix(l, "(") {
				for i++; i < len(lines); i++ {
					d = append(d, lines[i])
					if lines[i] == "}" || lines[i] == ")" {
						break
					}
				}
			}
		default:
			s = append(s, l)
		}
	}
	return strings.Join(d, "\n"), strings.Join(s, "\n")
}

// definedNames returns the names the top-level statements of stmts
// define, so that the fragment can use each once (a snippet shows a
// result without using it).
func definedNames(stmts string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "fragment.go", "package doc\nfunc _() {\n"+stmts+"\n}\n", 0)
	if err != nil {
		return nil, fmt.Errorf("the fragment's statements do not parse: %w", err)
	}
	seen := map[string]bool{}
	var names []string
	add := func(id *ast.Ident) {
		if id.Name != "_" && !seen[id.Name] {
			seen[id.Name] = true
			names = append(names, id.Name)
		}
	}
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok {
				for _, sp := range g.Specs {
					if v, ok := sp.(*ast.ValueSpec); ok {
						for _, id := range v.Names {
							add(id)
						}
					}
				}
			}
		}
	}
	return names, nil
}

// docImports are the packages the documentation's fragments may name
// without importing them.
var docImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "io": "io", "log": "log", "os": "os",
	"strings": "strings", "time": "time", "json": "encoding/json", "http": "net/http", "slog": "log/slog",
	"signal": "os/signal", "syscall": "syscall", "testing": "testing", "debug": "runtime/debug",
	"rueidis":       "github.com/redis/rueidis",
	"worker":        "github.com/seed-53d105c9/courier/worker",
	"admin":         "github.com/seed-53d105c9/courier/worker/admin",
	"workertest":    "github.com/seed-53d105c9/courier/worker/workertest",
	"lock":          "github.com/seed-53d105c9/courier/worker/lock",
	"limiter":       "github.com/seed-53d105c9/courier/worker/limiter",
	"webhook":       "github.com/seed-53d105c9/courier/handlers/webhook",
	"otlptracehttp": "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
	"sdktrace":      "go.opentelemetry.io/otel/sdk/trace",
	"trace":         "go.opentelemetry.io/otel/trace",
}

// importsOf returns the import declaration of the packages src names.
func importsOf(src string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "fragment.go", src, 0)
	if err != nil {
		return "", fmt.Errorf("the fragment does not parse: %w", err)
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && docImports[id.Name] != "" {
				used[id.Name] = true
			}
		}
		return true
	})
	if len(used) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("import (\n")
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range used {
			if !yield(n) {
				return
			}
		}
	}) {
		path := docImports[name]
		if filepath.Base(path) == name {
			fmt.Fprintf(&b, "\t%q\n", path)
		} else {
			fmt.Fprintf(&b, "\t%s %q\n", name, path)
		}
	}
	b.WriteString(")\n")
	return b.String(), nil
}

// prelude declares what the documentation's fragments take for granted.
const prelude = `package doc

import (
	"context"
	"log/slog"

	"github.com/redis/rueidis"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

var (
	ctx    context.Context
	rdb    rueidis.Client
	client *worker.Client
	ops    *admin.Client
	reg    *worker.Registry
	logger *slog.Logger
	tp     *sdktrace.TracerProvider
	mailer interface {
		Send(ctx context.Context, to string) error
		TryLock(key string) bool
	}
	secret      []byte
	id          string
	body, reset []byte
	p           []byte
	specs       []worker.JobSpec
)

// Report is the payload of the documentation's report jobs.
type Report struct{ Customer int }

func resizeOne(ctx context.Context, img string) error              { return nil }
func renderPDF(ctx context.Context, r Report) (string, error)      { return "", nil }
func doWork(ctx context.Context)                                   {}
func renderFor(ctx context.Context, tenant string, payload []byte) error { return nil }
func audit(ctx context.Context, job *worker.Job) error { return nil }
func handle(id string, body []byte) error                          { return nil }
`

// TestDocsCommandsParse: every courier command line of a sh or console
// block names a command, an action and flags that exist; a line without
// placeholders ([...], a|b, ...) parses with the values it gives.
func TestDocsCommandsParse(t *testing.T) {
	t.Parallel()
	n := 0
	for _, f := range docFiles(t) {
		for _, b := range f.blocks() {
			if !isShell(b.lang) || strings.HasPrefix(b.marker, markSkip) {
				continue
			}
			for _, l := range commandLines(b) {
				n++
				if err := checkCommand(t.Context(), l.args, l.synopsis); err != nil {
					t.Errorf("%s:%d: %s: %v", b.file, l.line, strings.Join(l.args, " "), err)
				}
			}
		}
	}
	t.Logf("%d courier command line(s) checked", n)
	if n == 0 {
		t.Fatal("no courier command found in the documentation")
	}
}

// TestDocsCommandsRunAgainstDev runs the command lines of the blocks
// marked "run against courier dev" against a courier dev store, and
// requires each to succeed.
func TestDocsCommandsRunAgainstDev(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts courier dev")
	}
	var lines []cmdLine
	var where []string
	for _, f := range docFiles(t) {
		for _, b := range f.blocks() {
			if b.marker == markRunDev {
				for _, l := range commandLines(b) {
					lines = append(lines, l)
					where = append(where, fmt.Sprintf("%s:%d", b.file, l.line))
				}
			}
		}
	}
	if len(lines) == 0 {
		t.Fatal("no block is marked " + markRunDev)
	}
	dev := startCourier(t, nil, "dev", "--http-addr", "127.0.0.1:0", "--demo-jobs=false")
	store := dev.waitOutput(storeAddrRE, 20*time.Second)
	for i, l := range lines {
		args := make([]string, 0, len(l.args)+2)
		redis := false
		for _, a := range l.args {
			if strings.Contains(a, "127.0.0.1:PORT") {
				a = strings.ReplaceAll(a, "127.0.0.1:PORT", store)
				redis = true
			}
			args = append(args, a)
		}
		if !redis {
			args = append(args, "--redis", store)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		code, out, errOut := runCLI(t, ctx, args...)
		cancel()
		if code != exitOK {
			t.Errorf("%s: courier %s: exit %d\nstdout: %s\nstderr: %s", where[i], strings.Join(args, " "), code, out, errOut)
		}
	}
}

func isShell(lang string) bool {
	return lang == "sh" || lang == "console" || lang == "bash" || lang == "shell"
}

// cmdLine is one courier command of a block.
type cmdLine struct {
	line     int
	args     []string // after "courier"
	synopsis bool     // holds placeholders, or is shown refused: check names only
}

// commandLines returns the courier commands of a shell block: each line
// (continued by a trailing backslash), without a console prompt, comments,
// pipes and redirections, from the word courier (bin/courier, /courier)
// that is followed by a command name.
func commandLines(b block) []cmdLine {
	var out []cmdLine
	lines := strings.Split(b.body, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		l := lines[i]
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + lines[i]
		}
		if b.lang == "console" {
			var ok bool
			if l, ok = strings.CutPrefix(l, "$ "); !ok {
				continue // output
			}
		}
		words, synopsis := shellWords(l)
		cmds := commands()
		for j := 0; j+1 < len(words); j++ {
			w := words[j]
			if w != "courier" && w != "bin/courier" && w != "/courier" {
				continue
			}
			next := words[j+1]
			if _, ok := cmds[next]; !ok && next != "help" && next != "--version" {
				continue
			}
			// A line shown refused ("(exit 2)" in the comments below it)
			// is checked for its names only.
			for k := i + 1; k < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[k]), "#"); k++ {
				if strings.Contains(lines[k], "(exit 2)") {
					synopsis = true
				}
			}
			out = append(out, cmdLine{line: b.line + 1 + start, args: words[j+1:], synopsis: synopsis})
			break
		}
	}
	return out
}

// shellWords splits a shell line into words: quotes kept together and
// removed, $VAR and $(...) replaced by a placeholder value, the rest cut at
// a comment, a pipe, a redirection or a command separator. synopsis
// reports placeholders a real command line would not have.
func shellWords(l string) (words []string, synopsis bool) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(l[i+1:], c)
			if end < 0 {
				end = len(l) - i - 1
			}
			s := l[i+1 : i+1+end]
			if c == '"' {
				s = shellVar.ReplaceAllString(s, "x")
			}
			cur.WriteString(s)
			inWord = true
			i += end + 1
		case c == '$':
			m := shellVar.FindString(l[i:])
			if m == "" {
				m = "$"
			}
			cur.WriteString("x")
			inWord = true
			i += len(m) - 1
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord, c == '|' && !inWord, c == '>', c == '<', c == ';', c == '&':
			if c == '|' && i+1 < len(l) && l[i+1] != ' ' {
				synopsis = true // a|b
				cur.WriteByte(c)
				inWord = true
				continue
			}
			if c == '<' && i+1 < len(l) && l[i+1] == ' ' && strings.HasPrefix(strings.TrimSpace(l[i+1:]), "stdin") {
				synopsis = true
			}
			flush()
			return words, synopsis
		default:
			if c == '[' || c == '(' || c == '|' {
				synopsis = true
			}
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	for _, w := range words {
		if strings.Contains(w, "...") || strings.Contains(w, "…") {
			synopsis = true
		}
	}
	return words, synopsis
}

var shellVar = regexp.MustCompile(`^\$(\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*)|\$(\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*)`)

// checkCommand checks args (after "courier") against the command table.
func checkCommand(ctx context.Context, args []string, synopsis bool) error {
	cmds := commands()
	name := args[0]
	switch name {
	case "--version":
		return nil
	case "help":
		if len(args) > 1 {
			if _, ok := cmds[args[1]]; !ok {
				return fmt.Errorf("no command %q", args[1])
			}
		}
		return nil
	}
	cmd := cmds[name]
	rest := args[1:]
	if cmd.external != nil {
		known := map[string]bool{"h": true, "help": true}
		for _, f := range externalFlags(ctx, cmd.external) {
			known[f.name] = true
		}
		for _, f := range flagNames(rest) {
			if !known[f] {
				return fmt.Errorf("courier %s has no flag --%s", name, f)
			}
		}
		return nil
	}
	actions := []string{""}
	if len(cmd.actions) > 0 {
		if len(rest) == 0 {
			return fmt.Errorf("courier %s needs an action", name)
		}
		actions = strings.Split(strings.Trim(rest[0], "()[]"), "|")
		for _, a := range actions {
			if !slices.ContainsFunc(cmd.actions, func(x action) bool { return x.name == a }) {
				return fmt.Errorf("courier %s has no action %q", name, a)
			}
		}
		rest = rest[1:]
	}
	for _, act := range actions {
		fs := newFlagSet(name)
		fs.SetOutput(&bytes.Buffer{})
		cmd.define(fs, act)
		if synopsis {
			for _, f := range flagNames(rest) {
				if fs.Lookup(f) == nil {
					return fmt.Errorf("courier %s %s has no flag --%s", name, act, f)
				}
			}
			continue
		}
		if err := parse(fs, rest, cmd.words != nil); err != nil {
			return err
		}
		if cmd.words != nil {
			for _, w := range fs.Args() {
				if !slices.Contains(cmd.words, w) {
					return fmt.Errorf("courier %s takes %v, not %q", name, cmd.words, w)
				}
			}
		}
	}
	return nil
}

// flagNames returns the names of the flags words hold (--name, [--name,
// --name=value).
func flagNames(words []string) []string {
	var out []string
	for _, w := range words {
		w = strings.TrimLeft(w, "([")
		if !strings.HasPrefix(w, "-") || w == "-" {
			continue
		}
		name := strings.TrimLeft(w, "-")
		name, _, _ = strings.Cut(name, "=")
		name = strings.TrimRight(name, "])")
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// anchor returns GitHub's anchor of a heading.
func anchor(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool { return strings.ToUpper(string(r)) != strings.ToLower(string(r)) }

// headings returns the headings of f at each level, outside code blocks.
func (f docFile) headings() (all []string, sections []string) {
	in := false
	for _, l := range strings.Split(f.text, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if in || !strings.HasPrefix(l, "#") {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		h := strings.TrimSpace(l[level:])
		all = append(all, h)
		if level == 2 {
			sections = append(sections, h)
		}
	}
	return all, sections
}

// anchors returns the anchors of f's headings, numbered as GitHub numbers
// repeated ones.
func (f docFile) anchors() map[string]bool {
	all, _ := f.headings()
	seen := map[string]int{}
	out := map[string]bool{}
	for _, h := range all {
		a := anchor(h)
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link of the documentation names a
// file that exists and, into a Markdown file, a heading it has.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	files := docFiles(t)
	byPath := map[string]docFile{}
	for _, f := range files {
		byPath[f.path] = f
	}
	n := 0
	for _, f := range files {
		for i, l := range f.prose() {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				path, frag, _ := strings.Cut(target, "#")
				resolved := f.path
				if path != "" {
					resolved = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f.path), path)))
					if _, err := os.Stat(filepath.Join(docsRoot, resolved)); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", f.path, i+1, target, resolved)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(resolved, ".md") {
					continue
				}
				dest, ok := byPath[resolved]
				if !ok {
					b, err := os.ReadFile(filepath.Join(docsRoot, resolved))
					if err != nil {
						t.Fatal(err)
					}
					dest = docFile{path: resolved, text: string(b)}
				}
				if !dest.anchors()[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", f.path, i+1, target, resolved, frag)
				}
			}
		}
	}
	t.Logf("%d relative link(s) checked", n)
}

// TestDocsPagesOpenWithContents: each page of docs/ opens, before its
// first section, with a list of links to each of its ## sections, in
// order. docs/upgrading.md belongs to the release policy and is checked
// by its own owner.
func TestDocsPagesOpenWithContents(t *testing.T) {
	t.Parallel()
	for _, f := range docFiles(t) {
		if !strings.HasPrefix(f.path, "docs/") || f.path == "docs/upgrading.md" {
			continue
		}
		_, sections := f.headings()
		if len(sections) == 0 {
			t.Errorf("%s has no ## section", f.path)
			continue
		}
		first := strings.Index(f.text, "\n## ")
		var toc []string
		for _, m := range mdLink.FindAllStringSubmatch(f.text[:first], -1) {
			if strings.HasPrefix(m[1], "#") {
				toc = append(toc, m[1][1:])
			}
		}
		var want []string
		for _, s := range sections {
			want = append(want, anchor(s))
		}
		if !slices.Equal(toc, want) {
			t.Errorf("%s: the table of contents links %v, want its sections %v", f.path, toc, want)
		}
	}
}

// TestDocsConfigListsEveryField: the configuration page's table of
// worker.Config lists every field, and every key of the reference file.
func TestDocsConfigListsEveryField(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(docsRoot, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	typ := reflect.TypeFor[worker.Config]()
	var missing []string
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() && !strings.Contains(page, "| `"+f.Name+"` |") {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/configuration.md's worker.Config table lacks %v", missing)
	}
	keys := referenceKeys(t)
	missing = nil
	for _, k := range keys {
		if !strings.Contains(page, "| `"+k+"` |") {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/configuration.md's table of keys lacks %v (configs/courier.yaml has them)", missing)
	}
}

// referenceKeys returns the keys of configs/courier.yaml, queue names as
// <name> and periodic schedules as <schedule>; maps of free keys (headers,
// priority weights) count as one key.
func referenceKeys(t *testing.T) []string {
	t.Helper()
	var doc map[string]any
	readYAML(t, filepath.Join(docsRoot, "configs", "courier.yaml"), &doc)
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 || strings.HasSuffix(prefix, "headers") || strings.HasSuffix(prefix, "priority_weights") {
			parts := strings.Split(prefix, ".")
			if parts[0] == "queues" && len(parts) > 1 {
				parts[1] = "<name>"
				if len(parts) > 3 && parts[2] == "periodic" {
					parts[3] = "<schedule>"
				}
			}
			seen[strings.Join(parts, ".")] = true
			return
		}
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, x)
		}
	}
	walk("", doc)
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestDocsYAMLLoads loads every YAML block of the documentation as a
// configuration file, as courier run would: no key may be unknown or of
// the wrong type, and no value invalid. What a snippet cannot show is
// supplied (a queue when it has none), a snippet of a queue may leave out
// its handler and URL, and a few problems of the machine running the test
// are forgiven: a token file or variable that is not there, a certificate
// file that does not exist.
func TestDocsYAMLLoads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	for _, f := range docFiles(t) {
		for _, b := range f.blocks() {
			if b.lang != "yaml" || strings.HasPrefix(b.marker, markSkip) {
				continue
			}
			n++
			text := b.body
			if !regexp.MustCompile(`(?m)^queues:`).MatchString(text) {
				text += "\nqueues:\n  docs: {handler: log}\n"
			}
			path := filepath.Join(dir, fmt.Sprintf("b%03d.yaml", n))
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.LoadFull(config.Sources{File: path})
			var ce *config.Error
			if err != nil && !errors.As(err, &ce) {
				t.Errorf("%s: %v", b.where(), err)
				continue
			}
			if ce == nil {
				continue
			}
			for _, p := range ce.Problems {
				partial := partialQueue.MatchString(p.Key) && strings.HasPrefix(p.Message, "is required")
				if !partial && !forgivenProblem.MatchString(p.Message) {
					t.Errorf("%s: %s: %s", b.where(), p.Key, p.Message)
				}
			}
		}
	}
	t.Logf("%d YAML block(s) loaded", n)
}

// forgivenProblem matches the problems of a snippet that names files and
// variables of another machine.
var forgivenProblem = regexp.MustCompile(`no such file or directory|is not set|is empty`)

// partialQueue matches the keys a snippet of one queue's settings may
// leave out.
var partialQueue = regexp.MustCompile(`^queues\.[^.]+\.(handler|webhook\.url)$`)

// docPackages are the public packages the documentation names, by the
// name it writes them with.
var docPackages = map[string]string{
	"worker":    "worker",
	"admin":     "worker/admin",
	"lock":      "worker/lock",
	"limiter":   "worker/limiter",
	"rediskeys": "worker/rediskeys",
	"webhook":   "handlers/webhook",
	"logjob":    "handlers/logjob",
	// the test kit, a module of its own that the cmd module requires for
	// the documentation's test blocks (the import above)
	"workertest": "worker/workertest",
}

var docName = regexp.MustCompile(`\b(worker|admin|lock|limiter|rediskeys|webhook|logjob|workertest)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// TestDocsNamesExist: every name of a public package the documentation
// writes (worker.ErrDuplicate, admin.Client.Cancel, JobSpec fields...)
// exists, so that prose cannot go on naming what was renamed or moved.
func TestDocsNamesExist(t *testing.T) {
	t.Parallel()
	names := map[string]map[string]bool{} // package -> Name and Type.Member
	for short, dir := range docPackages {
		names[short] = exportedNames(t, filepath.Join(docsRoot, dir))
	}
	n := 0
	for _, f := range docFiles(t) {
		for i, l := range strings.Split(f.text, "\n") {
			for _, m := range docName.FindAllStringSubmatch(l, -1) {
				n++
				pkg, name, member := m[1], m[2], m[3]
				if !names[pkg][name] {
					t.Errorf("%s:%d: %s.%s does not exist", f.path, i+1, pkg, name)
					continue
				}
				if member != "" && names[pkg]["type "+name] && !names[pkg][name+"."+member] {
					t.Errorf("%s:%d: %s.%s has no field or method %s", f.path, i+1, pkg, name, member)
				}
			}
		}
	}
	t.Logf("%d name(s) of the public packages checked", n)
}

// exportedNames returns the exported names of the package in dir (test
// files left out): each top-level name, "type T" for each type, and
// "T.M" for each method and struct field of T.
func exportedNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if ix, ok := recv.(*ast.IndexExpr); ok {
					recv = ix.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					out[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.ValueSpec:
						for _, id := range sp.Names {
							out[id.Name] = true
						}
					case *ast.TypeSpec:
						out[sp.Name.Name] = true
						out["type "+sp.Name.Name] = true
						addMembers(out, sp)
					}
				}
			}
		}
	}
	return out
}

// addMembers records the fields of a struct type and the methods of an
// interface type; an alias's members are not known here, so any is taken.
func addMembers(out map[string]bool, sp *ast.TypeSpec) {
	switch typ := sp.Type.(type) {
	case *ast.StructType:
		for _, fl := range typ.Fields.List {
			for _, id := range fl.Names {
				out[sp.Name.Name+"."+id.Name] = true
			}
			if len(fl.Names) == 0 { // embedded
				if id, ok := fl.Type.(*ast.Ident); ok {
					out[sp.Name.Name+"."+id.Name] = true
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range typ.Methods.List {
			for _, id := range m.Names {
				out[sp.Name.Name+"."+id.Name] = true
			}
		}
	default:
		if sp.Assign.IsValid() {
			delete(out, "type "+sp.Name.Name) // an alias: members unknown
		}
	}
}
