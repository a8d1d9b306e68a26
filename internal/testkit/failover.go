package testkit

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// failoverTimeout bounds the waits of a failover: a replica's first sync,
// the failure's detection (the node timeout and up to half of it more),
// the replica's election.
const failoverTimeout = 30 * time.Second

// WaitSynced waits until every replica of c has its link to its master up
// and no sync in progress: a master killed before that cannot fail over
// ("Disconnected from master for longer than allowed").
func (c *PrivateCluster) WaitSynced(t testing.TB) {
	t.Helper()
	for _, n := range c.Nodes[c.Masters:] {
		Eventually(t, failoverTimeout, "the replica "+n.Addr+" to sync", func() bool {
			info, err := n.Do("INFO", "replication")
			return err == nil && strings.Contains(info, "master_link_status:up") &&
				!strings.Contains(info, "master_sync_in_progress:1")
		})
	}
}

// KillMasterOf kills (SIGKILL) the master that serves key's slot and
// returns it. Its replica is promoted a few seconds later (WaitPromoted);
// meanwhile clients get connection errors for the slot, and CLUSTERDOWN
// once the other masters agree the node failed (WaitClusterDown).
func (c *PrivateCluster) KillMasterOf(t testing.TB, key string) *Private {
	t.Helper()
	m := c.NodeOf(t, key)
	m.Kill()
	return m
}

// WaitClusterDown waits until a running node reports cluster_state:fail:
// the failure of a killed master is detected, and every node answers
// CLUSTERDOWN until its replica is promoted.
func (c *PrivateCluster) WaitClusterDown(t testing.TB) {
	t.Helper()
	Eventually(t, failoverTimeout, "a node to report cluster_state:fail", func() bool {
		for _, n := range c.Nodes {
			if info, err := n.Do("CLUSTER", "INFO"); err == nil && strings.Contains(info, "cluster_state:fail") {
				return true
			}
		}
		return false
	})
}

// WaitPromoted waits until a running master other than killed serves key's
// slot and every running node reports cluster_state:ok, and returns that
// master.
func (c *PrivateCluster) WaitPromoted(t testing.TB, key string, killed *Private) *Private {
	t.Helper()
	var promoted *Private
	EventuallyState(t, failoverTimeout, func() (bool, string) {
		promoted = nil
		for _, n := range c.Nodes {
			if n == killed {
				continue
			}
			info, err := n.Do("CLUSTER", "INFO")
			if err != nil {
				continue // not running
			}
			if !strings.Contains(info, "cluster_state:ok") {
				return false, n.Addr + " does not report cluster_state:ok"
			}
			if _, err := n.Do("EXISTS", key); err == nil && c.isMaster(n) {
				promoted = n
			}
		}
		return promoted != nil, fmt.Sprintf("no master serves %q", key)
	})
	return promoted
}
