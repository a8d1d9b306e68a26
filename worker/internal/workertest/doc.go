// Package workertest is the integration-test harness of the library's
// packages: the tests of worker, worker/admin and the testmod module drive
// Redis, a Client and Daemons through it. It is imported by _test.go files
// only, never by production code (the depguard rule test-kits-in-tests-only
// holds it to that).
//
// Each helper fails the test it is given on an unexpected error, so a test
// reads as the steps it takes. The Redis servers themselves come from
// internal/testkit: a test binary's TestMain calls testkit.Main.
package workertest
