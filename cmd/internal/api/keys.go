package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Bounds of GET /v1/queues/{queue}/keys.
const (
	// KeysLimitDefault is how many keys the list holds when the request
	// asks for no limit.
	KeysLimitDefault = 100
	// KeysLimitMax is the most keys one list holds (admin.Client.Keys's
	// bound).
	KeysLimitMax = 1000
)

// keyLimitsBodyBytes bounds the body of PUT /v1/queues/{queue}/keys/{key}:
// two numbers.
const keyLimitsBodyBytes = 1 << 10

// keyLimitsFields are the members of a key's limits.
const keyLimitsFields = "concurrency, weight, rate_limit"

// GET /v1/queues/{queue}/keys?limit=: the queue's job keys with the most
// waiting jobs, most first, with their running jobs and own limits, and
// how many keys have waiting jobs.
func (h *Handler) listKeys(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	values, apiErr := queryValues(c.r.URL.RawQuery, "limit")
	if apiErr != nil {
		return 0, nil, apiErr
	}
	limit := KeysLimitDefault
	if v, ok := values["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > KeysLimitMax {
			return 0, nil, invalidField("limit", fmt.Sprintf("must be a whole number from 1 to %d (got %q)", KeysLimitMax, v))
		}
		limit = n
	}
	l, err := c.backend.Keys(c.ctx, queue, limit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.KeyListOf(l), nil
}

// GET /v1/queues/{queue}/keys/{key}: one key's waiting and running jobs
// and its own limits; a key without jobs shows zeros.
func (h *Handler) getKey(c *call) (int, any, error) {
	queue, key, apiErr := pathKey(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	return h.viewKey(c, queue, key)
}

// PUT /v1/queues/{queue}/keys/{key}: set the key's own cap, weight and
// rate limit, {"concurrency": N, "weight": W, "rate_limit": "N per D"}; a
// member left out (or null) is the default (the queue's key_concurrency,
// weight 1, the queue's key_rate_limit). The limits hold on every
// partition at once; the reply is the key after the change.
func (h *Handler) setKeyLimits(c *call) (int, any, error) {
	queue, key, apiErr := pathKey(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	body, apiErr := readBody(c.w, c.r, keyLimitsBodyBytes)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	l, apiErr := decodeKeyLimits(body)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.SetKeyLimits(c.ctx, queue, key, l); err != nil {
		return 0, nil, err
	}
	return h.viewKey(c, queue, key)
}

// DELETE /v1/queues/{queue}/keys/{key}: the key's own limits removed,
// so the queue's apply to it again; the reply is the key after.
func (h *Handler) resetKeyLimits(c *call) (int, any, error) {
	queue, key, apiErr := pathKey(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.SetKeyLimits(c.ctx, queue, key, admin.DefaultKeyLimits); err != nil {
		return 0, nil, err
	}
	return h.viewKey(c, queue, key)
}

// viewKey replies with what queue holds of key.
func (h *Handler) viewKey(c *call, queue, key string) (int, any, error) {
	s, err := c.backend.Key(c.ctx, queue, key)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.KeyOf(s), nil
}

// pathKey returns the valid queue name and job key of the path; a key
// follows the id rules (worker.JobSpec.Key).
func pathKey(r *http.Request) (queue, key string, err *Error) {
	if queue, err = pathQueue(r); err != nil {
		return "", "", err
	}
	key = r.PathValue("key")
	if verr := worker.ValidateID(key); verr != nil {
		return "", "", fieldError("key", verr)
	}
	return queue, key, nil
}

// decodeKeyLimits reads a key's limits, {"concurrency", "weight",
// "rate_limit"}: whole numbers and a rate limit as the configuration
// writes one ("100 per 1s"; "" for none), each null or left out for the
// default. Their bounds are the library's (admin.Client.SetKeyLimits),
// which names the field.
func decodeKeyLimits(body []byte) (admin.KeyLimits, *Error) {
	if err := checkBody(body); err != nil {
		return admin.KeyLimits{}, err
	}
	l := admin.DefaultKeyLimits
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		return readObject(dec, "", rawMember(func(key string, raw json.RawMessage) *Error {
			var err *Error
			switch {
			case key != "concurrency" && key != "weight" && key != "rate_limit":
				return unknownField(fieldName("", key), keyLimitsFields)
			case isNull(raw):
			case key == "concurrency":
				l.Concurrency, err = intField(key, raw)
			case key == "weight":
				l.Weight, err = intField(key, raw)
			default:
				l.RateLimit, err = rateLimitField(key, raw)
			}
			return err
		}))
	})
	if err != nil {
		return admin.KeyLimits{}, err
	}
	return l, nil
}

// rateLimitField reads a rate limit, "N per DURATION" or "N/DURATION"
// (worker.ParseRateLimit); "" is none.
func rateLimitField(field string, raw json.RawMessage) (*worker.RateLimit, *Error) {
	s, err := stringField(field, raw)
	if err != nil {
		return nil, err
	}
	r, perr := worker.ParseRateLimit(s)
	if perr != nil {
		return nil, fieldError(field, perr)
	}
	return &r, nil
}
