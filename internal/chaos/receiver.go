package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// The headers the receiver reads: the webhook handler's own, and one the
// suite adds to each daemon's webhook settings to name the sender.
const (
	headerJobID   = "Courier-Job-Id"
	headerAttempt = "Courier-Attempt"
	headerDaemon  = "X-Chaos-Daemon"
)

// jobPayload is what the producer enqueues: how long the receiver takes to
// answer the job's delivery, so that jobs are in flight when faults hit.
type jobPayload struct {
	Ms int `json:"ms"`
}

// Receiver is the webhook endpoint every daemon POSTs its jobs to. It
// holds each request for the job's handling time, then records the
// delivery in the ledger and answers 204. A request whose sender hangs up
// first is not a delivery: the daemon saw no answer.
type Receiver struct {
	URL string // http://127.0.0.1:port/deliver

	ledger *Ledger
	srv    *http.Server
	ln     net.Listener
}

// startReceiver listens on a free loopback port; ctx is every request's
// base context.
func startReceiver(ctx context.Context, l *Ledger) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{URL: "http://" + ln.Addr().String() + "/deliver", ledger: l, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /deliver", r.deliver)
	r.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *Receiver) deliver(w http.ResponseWriter, req *http.Request) {
	arrived := time.Now()
	id := req.Header.Get(headerJobID)
	if id == "" {
		http.Error(w, "no "+headerJobID+" header", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		r.ledger.Aborted()
		return
	}
	var p jobPayload
	_ = json.Unmarshal(body, &p) // a payload without ms answers at once
	if !pause(req.Context(), time.Duration(p.Ms)*time.Millisecond) {
		r.ledger.Aborted()
		return
	}
	attempt, _ := strconv.Atoi(req.Header.Get(headerAttempt))
	r.ledger.Deliver(id, Delivery{
		Arrived: arrived, Answered: time.Now(), Attempt: attempt, Daemon: req.Header.Get(headerDaemon),
	})
	w.WriteHeader(http.StatusNoContent)
}

// Close stops the receiver; requests in flight are cut off.
func (r *Receiver) Close() {
	if err := r.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = r.ln.Close()
	}
}
