package testkit

import (
	"net"
	"strings"
	"testing"
	"time"
)

// StartReplica starts a Redis of t's own (as StartPrivate, with args) as a
// replica of master, and returns once master counts it online and in
// sync: a write to master followed by WAIT 1 is then confirmed by it.
func StartReplica(t testing.TB, master *Private, args ...string) *Private {
	t.Helper()
	r := StartPrivate(t, args...)
	host, port, _ := net.SplitHostPort(master.Addr)
	r.MustDo(t, "REPLICAOF", host, port)
	Eventually(t, 10*time.Second, "the replica "+r.Addr+" to sync with "+master.Addr, func() bool {
		info, err := r.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up") &&
			!strings.Contains(info, "master_sync_in_progress:1")
	})
	Eventually(t, 10*time.Second, "the master "+master.Addr+" to count its replica online", func() bool {
		info, err := master.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "state=online")
	})
	return r
}
