package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// apiReply is the API's reply to a request of the UI.
type apiReply struct {
	status int
	body   []byte
}

// failed returns the API's error and true when the request failed.
func (a apiReply) failed() (wire.Error, bool) {
	if a.status < http.StatusBadRequest {
		return wire.Error{}, false
	}
	var e wire.ErrorReply
	if json.Unmarshal(a.body, &e) != nil || e.Error.Message == "" {
		e.Error = wire.Error{Message: fmt.Sprintf("the API answered %d %s", a.status, http.StatusText(a.status))}
	}
	return e.Error, true
}

// decode reads a successful reply's body into v.
func (a apiReply) decode(v any) error {
	if err := json.Unmarshal(a.body, v); err != nil {
		return fmt.Errorf("decode the API's reply (status %d): %w", a.status, err)
	}
	return nil
}

// callAPI serves an API request on s's principal in process: method on
// path (under /v1/, its segments escaped), with body as JSON (nil for
// none). The request carries r's context and client address, so the
// API's rate limit, logs and timeouts see the operator's request.
func (h *Handler) callAPI(r *http.Request, s *session, method, path string, body any) (apiReply, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return apiReply{}, fmt.Errorf("encode the API request: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, path, rd)
	if err != nil {
		return apiReply{}, fmt.Errorf("build the API request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.RemoteAddr = r.RemoteAddr
	req.Host = r.Host
	rec := &recorder{header: make(http.Header)}
	h.opts.API.ServeAs(rec, req, s.p)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return apiReply{status: rec.status, body: rec.body.Bytes()}, nil
}

// apiPath is the API's path of queue followed by segments, each escaped.
func apiPath(queue string, segments ...string) string {
	var b strings.Builder
	b.WriteString("/v1/queues/")
	b.WriteString(url.PathEscape(queue))
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// recorder is the in-memory ResponseWriter of an API request served in
// process.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

var _ http.ResponseWriter = (*recorder)(nil)

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	return rec.body.Write(p)
}
