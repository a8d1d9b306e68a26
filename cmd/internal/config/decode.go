package config

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	Key     string // the dotted key, e.g. "queues.emails.concurrency"
	Message string
}

// Error lists every problem found in a configuration, sorted by key.
type Error struct {
	Problems []Problem
}

// Error implements error: one "key: message" line per problem, without
// credentials (scrub.go).
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Key + ": " + scrubCredentials(p.Message)
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems while decoding and validating.
type problems []Problem

func (ps *problems) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

// has reports whether a problem with key was found already.
func (ps problems) has(key string) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Key == key })
}

// err returns nil or an *Error with the problems sorted by key, each once.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	sorted := slices.Clone(ps)
	slices.SortStableFunc(sorted, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return &Error{Problems: slices.Compact(sorted)}
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	secretType   = reflect.TypeFor[Secret]()
	queueType    = reflect.TypeFor[Queue]()
)

// decode stores raw, a value from the merged configuration layers, into dst,
// strictly: unknown keys and wrong types become problems naming key. Absent
// (nil) values leave dst as it was, so defaults survive. Strings are accepted
// for numbers, booleans and durations because environment variables and
// flags arrive as text; a string is split on commas for a list. Under a
// secret key (see isSecretField) a problem names the kind of value found,
// never the value.
func decode(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	if raw == nil {
		return
	}
	t := dst.Type()
	secret = secret || t == secretType
	switch {
	case t == durationType:
		decodeDuration(key, raw, dst, secret, ps)
	case t.Kind() == reflect.String:
		s, ok := raw.(string)
		switch {
		case ok:
			dst.SetString(s)
		case secret:
			ps.add(key, "expected text, got %s — quote it", describe(raw, true))
		default:
			ps.add(key, "expected text, got %s (quote the value)", describe(raw, false))
		}
	case t.Kind() == reflect.Bool:
		decodeBool(key, raw, dst, secret, ps)
	case t.Kind() == reflect.Int:
		decodeInt(key, raw, dst, secret, ps)
	case t.Kind() == reflect.Slice:
		decodeSlice(key, raw, dst, secret, ps)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		decodeMap(key, raw, dst, secret, ps)
	case t.Kind() == reflect.Struct:
		decodeStruct(key, raw, dst, secret, ps)
	case t.Kind() == reflect.Interface:
		dst.Set(reflect.ValueOf(raw))
	default:
		panic(fmt.Sprintf("config: field %s has unsupported type %s", key, t))
	}
}

func decodeDuration(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	const want = "expected a duration such as 30s, 5m or 1h30m, got "
	s, ok := raw.(string)
	if !ok {
		ps.add(key, want+"%s", describe(raw, secret))
		return
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		ps.add(key, want+"%s", describe(raw, secret))
		return
	}
	dst.SetInt(int64(d))
}

func decodeBool(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	switch v := raw.(type) {
	case bool:
		dst.SetBool(v)
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			ps.add(key, "expected true or false, got %s", describe(raw, secret))
			return
		}
		dst.SetBool(b)
	default:
		ps.add(key, "expected true or false, got %s", describe(raw, secret))
	}
}

func decodeInt(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	tooLarge := func(n any) {
		if secret {
			ps.add(key, "is too large%s", hiddenNote)
			return
		}
		ps.add(key, "%d is too large", n)
	}
	var n int64
	switch v := raw.(type) {
	case int:
		n = int64(v)
	case int64:
		n = v
	case uint64:
		if v > math.MaxInt64 {
			tooLarge(v)
			return
		}
		n = int64(v)
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			ps.add(key, "expected a whole number, got %s", describe(raw, secret))
			return
		}
		n = int64(v)
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			ps.add(key, "expected a whole number, got %s", describe(raw, secret))
			return
		}
		n = i
	default:
		ps.add(key, "expected a whole number, got %s", describe(raw, secret))
		return
	}
	if dst.OverflowInt(n) {
		tooLarge(n)
		return
	}
	dst.SetInt(n)
}

