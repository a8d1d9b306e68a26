package config

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// The tracing headers (an API key, say) are secrets, but the exporter's
// errors can repeat them: a collector that refuses a request often echoes
// what it got, and the exporter puts the response's body in its error,
// which courier then logs.

// The OTEL_* variables of the exporter's headers, as the exporter reads
// them: "name=value,name=value", values percent-encoded.
const (
	envTracesHeaders = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	envHeaders       = "OTEL_EXPORTER_OTLP_HEADERS"
)

// Redactor returns a function that blanks the values of the headers the
// exporter sends out of a text (an export error, before it is logged):
// tracing.headers, or without them the values of
// OTEL_EXPORTER_OTLP_TRACES_HEADERS and OTEL_EXPORTER_OTLP_HEADERS as
// getenv reads them; each as given, in any ASCII letter case, after an
// authentication scheme ("Bearer <key>"), and percent- or base64-encoded.
// Values shorter than 6 bytes are no credentials and are left.
func (t *Tracing) Redactor(getenv func(string) string) func(string) string {
	var values []string
	if len(t.Headers) > 0 {
		for _, v := range t.Headers {
			values = append(values, v.Reveal())
		}
	} else {
		for _, name := range []string{envTracesHeaders, envHeaders} {
			values = append(values, envHeaderValues(getenv(name))...)
		}
	}
	var forms []string
	for _, v := range values {
		forms = append(forms, secretForms(v)...)
	}
	return func(s string) string { return blank(s, forms) }
}

// envHeaderValues are the values of an OTEL_* headers variable,
// "name=value,…", each as given and percent-decoded.
func envHeaderValues(raw string) []string {
	var out []string
	for pair := range strings.SplitSeq(raw, ",") {
		_, v, ok := strings.Cut(pair, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		out = append(out, v)
		if dec, err := url.PathUnescape(v); err == nil && dec != v {
			out = append(out, dec)
		}
	}
	return out
}

// secretForms are the forms in which a header value v may be repeated:
// itself, the credential after its scheme, and their percent and base64
// encodings; none shorter than redactMin.
func secretForms(v string) []string {
	bases := []string{v}
	if scheme, rest, ok := strings.Cut(v, " "); ok && scheme != "" {
		bases = append(bases, strings.TrimLeft(rest, " "))
	}
	var out []string
	for _, b := range bases {
		if len(b) < redactMin {
			continue
		}
		out = append(out, b, url.QueryEscape(b), url.PathEscape(b),
			base64.StdEncoding.EncodeToString([]byte(b)), base64.RawStdEncoding.EncodeToString([]byte(b)),
			base64.URLEncoding.EncodeToString([]byte(b)), base64.RawURLEncoding.EncodeToString([]byte(b)))
	}
	return out
}
