package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
		ts := r.Header.Get(webhook.HeaderTimestamp)
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
			http.Error(w, "stale timestamp", http.StatusUnauthorized) // a replay, or a bad clock
			return
		}
		if !webhook.Verify(secret, ts, body, r.Header.Get(webhook.HeaderSignature)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// Delivery is at least once: skip a Courier-Job-Id already done,
		// then decode body and do the work.
		w.WriteHeader(http.StatusNoContent)
	}
}

// A receiver written in Go verifies each request's signature with Verify.
func ExampleVerify() {
	secret := []byte("shared-secret")
	body := `{"order":42}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)

	for _, sig := range []string{webhook.Sign(secret, ts, []byte(body)), webhook.Sign([]byte("guess"), ts, []byte(body))} {
		r := httptest.NewRequest(http.MethodPost, "/hooks/orders", strings.NewReader(body))
		r.Header.Set(webhook.HeaderTimestamp, ts)
		r.Header.Set(webhook.HeaderSignature, sig)
		w := httptest.NewRecorder()
		receive(secret)(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// 204
	// 401
}
