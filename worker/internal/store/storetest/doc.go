// Package storetest is the test kit of package store. It is for tests only
// and must never be imported by production code: import it from _test.go
// files.
//
// Fake is an in-memory stand-in for the job scripts of lua/*.lua, with
// controls for what real Redis cannot easily be made to do on cue (outages,
// slow calls, a skewed clock, broken subscriptions), and a record of every
// call. Tests of the worker pool run it inside testing/synctest bubbles.
//
// A fake is trusted only as far as it is checked: RunContract is one table
// of cases that runs against Fake here and against the real store on single
// Redis and Redis Cluster in package store (contract_test.go), so the fake
// cannot drift from the scripts without a test failing. A change to a
// script or to the fake comes with a case.
package storetest
