package chaos

import (
	"net"
	"strconv"

	"github.com/seed-53d105c9/courier/internal/redisproc"
)

// freeAddr returns a free loopback address, host:port.
func freeAddr() (string, error) {
	ports, err := redisproc.FreePorts(1, false)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), nil
}
