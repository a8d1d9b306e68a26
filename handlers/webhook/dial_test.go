package webhook

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/seed-53d105c9/courier/worker"
)

// newTestHandler builds a handler, failing the test on invalid settings.
func newTestHandler(t *testing.T, s Settings) *handler {
	t.Helper()
	h, err := New("q", slog.New(slog.DiscardHandler), s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h.(*handler)
}

// twoAddrServer is an HTTP server listening on 127.0.0.1 and 127.0.0.2 on
// one port, closing each connection after one request so that every
// request dials anew. It records the local address of each request.
type twoAddrServer struct {
	port string
	mu   sync.Mutex
	got  []string // the address each request came to
}

func newTwoAddrServer(t *testing.T) *twoAddrServer {
	t.Helper()
	ln1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln1.Addr().String())
	ln2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", port))
	if err != nil {
		ln1.Close()
		t.Skipf("cannot listen on 127.0.0.2 beside 127.0.0.1: %v", err)
	}
	s := &twoAddrServer{port: port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		s.mu.Lock()
		s.got = append(s.got, addr.String())
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	srv.SetKeepAlivesEnabled(false)
	go srv.Serve(ln1)
	go srv.Serve(ln2)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *twoAddrServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// lookupSeq answers the nth lookup with answers[n], and later ones with the
// last; it counts the lookups.
func lookupSeq(calls *atomic.Int32, answers ...[]string) lookupFunc {
	return func(_ context.Context, _, _ string) ([]netip.Addr, error) {
		n := int(calls.Add(1)) - 1
		var addrs []netip.Addr
		for _, a := range answers[min(n, len(answers)-1)] {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
		return addrs, nil
	}
}

// A name that resolves to an allowed address first and a refused one later
// (DNS rebinding) is refused on the later connection, and nothing reaches
// the refused address although it listens.
func TestRebindingRefused(t *testing.T) {
	t.Parallel()
	srv := newTwoAddrServer(t)
	h := newTestHandler(t, Settings{URL: "http://rebind.example:" + srv.port + "/hook", AllowNetworks: []string{"127.0.0.1"}})
	var calls atomic.Int32
	h.dial.lookup = lookupSeq(&calls, []string{"127.0.0.1"}, []string{"127.0.0.2"})

	job := &worker.Job{ID: "j1", Queue: "q", Payload: []byte(`{}`), Attempt: 1}
	if err := h.Handle(t.Context(), job); err != nil {
		t.Fatalf("Handle (first answer 127.0.0.1) = %v; want nil", err)
	}
	err := h.Handle(t.Context(), job)
	var perm *worker.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("Handle (second answer 127.0.0.2) = %v; want a permanent error", err)
	}
	want := "webhook POST http://rebind.example:" + srv.port + "/hook: refused to connect to 127.0.0.2: a loopback address; list its network in allow_networks to allow it"
	if perm.Err.Error() != want {
		t.Errorf("error = %q; want %q", perm.Err, want)
	}
	if got := srv.requests(); len(got) != 1 || got[0] != "127.0.0.1:"+srv.port {
		t.Errorf("the server got requests at %q; want one, at 127.0.0.1", got)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d lookups; want one per connection, 2", n)
	}
}

// Of several answers, the refused ones are skipped and an allowed one is
// dialled.
func TestDialSkipsRefused(t *testing.T) {
	t.Parallel()
	srv := newTwoAddrServer(t)
	h := newTestHandler(t, Settings{URL: "http://mixed.example:" + srv.port + "/", AllowNetworks: []string{"127.0.0.1/32"}})
	var calls atomic.Int32
	h.dial.lookup = lookupSeq(&calls, []string{"127.0.0.2", "::ffff:127.0.0.1"})
	if err := h.Handle(t.Context(), &worker.Job{ID: "j1", Queue: "q", Payload: []byte(`{}`), Attempt: 1}); err != nil {
		t.Fatalf("Handle = %v; want nil", err)
	}
	if got := srv.requests(); len(got) != 1 || got[0] != "127.0.0.1:"+srv.port {
		t.Errorf("the server got requests at %q; want one, at 127.0.0.1", got)
	}
}

// The error of a refused address names the URL, the address and its kind.
func TestRefusedMessage(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, Settings{URL: "https://hooks.example.com/x", Headers: map[string]string{"Authorization": "Bearer abcdefgh12345678"}})
	var calls atomic.Int32
	h.dial.lookup = lookupSeq(&calls, []string{"127.0.0.1", "::1"})
	err := h.Handle(t.Context(), &worker.Job{ID: "j1", Queue: "q", Payload: []byte(`{}`), Attempt: 1})
	want := "permanent: webhook POST https://hooks.example.com/x: refused to connect to 127.0.0.1: a loopback address; list its network in allow_networks to allow it"
	if err == nil || err.Error() != want {
		t.Errorf("Handle = %v; want %q", err, want)
	}
}

// The socket's Control hook refuses a refused address by itself, should a
// connection ever bypass dialContext.
func TestControlRefuses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	d := newDialer(netPolicy{})
	conn, err := d.net.DialContext(t.Context(), "tcp", ln.Addr().String())
	var refused *refusedError
	if !errors.As(err, &refused) {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("dial %s = %v; want a *refusedError", ln.Addr(), err)
	}
	if err := d.control("tcp4", "93.184.215.14:443", nil); err != nil {
		t.Errorf("control(public address) = %v; want nil", err)
	}
	if err := d.control("tcp", "not-an-address", nil); err == nil {
		t.Error("control(not an address) = nil; want an error")
	}
}

// The transport uses no proxy: one from the environment would resolve
// names beyond the address rule.
func TestNoProxy(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, Settings{URL: "https://example.com/"})
	tr, ok := h.client.Transport.(*http.Transport)
	if !ok || tr.Proxy != nil || tr.DialContext == nil || tr.DialTLSContext != nil {
		t.Errorf("transport %T: want an *http.Transport with no proxy, dialling through the handler's dialer only", h.client.Transport)
	}
}
