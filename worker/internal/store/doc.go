// Package store is the only code that reads and writes job data in Redis:
// the key builders (keys.go), one typed wrapper per script of package lua,
// run through the script layer (worker/internal/script), and the record
// codec (record.go). For a script X, lua/X.lua is the script, X.go its
// wrapper and X_test.go its tests on real Redis, single and Cluster.
//
// Callers validate names and values first; the scripts validate again
// before their first write, because Lua does not roll back.
package store
