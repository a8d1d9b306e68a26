package config

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
)

// Secret is a string that never prints: its String, GoString and LogValue
// say "[redacted]" (or "" when empty), so a logged or printed configuration
// leaks no password.
type Secret string

// Reveal returns the secret itself.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString implements fmt.GoStringer, for %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps secrets out of JSON and YAML renderings too.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// A key is secret when its field has type Secret or carries the struct tag
// secret:"true" (how a handler's settings mark theirs, see
// handlers.Decoder), and so is every key beneath a secret one: a map's
// values, a list's items, a section's keys. A problem under a secret key
// names the kind of value it found, never the value.

// secretTag is the struct tag that marks a field secret.
const secretTag = "secret"

// hiddenNote ends a message about a value under a secret key.
const hiddenNote = "; the value is not shown because this key holds a secret"

// isSecretField reports whether f marks its key secret. A tag other than
// "true" is a mistake in the settings type, found by the first test that
// decodes it.
func isSecretField(f reflect.StructField) bool {
	switch tag, ok := f.Tag.Lookup(secretTag); {
	case !ok:
		return f.Type == secretType
	case tag == "true":
		return true
	default:
		panic(fmt.Sprintf("config: field %s has tag secret:%q; the only value is \"true\"", f.Name, tag))
	}
}

// describe says what a value of the wrong type or form is, for the end of
// a message: with its value, or under a secret key by its kind only.
func describe(v any, secret bool) string {
	if secret {
		return kindOf(v) + hiddenNote
	}
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the text %q", v)
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case int, int64, uint64, float64:
		return fmt.Sprintf("the number %v", v)
	}
	return kindOf(v)
}

// kindOf names the kind of a raw value without showing it.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a section of keys"
	}
	return fmt.Sprintf("a %T", v)
}

// redactMin is the shortest secret blanked out of a handler's messages: a
// shorter one is no credential, and blanking it would garble the message.
const redactMin = 6

// secretsOf lists the text held under the secret keys of v, a decoded
// settings struct, for redact.
func secretsOf(v reflect.Value, secret bool, out *[]string) {
	switch v.Kind() {
	case reflect.String:
		if (secret || v.Type() == secretType) && len(v.String()) >= redactMin {
			*out = append(*out, v.String())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				secretsOf(v.Field(i), secret || isSecretField(v.Type().Field(i)), out)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			secretsOf(v.Index(i), secret, out)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			secretsOf(it.Value(), secret, out)
		}
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			secretsOf(v.Elem(), secret, out)
		}
	}
}

// redact blanks secrets out of the messages of an *Error: a handler's own
// validation should never repeat a secret setting, and if one does, the
// message still does not leave this package with it.
func redact(err error, secrets []string) error {
	if len(secrets) == 0 {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	out := &Error{Problems: make([]Problem, len(e.Problems))}
	for i, p := range e.Problems {
		out.Problems[i] = Problem{Key: blank(p.Key, secrets), Message: blank(p.Message, secrets)}
	}
	return out
}

// blank replaces each run of s covered by a secret with "[redacted]",
// whatever the ASCII case of its letters (a service may echo a key
// lower-cased, and hex and percent escapes ignore case). The secrets are
// all found in s before any is replaced: replacing them one by one would
// let a secret that contains, or overlaps, another show the part the
// first replacement left.
func blank(s string, secrets []string) string {
	var covered []bool
	folded := foldASCII(s) // indexes into it are indexes into s
	for _, secret := range secrets {
		secret = foldASCII(secret)
		for from := 0; secret != ""; {
			i := strings.Index(folded[from:], secret)
			if i < 0 {
				break
			}
			if covered == nil {
				covered = make([]bool, len(s))
			}
			start := from + i
			for j := start; j < start+len(secret); j++ {
				covered[j] = true
			}
			from = start + 1
		}
	}
	if covered == nil {
		return s
	}
	var b strings.Builder
	for i := range len(s) {
		switch {
		case !covered[i]:
			b.WriteByte(s[i])
		case i == 0 || !covered[i-1]:
			b.WriteString("[redacted]")
		}
	}
	return b.String()
}

// foldASCII lower-cases the ASCII letters of s and leaves every other
// byte, so that an index into the result is an index into s.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
