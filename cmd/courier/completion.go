package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// shells are the shells courier completion writes a script for.
var shells = []string{"bash", "zsh", "fish"}

// defineCompletion is courier completion bash|zsh|fish: a script that
// completes the commands, their actions and their flags, generated from
// the command table, so that it cannot drift from the commands.
func defineCompletion(fs *flag.FlagSet, _ string) runFunc {
	return func(ctx context.Context, std streams) error {
		if fs.NArg() != 1 || !slices.Contains(shells, fs.Arg(0)) {
			return usagef("name a shell: bash, zsh or fish")
		}
		tree := completionTree(ctx, commands())
		switch fs.Arg(0) {
		case "bash":
			writeBash(std.out, tree)
		case "zsh":
			writeZsh(std.out, tree)
		default:
			writeFish(std.out, tree)
		}
		return nil
	}
}

// compNode is a command, or an action of one, as completion sees it.
type compNode struct {
	name, summary string
	actions       []compNode // the words that must come next
	flags         []compFlag
	words         []string // other words it takes (completion: the shells)
}

// compFlag is a flag: whether it takes a value, whether a file, and the
// values it takes when they are few and known (choiceFlag).
type compFlag struct {
	name, usage string
	value, file bool
	choices     []string
}

// choice is a string flag of a few known values, which completion offers
// after it. It takes any text: the command checks the value, with a
// message of its own.
type choice struct {
	value   string
	choices []string
}

func (c *choice) String() string {
	if c == nil {
		return ""
	}
	return c.value
}

func (c *choice) Set(s string) error { c.value = s; return nil }

// choiceFlag defines a string flag that takes one of choices; completion
// offers them. A flag name has the same choices wherever it appears.
func choiceFlag(fs *flag.FlagSet, name, usage string, choices ...string) *string {
	c := &choice{choices: choices}
	fs.Var(c, name, usage)
	return &c.value
}

// completionTree is the command table as completion sees it, with help,
// which takes the commands, sorted.
func completionTree(ctx context.Context, cmds map[string]command) []compNode {
	var tree []compNode
	for _, name := range commandNames(cmds) {
		cmd := cmds[name]
		n := compNode{name: name, summary: cmd.summary}
		switch {
		case cmd.external != nil:
			n.flags = externalFlags(ctx, cmd.external)
		case len(cmd.actions) > 0:
			for _, a := range cmd.actions {
				n.actions = append(n.actions, compNode{name: a.name, summary: a.summary, flags: definedFlags(cmd, a.name)})
			}
		default:
			n.flags = definedFlags(cmd, "")
		}
		n.words = cmd.words
		tree = append(tree, n)
	}
	help := compNode{name: "help", summary: "print the commands, or a command's flags"}
	for _, n := range tree {
		help.actions = append(help.actions, compNode{name: n.name, summary: n.summary, actions: n.actions})
	}
	return append(tree, help)
}

// definedFlags are the flags cmd's define declares for action.
func definedFlags(cmd command, action string) []compFlag {
	fs := newFlagSet("")
	cmd.define(fs, action)
	var flags []compFlag
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		_, usage := flag.UnquoteUsage(f)
		cf := compFlag{name: f.Name, usage: usage, value: !ok || !b.IsBoolFlag(), file: isFileFlag(f.Name)}
		if c, ok := f.Value.(*choice); ok {
			cf.choices = c.choices
		}
		flags = append(flags, cf)
	})
	return flags
}

// isFileFlag reports whether flag name takes a file name.
func isFileFlag(name string) bool { return name == "config" || strings.HasSuffix(name, "-file") }

func flagWords(flags []compFlag) string {
	words := make([]string, len(flags))
	for i, f := range flags {
		words[i] = "--" + f.name
	}
	return strings.Join(words, " ")
}

func nodeNames(nodes []compNode) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.name
	}
	return strings.Join(names, " ")
}

// fileFlags lists, for a shell pattern, every flag of the tree that takes
// a file ("--config|--payload-file").
func fileFlags(tree []compNode) string {
	var names []string
	for _, f := range treeFlags(tree, func(f compFlag) bool { return f.file }) {
		names = append(names, "--"+f.name)
	}
	return strings.Join(names, "|")
}

// choiceFlags returns the flags of the tree that take known values
// (choiceFlag), each once, by name.
func choiceFlags(tree []compNode) []compFlag {
	return treeFlags(tree, func(f compFlag) bool { return len(f.choices) > 0 })
}

// treeFlags returns the flags of the tree that keep accepts, each name
// once (the first found), sorted by name.
func treeFlags(tree []compNode, keep func(compFlag) bool) []compFlag {
	var out []compFlag
	var walk func([]compNode)
	walk = func(nodes []compNode) {
		for _, n := range nodes {
			for _, f := range n.flags {
				if keep(f) && !slices.ContainsFunc(out, func(o compFlag) bool { return o.name == f.name }) {
					out = append(out, f)
				}
			}
			walk(n.actions)
		}
	}
	walk(tree)
	slices.SortFunc(out, func(a, b compFlag) int { return strings.Compare(a.name, b.name) })
	return out
}

// choiceCases is the shell case body, on the previous word, that offers
// the values of a choice flag; reply is the shell's command that offers
// the words of $cands.
func choiceCases(tree []compNode, indent, reply string) string {
	var b strings.Builder
	for _, f := range choiceFlags(tree) {
		fmt.Fprintf(&b, "%s--%s)\n%s\tcands=%q\n%s\t%s\n%s\treturn\n%s\t;;\n", indent, f.name, indent, strings.Join(f.choices, " "),
			indent, reply, indent, indent)
	}
	return b.String()
}

