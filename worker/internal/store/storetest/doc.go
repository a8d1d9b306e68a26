// Package storetest is the test kit of package store. It is for tests only
// and must never be imported by production code: import it from _test.go
// files.
//
// Fake is an in-memory stand-in for the job scripts of lua/*.lua, with
// controls for what real Redis cannot easily be made to do on cue (outages,
// slow calls, a skewed clock, broken subscriptions), and a record of every
// call. Tests of the worker pool run it inside testing/synctest bubbles.
package storetest
