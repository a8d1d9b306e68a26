package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// authflood measures a good token's round trip alone for --duration, then
// while --clients connections send --n requests with a wrong token, until
// they are sent or --duration has passed.
func authflood(ctx context.Context, o options) (string, error) {
	tg, err := newTarget(o)
	if err != nil {
		return "", err
	}
	good := tg.goodClient()
	defer good.CloseIdleConnections()
	if err := tg.check(ctx, good); err != nil {
		return "", err
	}
	idleCtx, cancel := context.WithTimeout(ctx, o.duration)
	idle := tg.measure(ctx, idleCtx, good)
	cancel()

	f := newFlood(tg, o.n, o.giveUp)
	floodCtx, stop := context.WithTimeout(ctx, o.duration)
	defer stop()
	var (
		wg        sync.WaitGroup
		floodTime time.Duration
		floodDone = make(chan struct{})
	)
	start := time.Now()
	for range o.clients {
		wg.Go(func() { f.run(floodCtx) })
	}
	go func() {
		wg.Wait()
		floodTime = time.Since(start)
		close(floodDone)
		stop() // the flood is over, and so is its measurement
	}()
	busy := tg.measure(ctx, floodCtx, good)
	<-floodDone

	ratio := 0.0
	if p := percentile(idle.latencies, 99); p > 0 {
		ratio = float64(percentile(busy.latencies, 99)) / float64(p)
	}
	attempts := f.unauthorized.Load() + f.limited.Load() + f.refused.Load() + f.other.Load() + f.abandoned.Load()
	return fmt.Sprintf("mode=authflood n=%d clients=%d %s %s ratio_p99=%.2f idle_samples=%d flood_samples=%d "+
		"flood_attempts=%d flood_s=%.2f flood_per_s=%.0f flood_401=%d flood_429=%d flood_refused=%d flood_other=%d flood_abandoned=%d give_up=%s good_errors=%d",
		o.n, o.clients, idle.figures("idle"), busy.figures("flood"), ratio, len(idle.latencies), len(busy.latencies),
		attempts, floodTime.Seconds(), float64(attempts)/floodTime.Seconds(),
		f.unauthorized.Load(), f.limited.Load(), f.refused.Load(), f.other.Load(), f.abandoned.Load(), o.giveUp, idle.errors+busy.errors), nil
}

// flood sends requests with a wrong token as an attacker would: over
// keep-alive connections from an address of its own, connecting again
// whenever one is closed. Every attempt counts once, by its outcome; one
// cut short by the end of the flood does not count.
type flood struct {
	tg      *target
	n       int64
	giveUp  time.Duration // 0: wait for every reply
	request []byte
	tickets atomic.Int64 // attempts started; the flood stops at n

	unauthorized, limited, other atomic.Int64 // replies: 401, 429, any other
	refused                      atomic.Int64 // connection refused or closed without a reply
	abandoned                    atomic.Int64 // given up on after giveUp
}

func newFlood(tg *target, n int, giveUp time.Duration) *flood {
	wrong := "courier-bench-wrong-" + randomHex(16)
	return &flood{tg: tg, n: int64(n), giveUp: giveUp, request: []byte("GET " + tg.path + " HTTP/1.1\r\nHost: " + tg.host +
		"\r\nAuthorization: Bearer " + wrong + "\r\n\r\n")}
}

// run is one flooding connection, until ctx ends or the tickets run out.
func (f *flood) run(ctx context.Context) {
	var (
		conn net.Conn
		br   *bufio.Reader
	)
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	deadline, _ := ctx.Deadline() // the flood's end: no attempt outlives it
	over := func() bool { return ctx.Err() != nil || !time.Now().Before(deadline) }
	for !over() && f.tickets.Add(1) <= f.n {
		if conn == nil {
			c, err := f.tg.connect(ctx, otherSource)
			if err != nil {
				f.count(0, over())
				continue
			}
			conn, br = c, bufio.NewReader(c)
		}
		until := deadline
		if f.giveUp > 0 {
			until = time.Now().Add(f.giveUp)
			if until.After(deadline) {
				until = deadline
			}
		}
		_ = conn.SetDeadline(until)
		status, keep := f.exchange(conn, br)
		if status == 0 && f.giveUp > 0 && !over() && !time.Now().Before(until) {
			f.abandoned.Add(1)
			conn.Close()
			conn = nil
			continue
		}
		f.count(status, over())
		if !keep {
			conn.Close()
			conn = nil
		}
	}
}

// exchange sends one request on conn and reads the reply; status 0 means
// the connection failed. keep says whether conn may carry another.
func (f *flood) exchange(conn net.Conn, br *bufio.Reader) (status int, keep bool) {
	if _, err := conn.Write(f.request); err != nil {
		return 0, false
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, false
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err == nil && !resp.Close
}

// count counts an attempt by its status (0: no reply); one without a reply
// when the flood is over was cut short by its end.
func (f *flood) count(status int, over bool) {
	switch {
	case status == 0 && over:
	case status == 0:
		f.refused.Add(1)
	case status == http.StatusUnauthorized:
		f.unauthorized.Add(1)
	case status == http.StatusTooManyRequests:
		f.limited.Add(1)
	default:
		f.other.Add(1)
	}
}
