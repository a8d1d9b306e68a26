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

	"go.opentelemetry.io/otel/propagation"

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
	HeaderTimestamp = "Courier-Timestamp" // when the request was made (and signed), in Unix seconds
	HeaderSignature = "Courier-Signature" // Sign's result; only when a secret is set
	HeaderJobKey    = "Courier-Job-Key"   // the job's key (worker.JobSpec.Key); only for a job that has one
)

// userAgent is sent unless Settings.Headers names another.
const userAgent = "courier-webhook"

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
	d := newDialer(c.policy)
	return &handler{
		cfg:    c,
		dial:   d,
		client: newClient(d),
		log:    log.With("queue", queue, "handler", Name),
	}, nil
}

type handler struct {
	cfg    config
	dial   *dialer // the client's dialer; tests replace its lookup
	client *http.Client
	log    *slog.Logger
}

var _ worker.Handler = (*handler)(nil)

// Handle POSTs job and maps the response to the job's outcome. Every error
// it returns passes through config.seal.
func (h *handler) Handle(ctx context.Context, job *worker.Job) error {
	target, body, err := h.cfg.route(job.Payload)
	if err != nil {
		return h.cfg.seal(worker.Permanent(fmt.Errorf("webhook: %w", err)), nil)
	}
	return h.cfg.seal(h.post(ctx, job, target, body), target)
}

// post sends one request and maps the response to the job's outcome.
func (h *handler) post(ctx context.Context, job *worker.Job, target *url.URL, body []byte) error {
	where := h.cfg.display(target)
	reqCtx, cancel := context.WithTimeout(ctx, h.cfg.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return worker.Permanent(fmt.Errorf("webhook POST %s: %w", where, withoutURL(err)))
	}
	h.setHeaders(req.Header, job, body)
	// The attempt's span (worker.Config.TracerProvider), if any, goes on
	// to the receiver: its own spans join the job's trace. Without a span
	// in ctx nothing is set.
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))

	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return h.sendError(ctx, reqCtx, where, err)
	}
	// Read a little and close, so that the connection can be reused; a
	// body cut short only shortens the error message.
	head, _ := io.ReadAll(io.LimitReader(resp.Body, responseReadMax))
	resp.Body.Close()
	err = h.cfg.outcome(where, resp, head, time.Now(), job.Key != "")
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
	if job.Key != "" {
		hdr.Set(HeaderJobKey, job.Key)
	}
	switch {
	case h.cfg.secret == nil:
	case h.cfg.sigVersion == SignatureV1:
		hdr.Set(HeaderSignature, signV1(h.cfg.secret, ts, body))
	default:
		hdr.Set(HeaderSignature, Sign(h.cfg.secret, Message{Timestamp: ts, Queue: job.Queue, JobID: job.ID, Attempt: job.Attempt, Body: body}))
	}
}

// sendError explains a request that got no response. A refused address
// fails the job permanently. When the job's own context ended, the error
// wraps its cause (ErrShutdown, ErrJobTimeout, ErrLeaseLost) for the
// daemon; otherwise it is a plain, retryable error.
func (h *handler) sendError(ctx, reqCtx context.Context, where string, err error) error {
	var refused *refusedError
	if errors.As(err, &refused) {
		// Nothing was sent, and the address will not change its kind.
		return worker.Permanent(fmt.Errorf("webhook POST %s: %w", where, refused))
	}
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
