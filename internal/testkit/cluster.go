package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// clusterNodes is the number of masters in the test cluster.
const clusterNodes = 3

// startCluster provides the Redis Cluster: REDIS_CLUSTER_ADDRS, else three
// local redis-server processes joined with redis-cli --cluster create.
func startCluster(ctx context.Context, logf func(string, ...any)) ([]string, error) {
	if env := os.Getenv(EnvClusterAddrs); env != "" {
		var addrs []string
		for _, a := range strings.Split(env, ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
		logf("testkit: Redis Cluster at %s (%s)", strings.Join(addrs, ","), EnvClusterAddrs)
		return addrs, nil
	}
	for _, tool := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s\ncluster: %v", help, err)
		}
	}
	srvs, err := startServers(ctx, clusterNodes, true)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	addrs := make([]string, len(srvs))
	for i, s := range srvs {
		addrs[i] = s.addr
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cluster: redis-cli %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	// redis-cli returns once the nodes agree on the configuration; wait
	// until every node also reports the cluster usable and knows the others.
	for _, a := range addrs {
		err := poll(ctx, func() (bool, error) {
			info, err := command(ctx, a, "CLUSTER", "INFO")
			return err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", clusterNodes)), nil
		})
		if err != nil {
			return nil, fmt.Errorf("cluster: node %s: %w", a, err)
		}
	}
	logf("testkit: Redis Cluster: local redis-server processes at %s", strings.Join(addrs, ","))
	return addrs, nil
}
