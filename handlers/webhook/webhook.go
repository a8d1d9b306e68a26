package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Name selects the handler in queues.<name>.handler and names its settings
// section.
const Name = "webhook"

// The headers the handler sets on every request, besides Content-Type.
const (
	HeaderJobID     = "Courier-Job-Id"    // the job's id: dedupe on it, delivery is at least once
	HeaderQueue     = "Courier-Queue"     // the job's queue
	HeaderAttempt   = "Courier-Attempt"   // the attempt, from 1, in decimal
	HeaderTimestamp = "Courier-Timestamp" // when the request was signed, in Unix seconds
	HeaderSignature = "Courier-Signature" // Sign's result; only when a secret is set
)

// userAgent is sent unless Settings.Headers names another.
const userAgent = "courier-webhook"

// idleConnsPerHost keeps enough idle connections for a queue's concurrent
// jobs to reuse them; net/http's default of 2 would make most of them dial.
const idleConnsPerHost = 32

// New returns a handler that POSTs the jobs of queue as Settings and the
// package doc describe, logging to log. Invalid settings give one error per
// problem, joined, each starting with the setting's key.
func New(queue string, log *slog.Logger, s Settings) (worker.Handler, error) {
	var errs []error
	if log == nil {
		errs = append(errs, errors.New("logger: is nil"))
	}
	c, problems := s.parse()
	if err := errors.Join(append(errs, problems...)...); err != nil {
		return nil, err
	}
	return &handler{
		cfg:    c,
		client: newClient(),
		log:    log.With("queue", queue, "handler", Name),
	}, nil
}

// newClient returns a client of its own, so that no other code's settings
// reach it, that does not follow redirects: a redirect could lead a request
// off the allowed hosts, and would turn the POST into a GET.
func newClient() *http.Client {
	var tr *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = dt.Clone()
	} else {
		tr = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	tr.MaxIdleConnsPerHost = idleConnsPerHost
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type handler struct {
	cfg    config
	client *http.Client
	log    *slog.Logger
}

var _ worker.Handler = (*handler)(nil)

// Handle POSTs job and maps the response to the job's outcome.
func (h *handler) Handle(ctx context.Context, job *worker.Job) error {
	target, body, err := h.cfg.route(job.Payload)
	if err != nil {
		return worker.Permanent(fmt.Errorf("webhook: %w", err))
	}
	where := display(target)

	reqCtx, cancel := context.WithTimeout(ctx, h.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return worker.Permanent(fmt.Errorf("webhook POST %s: %w", where, withoutURL(err)))
	}
	h.setHeaders(req.Header, job, body)

	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return h.sendError(ctx, reqCtx, where, err)
	}
	// Read a little and close, so that the connection can be reused; a
	// body cut short only shortens the error message.
	head, _ := io.ReadAll(io.LimitReader(resp.Body, responseReadMax))
	resp.Body.Close()
	err = h.cfg.outcome(where, resp, head, time.Now())
	if err == nil {
		h.log.LogAttrs(ctx, slog.LevelDebug, "webhook delivered",
			slog.String("id", job.ID), slog.String("url", where),
			slog.Int("status", resp.StatusCode), slog.Duration("elapsed", time.Since(start)))
	}
	return err
}

// setHeaders sets the request headers: the configured ones, then the ones
// the handler owns.
func (h *handler) setHeaders(hdr http.Header, job *worker.Job, body []byte) {
	for name, values := range h.cfg.header {
		hdr[name] = slices.Clone(values)
	}
	if hdr.Get("User-Agent") == "" {
		hdr.Set("User-Agent", userAgent)
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	hdr.Set("Content-Type", h.cfg.contentType)
	hdr.Set(HeaderJobID, job.ID)
	hdr.Set(HeaderQueue, job.Queue)
	hdr.Set(HeaderAttempt, strconv.Itoa(job.Attempt))
	hdr.Set(HeaderTimestamp, ts)
	if h.cfg.secret != nil {
		hdr.Set(HeaderSignature, Sign(h.cfg.secret, ts, body))
	}
}

// sendError explains a request that got no response. When the job's own
// context ended, the error wraps its cause (ErrShutdown, ErrJobTimeout,
// ErrLeaseLost) for the daemon; otherwise it is a plain, retryable error.
func (h *handler) sendError(ctx, reqCtx context.Context, where string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("webhook POST %s: %w", where, context.Cause(ctx))
	}
	err = withoutURL(err)
	if reqCtx.Err() != nil {
		return fmt.Errorf("webhook POST %s: no response within %s: %w", where, h.cfg.timeout, err)
	}
	return fmt.Errorf("webhook POST %s: %w", where, err)
}

// withoutURL strips a *url.Error down to its cause: its message repeats the
// URL, query included, which may hold credentials.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
