package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// do sends one request with in as its JSON body (nil: none) and decodes a
// 2xx reply into out (nil: ignored). Any other reply is an *Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // a JSON payload must arrive byte for byte
		if err := enc.Encode(in); err != nil {
			return err
		}
		body = &buf
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("courier API: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return fmt.Errorf("courier API: read the reply to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.replyError(resp, data)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("courier API: the reply to %s %s is not what was expected: %w", method, path, err)
	}
	return nil
}

// replyError turns an error reply into an *Error whose cause is the
// worker's error for the same case.
func (c *Client) replyError(resp *http.Response, data []byte) error {
	var reply struct {
		Error *wire.Error `json:"error"`
	}
	if json.Unmarshal(data, &reply) != nil || reply.Error == nil || reply.Error.Code == "" {
		snippet := strings.TrimSpace(string(data[:min(len(data), 200)]))
		return apiError(wire.CodeInternal, "", fmt.Sprintf("courier API at %s: HTTP %s: %s", c.base, resp.Status, snippet))
	}
	e := &Error{wireError: *reply.Error}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		e.retryAfter = time.Duration(s) * time.Second
	}
	switch e.Code {
	case wire.CodeInvalidField:
		e.cause = worker.ErrInvalid
		// A field the library validates reads as the library words it, so
		// that the two clients report a bad value alike.
		if field, ok := goField(e.Field); ok {
			if reason, ok := strings.CutPrefix(e.Message, "invalid "+e.Field+": "); ok {
				ve := &worker.ValidationError{Field: field, Reason: reason}
				e.cause, e.Message = ve, ve.Error()
			}
		}
	case wire.CodeUnknownField, wire.CodeInvalidJSON, wire.CodeTooLarge:
		e.cause = worker.ErrInvalid
	case wire.CodeNotFound:
		if e.Field == "id" {
			e.cause = worker.ErrNotFound
		}
	case wire.CodeConflict:
		e.cause = conflictCause(e)
	case wire.CodeUnavailable:
		if strings.Contains(e.Message, worker.ErrRedisOOM.Error()) {
			e.cause = worker.ErrRedisOOM
		}
		fallthrough
	default:
		e.Message = fmt.Sprintf("courier API at %s: %s (%s)", c.base, e.Message, e.Code)
	}
	return e
}

// RetryAfter is how long the server asked the client to wait (429, 503);
// 0 when it did not say.
func (e *Error) RetryAfter() time.Duration { return e.retryAfter }

// conflictCause is the library's sentinel for a 409 the API answered, a
// whole reply's or a batch item's.
func conflictCause(e *Error) error {
	switch {
	case e.Field == "queue":
		return admin.ErrQueueInUse
	case strings.Contains(e.Message, worker.ErrJobDead.Error()):
		return worker.ErrJobDead
	case e.Field == "unique_key" || strings.HasSuffix(e.Field, ".unique_key"):
		return worker.ErrUniqueKeyHeld
	}
	return worker.ErrDuplicate
}
