package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// connWorkers bounds the attackers' dials (and TLS handshakes) in
	// flight at once, so that --n of them at the start, or a burst of
	// reconnections, queue here rather than overflow the daemon's backlog.
	connWorkers = 64
	// trickleEvery is how often a --slow attacker sends one more header
	// byte, as slowloris does.
	trickleEvery = time.Second
	// heldEvery is how often the held connections are counted while the
	// good client is measured.
	heldEvery = 100 * time.Millisecond
	// dialPause is how long an attacker waits after a failed dial (the
	// daemon down, no port or file left) before it dials again.
	dialPause = 100 * time.Millisecond
	// After the measurement the attackers stop reconnecting, and still_open
	// is counted once no dial is in flight and the held count has not
	// changed for settleQuiet (at most settleMax): the connections the
	// daemon accepted only to close them are closed by then, and so are
	// the dials the daemon's full backlog made retry their SYN. A loaded
	// daemon may accept nothing for tens of milliseconds (with 50ms here,
	// a test run under -race counted every --n connection as still open).
	settleQuiet = 250 * time.Millisecond
	settleMax   = 3 * time.Second
)

// conns keeps --n attacker connections open to the API (from 127.0.0.2,
// and the next addresses when one runs out of ports) while the good client
// is measured for --duration, as a slowloris attacker does: each of --n
// slots holds one connection, sending nothing (or, with --slow, half a
// request header and then a byte a second), and when the daemon closes it
// connects again at once. The measurement starts once every slot has
// dialled once, whether or not the daemon kept the connection.
func conns(ctx context.Context, o options, stderr io.Writer) (string, error) {
	tg, err := newTarget(o)
	if err != nil {
		return "", err
	}
	limit, err := raiseFileLimit(uint64(o.n) + 1000) // #nosec G115 -- --n is checked positive; the connections, and room for the rest
	fdOK := err == nil
	if !fdOK {
		fmt.Fprintf(stderr, "courier bench: the open-file limit %d is below --n + 1000: %v; connections beyond it fail\n", limit, err)
	}
	good := tg.goodClient()
	defer good.CloseIdleConnections()
	if err := tg.check(ctx, good); err != nil {
		return "", err
	}

	a := &attackers{tg: tg, slow: o.slow, redial: o.redial, dials: make(chan struct{}, connWorkers)}
	a.source.Store(otherSource)
	a.reconnect.Store(true)
	slotCtx, stopSlots := context.WithCancel(ctx)
	var slots, firstDials sync.WaitGroup
	stop := func() {
		stopSlots() // closes every held connection
		slots.Wait()
	}
	defer stop() // on an early return; a second call does nothing
	firstDials.Add(o.n)
	for range o.n {
		slots.Go(func() { a.slot(slotCtx, firstDials.Done) })
	}
	firstDials.Wait()

	phase, cancel := context.WithTimeout(ctx, o.duration)
	samples := a.sample(phase)
	r := tg.measure(ctx, phase, good)
	cancel()
	held := <-samples
	a.reconnect.Store(false)
	stillOpen := a.settle(ctx)
	stop()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	slices.Sort(held)
	return fmt.Sprintf("mode=conns n=%d opened=%d reopened=%d held_p50=%d held_min=%d still_open=%d %s good_errors=%d reset_at_once=%d dial_errors=%d slow=%t fd_limit=%d fd_limit_ok=%t",
		o.n, a.opened.Load(), a.reopened.Load(), held[(len(held)-1)/2], held[0], stillOpen,
		r.figures("good"), r.errors, a.resetAtOnce.Load(), a.dialErrors.Load(), o.slow, limit, fdOK), nil
}

