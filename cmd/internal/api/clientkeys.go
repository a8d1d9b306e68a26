package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// keyLimitsBody is the body of PUT /v1/queues/{queue}/keys/{key}: nil
// concurrency is the queue's cap, weight 0 the default, nil rate limit
// the queue's ("" none).
type keyLimitsBody struct {
	Concurrency *int    `json:"concurrency,omitempty"`
	Weight      int     `json:"weight,omitempty"`
	RateLimit   *string `json:"rate_limit,omitempty"`
}

// Keys reads queue's n keys with the most waiting jobs, as
// admin.Client.Keys does, through GET /v1/queues/{queue}/keys?limit=n.
// A key's default weight reads 1 (admin.Client's reads 0).
func (c *Client) Keys(ctx context.Context, queue string, n int) (admin.KeyList, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return admin.KeyList{}, err
	}
	var out wire.KeyList
	if err := c.do(ctx, http.MethodGet, queuePath(queue)+"/keys?limit="+strconv.Itoa(n), nil, &out); err != nil {
		return admin.KeyList{}, err
	}
	l, err := out.List()
	if err != nil {
		return admin.KeyList{}, fmt.Errorf("courier API: %w", err)
	}
	return l, nil
}

// Key reads what queue holds of key, as admin.Client.Key does, through
// GET /v1/queues/{queue}/keys/{key}.
func (c *Client) Key(ctx context.Context, queue, key string) (admin.KeyStats, error) {
	if err := validateKeyRef(queue, key); err != nil {
		return admin.KeyStats{}, err
	}
	var out wire.Key
	if err := c.do(ctx, http.MethodGet, keyPath(queue, key), nil, &out); err != nil {
		return admin.KeyStats{}, err
	}
	s, err := out.Stats()
	if err != nil {
		return admin.KeyStats{}, fmt.Errorf("courier API: %w", err)
	}
	return s, nil
}

// SetKeyLimits sets key's own limits in queue, as admin.Client.SetKeyLimits
// does, through PUT /v1/queues/{queue}/keys/{key}; admin.DefaultKeyLimits
// removes them. Limits out of bounds are an error naming Concurrency,
// Weight or RateLimit, as the library's.
func (c *Client) SetKeyLimits(ctx context.Context, queue, key string, l admin.KeyLimits) error {
	if err := validateKeyRef(queue, key); err != nil {
		return err
	}
	body := keyLimitsBody{Weight: l.Weight}
	if l.Concurrency != -1 {
		body.Concurrency = &l.Concurrency
	}
	if l.RateLimit != nil {
		text := l.RateLimit.String()
		body.RateLimit = &text
	}
	return c.do(ctx, http.MethodPut, keyPath(queue, key), body, nil)
}

// validateKeyRef checks a queue name and a job key as admin.Client does:
// a bad key is a validation error of field Key.
func validateKeyRef(queue, key string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	return worker.ValidateKey(key)
}

func keyPath(queue, key string) string { return queuePath(queue) + "/keys/" + url.PathEscape(key) }
