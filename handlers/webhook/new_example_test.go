package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/seed-53d105c9/courier/handlers/webhook"
	"github.com/seed-53d105c9/courier/worker"
)

// New builds the webhook handler a queue's settings describe; it is a
// worker.Handler like any other, so a program of yours can register it.
// The receiver here is on loopback, which the handler refuses unless
// AllowNetworks lists it.
func ExampleNew() {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("%s got job %s, attempt %s: %s\n", r.URL.Path, r.Header.Get(webhook.HeaderJobID), r.Header.Get(webhook.HeaderAttempt), body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	h, err := webhook.New("orders", slog.New(slog.DiscardHandler), webhook.Settings{
		URL:           receiver.URL + "/hooks/orders",
		Secret:        "shared-secret",
		AllowNetworks: []string{"127.0.0.1", "::1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = h.Handle(context.Background(), &worker.Job{ID: "order-42", Queue: "orders", Attempt: 1, Payload: []byte(`{"order":42}`)})
	fmt.Println("err:", err)

	// Settings are checked at once, each problem naming its key.
	_, err = webhook.New("orders", slog.New(slog.DiscardHandler), webhook.Settings{URL: "ftp://files.example.com"})
	fmt.Println(err)
	// Output:
	// /hooks/orders got job order-42, attempt 1: {"order":42}
	// err: <nil>
	// url: must be an http or https URL (got scheme "ftp")
}