func decodeSlice(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	var items []any
	switch v := raw.(type) {
	case []any:
		items = v
	case string:
		if dst.Type().Elem().Kind() == reflect.Struct {
			// A list of sections (admin.tokens) has no text form; the
			// text is not echoed, as it may hold a secret.
			hint := ""
			if key == "admin.tokens" {
				hint = " (a token's secret can come from a file or a variable: token_file, token_env)"
			}
			ps.add(key, "is a list of sections: set it in the configuration file%s", hint)
			return
		}
		for part := range strings.SplitSeq(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				items = append(items, part)
			}
		}
	default:
		ps.add(key, "expected a list, got %s", describe(raw, secret))
		return
	}
	out := reflect.MakeSlice(dst.Type(), len(items), len(items))
	for i, item := range items {
		if item == nil {
			ps.add(fmt.Sprintf("%s[%d]", key, i), "is empty")
			continue
		}
		decode(fmt.Sprintf("%s[%d]", key, i), item, out.Index(i), secret, ps)
	}
	dst.Set(out)
}

func decodeMap(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	m, ok := raw.(map[string]any)
	if !ok {
		ps.add(key, "expected a map of keys to values, got %s", describe(raw, secret))
		return
	}
	t := dst.Type()
	if dst.IsNil() {
		dst.Set(reflect.MakeMapWithSize(t, len(m)))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		elem := reflect.New(t.Elem()).Elem()
		if old := dst.MapIndex(reflect.ValueOf(k)); old.IsValid() {
			elem.Set(old)
		} else if t.Elem() == queueType {
			elem.Set(reflect.ValueOf(QueueDefault()))
		}
		decode(key+"."+k, m[k], elem, secret, ps)
		dst.SetMapIndex(reflect.ValueOf(k), elem)
	}
}

// decodeStruct decodes a section. Its unknown keys are named, with the
// known ones, even under a secret key: keys are not secrets.
func decodeStruct(key string, raw any, dst reflect.Value, secret bool, ps *problems) {
	m, ok := raw.(map[string]any)
	if !ok {
		ps.add(key, "expected a section of keys, got %s", describe(raw, secret))
		return
	}
	t := dst.Type()
	var remain reflect.Value
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, opt, _ := strings.Cut(t.Field(i).Tag.Get("koanf"), ",")
		switch {
		case opt == "remain":
			remain = dst.Field(i)
		case name != "" && name != "-":
			fields[name] = i
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		sub := join(key, k)
		if i, ok := fields[k]; ok {
			decode(sub, m[k], dst.Field(i), secret || isSecretField(t.Field(i)), ps)
			continue
		}
		if remain.IsValid() {
			if remain.IsNil() {
				remain.Set(reflect.MakeMap(remain.Type()))
			}
			remain.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(m[k]))
			continue
		}
		ps.add(sub, "unknown key%s", suggest(k, slices.Collect(maps.Keys(fields))))
	}
}

// suggest names the known keys close to an unknown one (a typo costs a
// start), or, when none is close, lists them all.
func suggest(k string, known []string) string {
	if near := closeTo(k, known); near != "" {
		return " (did you mean " + near + "?)"
	}
	return " (known here: " + strings.Join(slices.Sorted(slices.Values(known)), ", ") + ")"
}

// closeTo returns the names of known close to k, quoted and joined by
// "or"; "" when none is.
func closeTo(k string, known []string) string {
	var near []string
	for _, name := range known {
		if strings.Contains(name, k) || strings.Contains(k, name) || editDistance(k, name) <= max(1, len(k)/3) {
			near = append(near, strconv.Quote(name))
		}
	}
	slices.Sort(near)
	return strings.Join(near, " or ")
}

// editDistance counts the edits from a to b: inserting, deleting or
// changing a character, or swapping two neighbours (redsi, redis).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func join(key, sub string) string {
	if key == "" {
		return sub
	}
	return key + "." + sub
}
