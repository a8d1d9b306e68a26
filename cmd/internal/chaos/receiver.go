package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// headerDaemon names the sender: the suite adds it to each daemon's webhook
// settings. The receiver reads it beside the handler's own headers.
const headerDaemon = "X-Chaos-Daemon"

// jobPayload is what the producer enqueues: how long the receiver takes to
// answer the job's delivery, so that jobs are in flight when faults hit.
type jobPayload struct {
	Ms int `json:"ms"`
}

// Receiver is the webhook endpoint every daemon POSTs its jobs to. It
// holds each request for the job's handling time, then records the
// delivery in the ledger and answers 204. A request whose sender hangs up
// first is not a delivery: the daemon saw no answer. A request for a job
// that has another request open is an overlap: two workers run it at once.
type Receiver struct {
	URL string // http://127.0.0.1:port/deliver

	ledger *Ledger
	srv    *http.Server
	ln     net.Listener

	mu      sync.Mutex
	open    map[string]int // requests being held, by job id
	keyCap  int            // a scenario with job keys: each key's cap
	keyOpen map[string]int // requests being held, by job key
}

// startReceiver listens on a free loopback port; ctx is every request's
// base context.
func startReceiver(ctx context.Context, l *Ledger) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{URL: "http://" + ln.Addr().String() + "/deliver", ledger: l, ln: ln, open: map[string]int{}, keyOpen: map[string]int{}}
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
	id := req.Header.Get(webhook.HeaderJobID)
	if id == "" {
		http.Error(w, "no "+webhook.HeaderJobID+" header", http.StatusBadRequest)
		return
	}
	defer r.hold(id)()
	if key := req.Header.Get(webhook.HeaderJobKey); key != "" {
		defer r.holdKey(key)()
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
	attempt, _ := strconv.Atoi(req.Header.Get(webhook.HeaderAttempt))
	r.ledger.Deliver(id, Delivery{
		Arrived: arrived, Answered: time.Now(), Attempt: attempt, Daemon: req.Header.Get(headerDaemon),
	})
	w.WriteHeader(http.StatusNoContent)
}

// hold marks a request for id open, recording an overlap when another one
// is, and returns the function that closes it.
func (r *Receiver) hold(id string) (release func()) {
	r.mu.Lock()
	if r.open[id] > 0 {
		r.ledger.Overlapped(id)
	}
	r.open[id]++
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		if r.open[id]--; r.open[id] == 0 {
			delete(r.open, id)
		}
		r.mu.Unlock()
	}
}

// holdKey counts a request of key open, recording one above the key's
// cap, and returns the function that closes it.
func (r *Receiver) holdKey(key string) (release func()) {
	r.mu.Lock()
	r.keyOpen[key]++
	r.ledger.KeyOpen(r.keyOpen[key])
	if r.keyCap > 0 && r.keyOpen[key] > r.keyCap {
		r.ledger.KeyOver()
	}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		if r.keyOpen[key]--; r.keyOpen[key] == 0 {
			delete(r.keyOpen, key)
		}
		r.mu.Unlock()
	}
}

// Close stops the receiver; requests in flight are cut off.
func (r *Receiver) Close() {
	if err := r.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = r.ln.Close()
	}
}
