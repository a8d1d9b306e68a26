package webhook_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// receive is a receiver's HTTP handler: it checks that a request comes from
// Courier, signed with secret, and is recent, before doing any work.
func receive(secret []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		switch err := webhook.Verify(secret, r.Header, body); {
		case errors.Is(err, webhook.ErrStale):
			http.Error(w, "stale request", http.StatusUnauthorized) // a replay, or a bad clock
			return
		case err != nil:
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// Delivery is at least once: skip a Courier-Job-Id already done,
		// then decode body and do the work.
		w.WriteHeader(http.StatusNoContent)
	}
}

// A receiver written in Go checks each request with Verify: its signature,
// which covers the job id, and its timestamp.
func ExampleVerify() {
	secret := []byte("shared-secret")
	body := []byte(`{"order":42}`)
	now := time.Now()

	// post sends a request signed with key at the time at for job j1,
	// carrying the job id id.
	post := func(key []byte, at time.Time, id string) {
		ts := strconv.FormatInt(at.Unix(), 10)
		sig := webhook.Sign(key, webhook.Message{Timestamp: ts, Queue: "orders", JobID: "j1", Attempt: 1, Body: body})
		r := httptest.NewRequest(http.MethodPost, "/hooks/orders", bytes.NewReader(body))
		r.Header.Set(webhook.HeaderTimestamp, ts)
		r.Header.Set(webhook.HeaderQueue, "orders")
		r.Header.Set(webhook.HeaderJobID, id)
		r.Header.Set(webhook.HeaderAttempt, "1")
		r.Header.Set(webhook.HeaderSignature, sig)
		w := httptest.NewRecorder()
		receive(secret)(w, r)
		if w.Code == http.StatusNoContent {
			fmt.Println(w.Code)
			return
		}
		fmt.Print(w.Code, " ", w.Body.String())
	}
	post(secret, now, "j1")                     // from Courier
	post([]byte("guess"), now, "j1")            // forged
	post(secret, now, "j2")                     // replayed under another job id
	post(secret, now.Add(-7*time.Minute), "j1") // replayed later
	// Output:
	// 204
	// 401 bad signature
	// 401 bad signature
	// 401 stale request
}