// attackers is what the slots share: how they dial, and what they count.
type attackers struct {
	tg     *target
	slow   bool
	redial time.Duration // the wait before connecting again (--redial)
	dials  chan struct{} // a semaphore of connWorkers dials
	source atomic.Uint32 // the source address in use, 127.0.0.<source>

	// reconnect is cleared when the measurement ends: a slot whose
	// connection is closed then stops.
	reconnect atomic.Bool

	held        atomic.Int64 // connections open now
	opened      atomic.Int64 // connections the daemon accepted, reset_at_once included
	reopened    atomic.Int64 // dials after each slot's first
	resetAtOnce atomic.Int64 // dials the daemon reset before they returned
	dialErrors  atomic.Int64 // dials that failed otherwise
}

// slot keeps one attacker connection open until ctx ends: it dials, holds
// the connection until the daemon closes it, and dials again after
// --redial (and dialPause more when the dial failed). firstDial is called
// once, after its first dial or when ctx ends before it.
func (a *attackers) slot(ctx context.Context, firstDial func()) {
	first := true
	defer func() {
		if first {
			firstDial()
		}
	}()
	for dials := 0; ctx.Err() == nil; dials++ {
		if dials > 0 {
			if sleep(ctx, a.redial); !a.reconnect.Load() || ctx.Err() != nil {
				return
			}
			a.reopened.Add(1)
		}
		c, err := a.open(ctx)
		if first {
			first = false
			firstDial()
		}
		switch {
		case ctx.Err() != nil:
			if err == nil {
				c.Close()
			}
			return
		case errors.Is(err, syscall.ECONNRESET):
			a.opened.Add(1)
			a.resetAtOnce.Add(1)
		case err != nil:
			a.dialErrors.Add(1)
			sleep(ctx, dialPause)
		default:
			a.opened.Add(1)
			a.held.Add(1)
			a.hold(ctx, c)
			a.held.Add(-1)
		}
	}
}

// open dials one attacker connection, waiting for a turn among the
// connWorkers dials in flight.
func (a *attackers) open(ctx context.Context) (net.Conn, error) {
	select {
	case a.dials <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-a.dials }()
	return a.tg.openOne(ctx, &a.source, a.slow)
}

// hold reads c until the daemon closes it (EOF, a reset, or a reply: its
// last word before it closes) or ctx ends, then closes it. With --slow it
// sends one more header byte every trickleEvery meanwhile.
func (a *attackers) hold(ctx context.Context, c net.Conn) {
	unblock := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer func() {
		unblock()
		_ = c.Close()
	}()
	buf := make([]byte, 1)
	for {
		if a.slow {
			_ = c.SetReadDeadline(time.Now().Add(trickleEvery))
		}
		_, err := c.Read(buf)
		if !a.slow || !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		if _, err := io.WriteString(c, "x"); err != nil {
			return
		}
	}
}

// sample counts the held connections every heldEvery until phase ends, and
// once more then; it sends the counts when done.
func (a *attackers) sample(phase context.Context) <-chan []int64 {
	out := make(chan []int64, 1)
	go func() {
		var held []int64
		tick := time.NewTicker(heldEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				held = append(held, a.held.Load())
			case <-phase.Done():
				out <- append(held, a.held.Load())
				return
			}
		}
	}()
	return out
}

// settle waits until no dial is in flight and the held count stays the
// same for settleQuiet, or settleMax has passed, and returns the count.
func (a *attackers) settle(ctx context.Context) int64 {
	held := a.held.Load()
	for deadline := time.Now().Add(settleMax); time.Now().Before(deadline) && sleep(ctx, settleQuiet); {
		now := a.held.Load()
		if now == held && len(a.dials) == 0 {
			break
		}
		held = now
	}
	return a.held.Load()
}

// openOne dials from source, and sends half a request with slow. A source
// address out of ports gives way to the next one.
func (tg *target) openOne(ctx context.Context, source *atomic.Uint32, slow bool) (net.Conn, error) {
	for {
		s := source.Load()
		c, err := tg.dial(ctx, byte(s)) // #nosec G115 -- s stays in 2..254: it grows only below 254
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
