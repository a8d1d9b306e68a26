package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcredis "github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"
)

// startSingle provides the single Redis: REDIS_ADDR, else Docker, else a
// local redis-server. A failed container start falls back to redis-server
// when there is one, saying why.
func startSingle(ctx context.Context, logf func(string, ...any)) ([]string, error) {
	if addr := os.Getenv(EnvAddr); addr != "" {
		logf("testkit: single Redis at %s (%s)", addr, EnvAddr)
		return []string{addr}, nil
	}
	_, lookErr := exec.LookPath("redis-server")
	haveServer := lookErr == nil

	image := os.Getenv(EnvImage)
	if image == "" {
		image = DefaultImage
	}
	dockerErr := pingDocker(ctx)
	if dockerErr == nil {
		addr, err := runContainer(ctx, image, logf)
		if err == nil {
			logf("testkit: single Redis in a container of %s at %s", image, addr)
			return []string{addr}, nil
		}
		if !haveServer {
			return nil, fmt.Errorf("%s\nstarting a container of %s: %w", help, image, err)
		}
		logf("testkit: could not start a container of %s, falling back to a local redis-server: %v", image, err)
	} else if haveServer {
		logf("testkit: Docker is not available (%v), using a local redis-server", dockerErr)
	}
	if !haveServer {
		return nil, fmt.Errorf("%s\nDocker: %v\nredis-server: %v", help, dockerErr, lookErr)
	}
	srv, err := startServers(ctx, 1, false)
	if err != nil {
		return nil, fmt.Errorf("%s\nlocal redis-server: %w", help, err)
	}
	logf("testkit: single Redis: local redis-server at %s", srv[0].addr)
	return []string{srv[0].addr}, nil
}

// pingDocker reports whether a Docker engine answers.
func pingDocker(ctx context.Context) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // a failed close of a client that only pinged changes nothing
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return err
	}
	return nil
}

// runContainer starts image with the testcontainers Redis module and
// registers its removal with Main. Ryuk is expected to be disabled
// (TESTCONTAINERS_RYUK_DISABLED=true) where no registry is reachable, so the
// container is removed here, not by Ryuk.
func runContainer(ctx context.Context, image string, logf func(string, ...any)) (string, error) {
	var tclog bufferLog
	defer func() {
		if s := tclog.flush(); s != "" {
			logf("testcontainers:\n%s", s)
		}
	}()
	ctr, err := tcredis.Run(ctx, image,
		testcontainers.WithLogger(&tclog),
		// The module's own port check runs a shell inside the container
		// (images from .ci/redis-image have none) and dials the host
		// testcontainers guesses, which can be wrong (see reachable).
		// Wait for Redis's own word and the port mapping; reachable checks
		// the rest.
		testcontainers.WithWaitStrategyAndDeadline(30*time.Second,
			wait.ForMappedPort(redisPort),
			wait.ForLog("* Ready to accept connections"),
		),
	)
	if err != nil {
		if tErr := testcontainers.TerminateContainer(ctr); tErr != nil {
			logf("testkit: removing the failed container: %v", tErr)
		}
		return "", err
	}
	onStop(func() error { return testcontainers.TerminateContainer(ctr) })
	addr, err := reachable(ctx, ctr, logf)
	if err != nil {
		return "", fmt.Errorf("container of %s: %w", image, err)
	}
	return addr, nil
}

const redisPort = "6379/tcp"

// reachable returns the address at which the container's Redis answers PING.
// testcontainers takes the host of a published port to be the default
// gateway whenever it runs inside a container (/.dockerenv), which is wrong
// when the Docker engine runs in that same container: there the port is
// published on the loopback interface. So the loopback address is tried too,
// unless TESTCONTAINERS_HOST_OVERRIDE names the host.
func reachable(ctx context.Context, ctr *tcredis.RedisContainer, logf func(string, ...any)) (string, error) {
	guess, err := ctr.PortEndpoint(ctx, redisPort, "")
	if err != nil {
		return "", fmt.Errorf("address: %w", err)
	}
	candidates := []string{guess}
	if _, override := os.LookupEnv("TESTCONTAINERS_HOST_OVERRIDE"); !override {
		if _, port, err := net.SplitHostPort(guess); err == nil {
			if local := net.JoinHostPort("127.0.0.1", port); local != guess {
				candidates = append(candidates, local)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var found string
	err = poll(ctx, func() (bool, error) {
		for _, a := range candidates {
			if reply, err := command(ctx, a, "PING"); err == nil && reply == "PONG" {
				found = a
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("no answer to PING at %s: %w", strings.Join(candidates, " or "), err)
	}
	if found != guess {
		logf("testkit: the container's Redis answers at %s, not at %s where testcontainers placed it", found, guess)
	}
	return found, nil
}

// bufferLog collects testcontainers' messages during a start, to be logged
// by the test that started it; later messages (at removal) are dropped,
// since that test has ended.
type bufferLog struct {
	mu     sync.Mutex
	b      strings.Builder
	closed bool
}

// Printf implements testcontainers' log.Logger.
func (l *bufferLog) Printf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	fmt.Fprintf(&l.b, "\t"+strings.TrimSuffix(format, "\n")+"\n", v...)
}

// flush returns what was collected and drops what comes later.
func (l *bufferLog) flush() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return strings.TrimSuffix(l.b.String(), "\n")
}
