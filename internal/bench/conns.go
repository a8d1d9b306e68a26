package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Opening and probing the idle connections runs this many at a time.
const connWorkers = 64

// conns opens --n idle connections to the API (from 127.0.0.2, and the
// next addresses when one runs out of ports), measures a good request
// beside them for --duration, and counts how many the server still holds.
func conns(ctx context.Context, o options, stderr io.Writer) (string, error) {
	tg, err := newTarget(o)
	if err != nil {
		return "", err
	}
	limit, err := raiseFileLimit(uint64(o.n) + 1000) // the connections, and room for the rest
	fdOK := err == nil
	if !fdOK {
		fmt.Fprintf(stderr, "courier bench: the open-file limit %d is below --n + 1000: %v; connections beyond it fail\n", limit, err)
	}
	good := tg.goodClient()
	defer good.CloseIdleConnections()
	if err := tg.check(ctx, good); err != nil {
		return "", err
	}
	held, reset, dialErrors := tg.openIdle(ctx, o.n, o.slow)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	phase, cancel := context.WithTimeout(ctx, o.duration)
	r := tg.measure(ctx, phase, good)
	cancel()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return fmt.Sprintf("mode=conns n=%d opened=%d still_open=%d %s good_errors=%d reset_at_once=%d dial_errors=%d slow=%t fd_limit=%d fd_limit_ok=%t",
		o.n, len(held)+reset, stillOpen(held), r.figures("good"), r.errors, reset, dialErrors, o.slow, limit, fdOK), nil
}

// openIdle opens n connections that send nothing, or half a request with
// slow. A source address out of ports gives way to the next one. reset
// counts the connections the server reset before the dial returned (a
// refusal at accept, on a fast network): opened, and closed already.
func (tg *target) openIdle(ctx context.Context, n int, slow bool) (held []net.Conn, reset, dialErrors int) {
	var (
		mu     sync.Mutex
		next   atomic.Int64
		source atomic.Uint32
		wg     sync.WaitGroup
	)
	source.Store(otherSource)
	for range min(n, connWorkers) {
		wg.Go(func() {
			for ctx.Err() == nil && next.Add(1) <= int64(n) {
				c, err := tg.openOne(ctx, &source, slow)
				mu.Lock()
				switch {
				case errors.Is(err, syscall.ECONNRESET):
					reset++
				case err != nil:
					dialErrors++
				default:
					held = append(held, c)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return held, reset, dialErrors
}

func (tg *target) openOne(ctx context.Context, source *atomic.Uint32, slow bool) (net.Conn, error) {
	for {
		s := source.Load()
		c, err := tg.dial(ctx, byte(s))
		if errors.Is(err, syscall.EADDRNOTAVAIL) && tg.loopback && s < 254 {
			source.CompareAndSwap(s, s+1) // no port left on 127.0.0.<s>
			continue
		}
		if err != nil || !slow {
			return c, err
		}
		return tg.startSlow(ctx, c), nil
	}
}

// startSlow sends half a request header on c (after the TLS handshake for
// https://), as a slowloris client does. The connection counts as opened
// whatever the server does with it.
func (tg *target) startSlow(ctx context.Context, c net.Conn) net.Conn {
	if tg.tls != nil {
		tc := tls.Client(c, tg.tls)
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			return c
		}
		c = tc
	}
	_, _ = io.WriteString(c, "GET "+tg.path+" HTTP/1.1\r\nHost: "+tg.host+"\r\nX-Slow: ")
	return c
}

// stillOpen counts the connections the server has not closed.
func stillOpen(conns []net.Conn) int {
	var (
		open atomic.Int64
		wg   sync.WaitGroup
		work = make(chan net.Conn)
	)
	for range connWorkers {
		wg.Go(func() {
			for c := range work {
				if isOpen(c) {
					open.Add(1)
				}
			}
		})
	}
	for _, c := range conns {
		work <- c
	}
	close(work)
	wg.Wait()
	return int(open.Load())
}

// isOpen reads c with a short deadline: a read that times out finds it
// open; EOF, a reset, or a reply (a server's last word before it closes)
// find it closed. A closed connection answers at once.
func isOpen(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, os.ErrDeadlineExceeded)
}
