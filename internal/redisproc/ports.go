// Package redisproc is what starting and probing redis-server processes
// needs, without the testing package: free loopback ports, process
// attributes that end a child with its parent, and one command sent on a
// connection of its own. The chaos suite uses it directly; tests use it
// through internal/testkit.
package redisproc

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// clusterBusOffset is the distance of a Redis Cluster node's bus port from
// its client port.
const clusterBusOffset = 10000

// FreePorts returns n distinct loopback ports that were free a moment ago;
// with bus set, port+10000 (the cluster bus) was free too (a Cluster node
// needs both).
func FreePorts(n int, bus bool) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 100 {
			return nil, errors.New("find a free port: none found after 100 tries")
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		held = append(held, l)
		port := l.Addr().(*net.TCPAddr).Port
		if bus {
			if port+clusterBusOffset > 65535 {
				continue
			}
			lb, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+clusterBusOffset)))
			if err != nil {
				continue
			}
			held = append(held, lb)
		}
		ports = append(ports, port)
	}
	return ports, nil
}
