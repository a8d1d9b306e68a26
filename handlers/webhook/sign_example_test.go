package webhook_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// Sign computes the Courier-Signature a request carries; a receiver in
// another language recomputes it the same way: HMAC-SHA256 over "v2", the
// timestamp, the queue, the job id, the attempt and the body, one per
// line.
func ExampleSign() {
	sig := webhook.Sign([]byte("shared-secret"), webhook.Message{
		Timestamp: "1764000000",
		Queue:     "orders",
		JobID:     "order-42",
		Attempt:   1,
		Body:      []byte(`{"order":42}`),
	})
	fmt.Println(sig[:3], len(sig))
	// Output: v2= 67
}

// A Verifier with a tolerance of its own and a fixed clock: a request
// signed three minutes ago passes the default tolerance of five minutes,
// not a tolerance of two.
func ExampleVerifier() {
	secret := []byte("shared-secret")
	now := time.Unix(1764000000, 0)
	signedAt := now.Add(-3 * time.Minute)
	body := []byte(`{"order":42}`)
	ts := fmt.Sprint(signedAt.Unix())
	h := http.Header{}
	h.Set(webhook.HeaderTimestamp, ts)
	h.Set(webhook.HeaderQueue, "orders")
	h.Set(webhook.HeaderJobID, "order-42")
	h.Set(webhook.HeaderAttempt, "1")
	h.Set(webhook.HeaderSignature, webhook.Sign(secret, webhook.Message{Timestamp: ts, Queue: "orders", JobID: "order-42", Attempt: 1, Body: body}))

	clock := func() time.Time { return now }
	fmt.Println(webhook.Verifier{Secret: secret, Now: clock}.Verify(h, body))
	err := webhook.Verifier{Secret: secret, Now: clock, Tolerance: 2 * time.Minute}.Verify(h, body)
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}