// completions is the shell case body that sets the variable cands to what
// may come at word index cword (the command is word 1): the actions at
// 2, else the flags of the command or action, else its other words.
func completions(tree []compNode, indent string) string {
	var b strings.Builder
	for _, n := range tree {
		fmt.Fprintf(&b, "%s%s)\n", indent, n.name)
		switch {
		case len(n.actions) > 0:
			fmt.Fprintf(&b, "%s\tif ((cword == 2)); then\n%s\t\tcands=%q\n%s\telse\n", indent, indent, nodeNames(n.actions), indent)
			fmt.Fprintf(&b, "%s\t\tcase $act in\n", indent)
			for _, a := range n.actions {
				words := flagWords(a.flags)
				if n.name == "help" {
					words = nodeNames(a.actions)
				}
				fmt.Fprintf(&b, "%s\t\t%s) cands=%q ;;\n", indent, a.name, words)
			}
			fmt.Fprintf(&b, "%s\t\tesac\n%s\tfi\n", indent, indent)
		case len(n.words) > 0:
			fmt.Fprintf(&b, "%s\t((cword == 2)) && cands=%q\n", indent, strings.Join(n.words, " "))
		default:
			fmt.Fprintf(&b, "%s\tcands=%q\n", indent, flagWords(n.flags))
		}
		fmt.Fprintf(&b, "%s\t;;\n", indent)
	}
	return b.String()
}

func writeBash(w io.Writer, tree []compNode) {
	fmt.Fprintf(w, `# bash completion for courier, generated by "courier completion bash".
# Install: courier completion bash > /etc/bash_completion.d/courier
#      or: echo 'source <(courier completion bash)' >> ~/.bashrc

_courier() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cword=$COMP_CWORD cmd=${COMP_WORDS[1]} act=${COMP_WORDS[2]} cands=
	if ((cword == 1)); then
		COMPREPLY=($(compgen -W %q -- "$cur"))
		return
	fi
	case $prev in
	%s)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
%s	esac
	case $cmd in
%s	esac
	COMPREPLY=($(compgen -W "$cands" -- "$cur"))
}
complete -F _courier courier
`, nodeNames(tree), fileFlags(tree), choiceCases(tree, "\t", `COMPREPLY=($(compgen -W "$cands" -- "$cur"))`), completions(tree, "\t"))
}

func writeZsh(w io.Writer, tree []compNode) {
	fmt.Fprintf(w, `#compdef courier
# zsh completion for courier, generated by "courier completion zsh".
# Install: courier completion zsh > "${fpath[1]}/_courier"  (then start a new shell)
#      or: echo 'source <(courier completion zsh)' >> ~/.zshrc  (after compinit)

_courier() {
	local cword=$((CURRENT - 1)) cmd=${words[2]} act=${words[3]} prev=${words[CURRENT-1]} cands=
	if ((cword == 1)); then
		cands=%q
	else
		case $prev in
		%s)
			_files
			return
			;;
%s		esac
		case $cmd in
%s		esac
	fi
	compadd -- ${=cands}
}

if [ "$funcstack[1]" = "_courier" ]; then
	_courier "$@"
else
	compdef _courier courier
fi
`, nodeNames(tree), fileFlags(tree), choiceCases(tree, "\t\t", "compadd -- ${=cands}"), completions(tree, "\t\t"))
}

func writeFish(w io.Writer, tree []compNode) {
	fmt.Fprintf(w, "# fish completion for courier, generated by \"courier completion fish\".\n")
	fmt.Fprintf(w, "# Install: courier completion fish > ~/.config/fish/completions/courier.fish\n\n")
	fmt.Fprintf(w, "complete -c courier -f\n")
	for _, n := range tree {
		fmt.Fprintf(w, "complete -c courier -n '__fish_use_subcommand' -a %s -d %s\n", n.name, fishQuote(n.summary))
	}
	for _, n := range tree {
		seen := "__fish_seen_subcommand_from " + n.name
		for _, word := range n.words {
			fmt.Fprintf(w, "complete -c courier -n '%s' -a %s\n", seen, word)
		}
		fishFlags(w, seen, n.flags)
		for _, a := range n.actions {
			noAction := seen + "; and not __fish_seen_subcommand_from " + nodeNames(n.actions)
			fmt.Fprintf(w, "complete -c courier -n '%s' -a %s -d %s\n", noAction, a.name, fishQuote(a.summary))
			if n.name != "help" {
				fishFlags(w, seen+"; and __fish_seen_subcommand_from "+a.name, a.flags)
			}
		}
	}
}

func fishFlags(w io.Writer, cond string, flags []compFlag) {
	for _, f := range flags {
		opts := ""
		switch {
		case f.file:
			opts = " -r -F"
		case len(f.choices) > 0:
			opts = " -r -a " + fishQuote(strings.Join(f.choices, " "))
		case f.value:
			opts = " -r"
		}
		fmt.Fprintf(w, "complete -c courier -n '%s' -l %s%s -d %s\n", cond, f.name, opts, fishQuote(firstSentence(f.usage)))
	}
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstSentence shortens a flag's usage for a description.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ";("); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}
