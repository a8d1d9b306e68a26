package admin_test

import (
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestMain stops the Redis servers testkit starts, once every test of the
// binary is done. The tests' harness is package workertest.
func TestMain(m *testing.M) { testkit.Main(m) }
