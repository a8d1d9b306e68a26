package config

import (
	"reflect"
	"slices"
	"strings"

	"github.com/seed-53d105c9/courier/handlers"
)

// NonConfigVariables are the COURIER_* variables that are not
// configuration, so that Load passes them by without a warning: the
// client commands' --api mode (COURIER_API, COURIER_TOKEN) and the tests'
// (COURIER_TEST_*, a prefix). A variable a token_env names is passed by
// too.
var NonConfigVariables = []string{"COURIER_API", "COURIER_TOKEN", "COURIER_TEST_*"}

// envLayer is the configuration the COURIER_* variables set.
type envLayer struct {
	tree map[string]any
	// vars maps each dotted key set to the variable that set it.
	vars map[string]string
	// unread are the variables that set nothing, with the reason (the
	// start of a warning), in the order of the environment; a token_env
	// may still claim one.
	unread []unreadVar
}

type unreadVar struct{ name, why string }

// readEnv reads the COURIER_* variables of environ, "KEY=value" strings:
// COURIER_QUEUES__EMAILS__MAX_ATTEMPTS is queues.emails.max_attempts. A
// variable without a double underscore, or empty, sets nothing.
func readEnv(environ []string) envLayer {
	l := envLayer{tree: map[string]any{}, vars: map[string]string{}}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		rest, isOurs := strings.CutPrefix(name, EnvPrefix)
		if !ok || !isOurs || nonConfig(name) {
			continue
		}
		switch {
		case !strings.Contains(rest, "__"):
			l.unread = append(l.unread, unreadVar{name, oneUnderscore(name, rest)})
		case value == "":
			l.unread = append(l.unread, unreadVar{name, name + " is empty, so it sets nothing (an empty variable does not clear a key); give it a value or unset it"})
		default:
			path := strings.Split(strings.ToLower(rest), "__")
			if !setPath(l.tree, path, value) {
				l.unread = append(l.unread, unreadVar{name, name + " sets nothing: another variable sets a key beneath " + strings.Join(path, ".")})
				continue
			}
			l.vars[strings.Join(path, ".")] = name
		}
	}
	return l
}

// warnings words the variables that set nothing, leaving out those claimed
// (the variables of token_env).
func (l envLayer) warnings(claimed map[string]bool) []string {
	var out []string
	for _, u := range l.unread {
		if !claimed[u.name] {
			out = append(out, u.why)
		}
	}
	return out
}

func nonConfig(name string) bool {
	return slices.ContainsFunc(NonConfigVariables, func(v string) bool {
		if p, ok := strings.CutSuffix(v, "*"); ok {
			return strings.HasPrefix(name, p)
		}
		return name == v
	})
}

// setPath stores value at path in tree, making sections on the way; false
// when a value already sits where a section must go, or the reverse.
func setPath(tree map[string]any, path []string, value string) bool {
	for _, seg := range path[:len(path)-1] {
		next, exists := tree[seg]
		if !exists {
			m := map[string]any{}
			tree[seg], next = m, m
		}
		m, ok := next.(map[string]any)
		if !ok {
			return false
		}
		tree = m
	}
	if _, ok := tree[path[len(path)-1]].(map[string]any); ok {
		return false
	}
	tree[path[len(path)-1]] = value
	return true
}

// oneUnderscore words the warning for a variable without a double
// underscore, suggesting the variable that names a key when single
// underscores can be read as levels: COURIER_REDIS_ADDR, did you mean
// COURIER_REDIS__ADDR?
func oneUnderscore(name, rest string) string {
	if path := matchKey(reflect.TypeFor[Config](), strings.ToLower(rest)); path != nil {
		return name + " sets nothing: did you mean " + EnvPrefix + strings.ToUpper(strings.Join(path, "__")) +
			"? (a double underscore separates the levels of a key)"
	}
	return name + " sets nothing: it has no double underscore, so it names no key (configuration variables look like " +
		"COURIER_REDIS__ADDR; the other COURIER_ variables Courier knows: " + strings.Join(NonConfigVariables, ", ") + ")"
}

// matchKey splits s, a key whose levels are joined by single underscores,
// into the levels of a key of t, or returns nil.
func matchKey(t reflect.Type, s string) []string {
	switch {
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			name, opt, _ := strings.Cut(t.Field(i).Tag.Get("koanf"), ",")
			if name == "" || opt == "remain" {
				continue
			}
			if s == name {
				return []string{name}
			}
			if rest, ok := strings.CutPrefix(s, name+"_"); ok {
				if p := matchKey(t.Field(i).Type, rest); p != nil {
					return append([]string{name}, p...)
				}
			}
		}
		if t == queueType {
			for _, h := range handlers.Names() {
				if rest, ok := strings.CutPrefix(s, h+"_"); ok && rest != "" {
					return []string{h, rest} // the handler's settings, taken on trust
				}
			}
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		if t.Elem().Kind() != reflect.Struct {
			return []string{s}
		}
		// The keys are names (queues, schedules) that may hold
		// underscores: try each one as the end of the name.
		for i := strings.IndexByte(s, '_'); i > 0; i = nextUnderscore(s, i) {
			if p := matchKey(t.Elem(), s[i+1:]); p != nil {
				return append([]string{s[:i]}, p...)
			}
		}
	}
	return nil
}

func nextUnderscore(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '_')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
