package chaos

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// clusterBusOffset is the distance of a Redis Cluster node's bus port from
// its client port.
const clusterBusOffset = 10000

// freePort returns a loopback TCP port that was free a moment ago; with bus,
// port+10000 was free too (a Cluster node needs both).
func freePort(bus bool) (int, error) {
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if !bus {
			_ = ln.Close()
			return port, nil
		}
		if port+clusterBusOffset > 65535 {
			_ = ln.Close()
			continue
		}
		busLn, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+clusterBusOffset)))
		_ = ln.Close()
		if err != nil {
			continue
		}
		_ = busLn.Close()
		return port, nil
	}
	return 0, errors.New("find a free port: no port with a free cluster bus port after 50 tries")
}

// freeAddr returns a free loopback address, host:port.
func freeAddr() (string, error) {
	port, err := freePort(false)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}
