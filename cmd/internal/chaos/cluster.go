package chaos

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clusterTimeout bounds the waits for a Cluster to settle: creation, a
// failover, a replica's sync.
const clusterTimeout = 60 * time.Second

// Cluster is a Redis Cluster of redis-server processes the suite started.
type Cluster struct {
	Nodes []*Redis // the masters first, then the replicas, as created
}

// startCluster starts masters*(1+replicas) nodes under dir, joins them with
// redis-cli --cluster create and waits until every node reports the cluster
// usable. args are added to every node's options.
func startCluster(ctx context.Context, dir string, masters, replicas int, args ...string) (*Cluster, error) {
	c := &Cluster{}
	for i := range masters * (1 + replicas) {
		n, err := startRedis(ctx, filepath.Join(dir, "node"+strconv.Itoa(i)), true, args...)
		if err != nil {
			c.Kill()
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	create := []string{"--cluster", "create"}
	create = append(create, c.Addrs()...)
	create = append(create, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", create...).CombinedOutput(); err != nil {
		c.Kill()
		return nil, fmt.Errorf("redis-cli %s: %w\n%s", strings.Join(create, " "), err, out)
	}
	for _, n := range c.Nodes {
		if err := c.waitNodeOK(ctx, n); err != nil {
			c.Kill()
			return nil, err
		}
	}
	// A replica that never finished its first sync cannot be promoted
	// (its data is too old by cluster-replica-validity-factor).
	err := until(ctx, clusterTimeout, 50*time.Millisecond, "every replica in sync",
		func(ctx context.Context) (bool, error) {
			n := 0
			for _, node := range c.Nodes {
				if info, err := node.Info(ctx, "replication"); err == nil && synced(info) {
					n++
				}
			}
			return n == masters*replicas, nil
		})
	if err != nil {
		c.Kill()
		return nil, err
	}
	return c, nil
}

// synced reports whether INFO replication shows a replica whose link to
// its master is up.
func synced(info string) bool {
	return infoField(info, "role") == "slave" && infoField(info, "master_link_status") == "up"
}

// waitSynced waits until n is a replica whose link to its master is up.
func waitSynced(ctx context.Context, n *Redis) error {
	return until(ctx, clusterTimeout, 50*time.Millisecond, n.Addr+" is a replica in sync",
		func(ctx context.Context) (bool, error) {
			info, err := n.Info(ctx, "replication")
			return err == nil && synced(info), err
		})
}

// waitNodeOK waits until n reports cluster_state:ok and knows every node.
func (c *Cluster) waitNodeOK(ctx context.Context, n *Redis) error {
	want := "cluster_known_nodes:" + strconv.Itoa(len(c.Nodes))
	return until(ctx, clusterTimeout, 50*time.Millisecond, "cluster node "+n.Addr+" reports ok",
		func(ctx context.Context) (bool, error) {
			info, err := n.DoString(ctx, "CLUSTER", "INFO")
			return err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, want), err
		})
}

// Addrs returns every node's address.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// Kill kills every node.
func (c *Cluster) Kill() {
	for _, n := range c.Nodes {
		n.Kill()
	}
}

// node returns the node listening on addr.
func (c *Cluster) node(addr string) *Redis {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// Slot returns the hash slot of key.
func (c *Cluster) Slot(ctx context.Context, key string) (int, error) {
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		reply, err := n.Do(ctx, "CLUSTER", "KEYSLOT", key)
		if err == nil {
			if slot, ok := reply.(int64); ok {
				return int(slot), nil
			}
		}
	}
	return 0, fmt.Errorf("CLUSTER KEYSLOT %s: no node answered", key)
}

// MasterOf returns the master that serves slot, as a running node that
// reports cluster_state:ok sees it, and that master's view agrees.
func (c *Cluster) MasterOf(ctx context.Context, slot int) (*Redis, error) {
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		info, err := n.DoString(ctx, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_state:ok") {
			continue
		}
		addr, err := slotMaster(ctx, n, slot)
		if err != nil {
			continue
		}
		if m := c.node(addr); m != nil && m.Running() {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no running node knows a live master of slot %d", slot)
}

// slotMaster reads the address of slot's master from n's CLUSTER SLOTS.
func slotMaster(ctx context.Context, n *Redis, slot int) (string, error) {
	reply, err := n.Do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return "", err
	}
	ranges, _ := reply.([]any)
	for _, r := range ranges {
		f, _ := r.([]any)
		if len(f) < 3 {
			continue
		}
		lo, _ := f[0].(int64)
		hi, _ := f[1].(int64)
		if int64(slot) < lo || int64(slot) > hi {
			continue
		}
		m, _ := f[2].([]any)
		if len(m) < 2 {
			break
		}
		host, _ := m[0].(string)
		port, _ := m[1].(int64)
		return net.JoinHostPort(host, strconv.FormatInt(port, 10)), nil
	}
	return "", fmt.Errorf("%s: no master for slot %d in CLUSTER SLOTS", n.Addr, slot)
}

// Masters returns the running nodes that are masters now.
func (c *Cluster) Masters(ctx context.Context) []*Redis {
	var ms []*Redis
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		if info, err := n.Info(ctx, "replication"); err == nil && infoField(info, "role") == "master" {
			ms = append(ms, n)
		}
	}
	return ms
}

// myID returns n's cluster node id.
func myID(ctx context.Context, n *Redis) (string, error) {
	return n.DoString(ctx, "CLUSTER", "MYID")
}
