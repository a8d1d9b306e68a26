// Package workertest is the integration-test harness of the library's
// own packages, for Courier's developers: the tests of worker,
// worker/admin and the testmod module drive real Redis servers (single
// and Cluster), a Client and Daemons through it. Users testing their
// handlers have the public package worker/workertest instead (its own
// module, with an in-memory store). It is imported by _test.go files
// only, never by production code (the depguard rule test-kits-in-tests-only
// holds it to that).
//
// Each helper fails the test it is given on an unexpected error, so a test
// reads as the steps it takes. The Redis servers themselves come from
// internal/testkit: a test binary's TestMain calls testkit.Main.
package workertest
