package storetest_test

import (
	"testing"

	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// TestContract holds the fake to the contract the real store passes in
// package store (contract_test.go).
func TestContract(t *testing.T) {
	t.Parallel()
	storetest.RunContract(t, func(t *testing.T) storetest.Backend { return storetest.NewFake(t) })
}
