package chaos

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// post sends a delivery of id to the receiver, as the webhook handler does.
func post(ctx context.Context, url, id, body string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set(webhook.HeaderJobID, id)
	req.Header.Set(webhook.HeaderAttempt, "2")
	req.Header.Set(headerDaemon, "d1#3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestReceiverRecordsAnsweredDeliveriesAndOverlaps(t *testing.T) {
	t.Parallel()
	l := NewLedger(time.Now())
	r, err := startReceiver(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)

	if code, err := post(t.Context(), r.URL, "quick", `{"ms":1}`); err != nil || code != http.StatusNoContent {
		t.Fatalf("a delivery: %d, %v", code, err)
	}
	if !l.Delivered("quick") {
		t.Fatal("an answered delivery is not in the ledger")
	}
	if d := deliveriesOf(l, "quick")[0]; d.Attempt != 2 || d.Daemon != "d1#3" || d.Answered.Before(d.Arrived) {
		t.Errorf("delivery = %+v", d)
	}

	// A slow request whose sender gives up is no delivery; a second
	// request for the job while the first is open is an overlap.
	slowCtx, giveUp := context.WithCancel(t.Context())
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		_, _ = post(slowCtx, r.URL, "slow", `{"ms":60000}`)
	}()
	err = until(t.Context(), 10*time.Second, time.Millisecond, "the slow request is open", func(context.Context) (bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.open["slow"] == 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, err := post(t.Context(), r.URL, "slow", `{"ms":0}`); err != nil || code != http.StatusNoContent {
		t.Fatalf("the overlapping request: %d, %v", code, err)
	}
	giveUp()
	<-slowDone
	err = until(t.Context(), 10*time.Second, time.Millisecond, "the slow request is aborted", func(context.Context) (bool, error) {
		return l.Tally(nil, nil).Aborted == 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tl := l.Tally(nil, nil)
	if tl.Overlaps != 1 || len(deliveriesOf(l, "slow")) != 1 {
		t.Errorf("overlaps %d, deliveries of slow %d; want 1 and 1 (the answered one)", tl.Overlaps, len(deliveriesOf(l, "slow")))
	}
	if code, err := post(t.Context(), r.URL, "", `{}`); err != nil || code != http.StatusBadRequest {
		t.Errorf("a request without %s: %d, %v; want 400", webhook.HeaderJobID, code, err)
	}
}

func deliveriesOf(l *Ledger, id string) []Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Delivery(nil), l.deliveries[id]...)
}
