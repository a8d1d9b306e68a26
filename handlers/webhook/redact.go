package webhook

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// redactMin is the shortest secret (a header value, a path segment, a
// credential inside a header value) kept out of error messages in every
// form: a shorter one cannot be a credential worth the name, and blanking
// it wherever it appears would garble the messages. A signing key that
// short is still blanked as given from response bodies.
const redactMin = 8

// redactedMark stands for a blanked secret.
const redactedMark = "[redacted]"

// redactor blanks secrets out of text, in the forms a receiver or a
// library may echo them: as given, in another letter case, after an
// authentication scheme, and percent-, base64- or hex-encoded.
type redactor struct {
	folded []string // each form, in ASCII lower case; no duplicates
	// short are signing keys shorter than redactMin, blanked only as
	// given and only from response bodies, as the handler always did.
	short []string
}

// addKey adds the signing key.
func (r *redactor) addKey(key string) {
	if key != "" && len(key) < redactMin {
		r.short = append(r.short, key)
	}
	r.addSecret(key)
}

// addSecret adds a value that is a secret in full, such as a header value,
// with the secrets inside it. A value shorter than redactMin is not
// blanked in any form.
func (r *redactor) addSecret(v string) {
	for _, base := range credentials(v) {
		r.addEncoded(base)
	}
}

// addPath adds the path of a URL that is a credential (Settings.PathSecret):
// the whole path, and each segment of at least redactMin bytes.
func (r *redactor) addPath(u *url.URL) {
	r.addEncoded(strings.Trim(u.Path, "/"))
	r.addEncoded(strings.Trim(u.EscapedPath(), "/"))
	for seg := range strings.SplitSeq(u.Path, "/") {
		r.addEncoded(seg)
	}
}

// with returns a copy of r that also blanks the path of u.
func (r redactor) with(u *url.URL) redactor {
	r.folded = slices.Clone(r.folded)
	r.addPath(u)
	return r
}

// credentials returns v and the secrets inside it: after an authentication
// scheme ("Bearer abc" holds "abc"), and, for Basic, the decoded
// "user:password", the password, and the user, which is the credential
// itself for services that take an API key as the user name.
func credentials(v string) []string {
	out := []string{v}
	scheme, rest, ok := strings.Cut(v, " ")
	if !ok || !httpguts.ValidHeaderFieldName(scheme) { // the scheme is an RFC 9110 token
		return out
	}
	rest = strings.TrimLeft(rest, " ")
	out = append(out, rest)
	if !strings.EqualFold(scheme, "basic") {
		return out
	}
	dec, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return out
	}
	out = append(out, string(dec))
	if user, password, ok := strings.Cut(string(dec), ":"); ok {
		out = append(out, user, password)
	}
	return out
}

// addEncoded adds v and its encodings, if v is at least redactMin long.
func (r *redactor) addEncoded(v string) {
	if len(v) < redactMin {
		return
	}
	b := []byte(v)
	for _, form := range []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b),
	} {
		r.addForm(form)
	}
}

func (r *redactor) addForm(form string) {
	if f := foldASCII(form); !slices.Contains(r.folded, f) {
		r.folded = append(r.folded, f)
	}
}

// redact replaces each run of text covered by a secret's form with
// "[redacted]". Letters match whatever their ASCII case, since hex, percent
// escapes and many tokens are case-insensitive, and a receiver may echo a
// token lower-cased. Every match is found in the original text before any
// is replaced, so that forms overlapping one another are all blanked.
func (r redactor) redact(s string) string {
	if len(r.folded) == 0 || s == "" {
		return s
	}
	folded := foldASCII(s)
	var covered []bool
	for _, f := range r.folded {
		for from := 0; ; {
			i := strings.Index(folded[from:], f)
			if i < 0 {
				break
			}
			if covered == nil {
				covered = make([]bool, len(s))
			}
			start := from + i
			for j := start; j < start+len(f); j++ {
				covered[j] = true
			}
			from = start + 1
		}
	}
	if covered == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case !covered[i]:
			b.WriteByte(s[i])
		case i == 0 || !covered[i-1]:
			b.WriteString(redactedMark)
		}
	}
	return b.String()
}

// redactBody is redact for a response body, where a short signing key is
// blanked too: a receiver may echo the key it expected.
func (r redactor) redactBody(s string) string {
	s = r.redact(s)
	for _, key := range r.short {
		s = strings.ReplaceAll(s, key, redactedMark)
	}
	return s
}

// foldASCII lower-cases the ASCII letters of s and leaves every other byte,
// so that an index into the result is an index into s.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
