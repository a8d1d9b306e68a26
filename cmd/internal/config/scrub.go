package config

import (
	"errors"
	"regexp"
)

// A value given where a key expects something else is repeated in the
// problem's message, so that the operator sees what was read; but values
// are often addresses and URLs, and those may carry credentials: a
// redis://user:password@host address, user:password@host:port, an
// allow-list entry written as a URL with its user information, a token in
// a URL's query. Every configuration error passes scrubCredentials, so
// none leaves this package with one.

var (
	// urlUserinfo is the user information of a URL: scheme://<userinfo>@.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s"'\\]+@`)
	// bareUserinfo is user:password@ (or a user, which may be an API key)
	// before a host, without a scheme: a word that ends in @.
	bareUserinfo = regexp.MustCompile(`(^|[\s"'(=,])[^\s"'/@()\[\]=,\\]+@`)
	// queryCredential is a query parameter named as a credential.
	queryCredential = regexp.MustCompile(`(?i)([?&;](?:password|passwd|pwd|pass|secret|token|access_token|auth|api_?key|key|sig|signature)=)[^&\s"'#\\]*`)
)

// redactedMark stands for what was left out of a message.
const redactedMark = "[redacted]"

// scrubCredentials blanks the user information of URLs and host
// addresses, and credential query parameters, out of s.
func scrubCredentials(s string) string {
	s = urlUserinfo.ReplaceAllString(s, "${1}"+redactedMark+"@")
	s = bareUserinfo.ReplaceAllString(s, "${1}"+redactedMark+"@")
	return queryCredential.ReplaceAllString(s, "${1}"+redactedMark)
}

// scrubbedError is an error whose text passed scrubCredentials; it still
// unwraps to the error it words (for errors.Is and errors.As).
type scrubbedError struct{ err error }

func (e scrubbedError) Error() string { return scrubCredentials(e.err.Error()) }
func (e scrubbedError) Unwrap() error { return e.err }

// scrubbed returns err with its text scrubbed: an *Error with each
// problem's message scrubbed (it is printed problem by problem, and as
// JSON), any other error wrapped.
func scrubbed(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		for i := range e.Problems {
			e.Problems[i].Message = scrubCredentials(e.Problems[i].Message)
		}
		return err
	}
	return scrubbedError{err}
}
