// Package testmod holds the library's tests that need what its users must
// not inherit: the embedded store of courier dev (miniredis) and the
// OpenTelemetry SDK. It is a module of its own, so those dependencies stay
// out of the go.mod that users of the library see; make test runs it like
// every other module (DEVELOPERS.md, "Modules"). It has no code of its own.
package testmod
