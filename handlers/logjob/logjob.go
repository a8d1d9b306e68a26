// Package logjob is the built-in "log" handler: it logs one line per job and
// succeeds. It is for demos and smoke tests: point a queue at it to watch jobs
// flow through Courier without writing a handler.
//
// Each job gives one record with the message "job" at the configured level
// and the attributes queue, id, attempt and payload. A payload longer than
// payload_bytes is cut (at a character boundary when it is text) and the
// record adds payload_truncated=true and payload_size, the full size in
// bytes. A payload that is not valid UTF-8 is logged in standard base64, with
// payload_encoding=base64.
//
// Settings, under queues.<name>.log:
//
//	level          debug, info, warn or error. Default info.
//	payload_bytes  how many payload bytes to log, at most 65536. Default 256.
package logjob

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker"
)

// Name selects the handler in queues.<name>.handler and names its settings
// section.
const Name = "log"

// Defaults and limits of Settings.
const (
	LevelDefault        = "info"
	PayloadBytesDefault = 256
	PayloadBytesMax     = 64 << 10
)

// Settings configure the handler; zero values take the defaults.
type Settings struct {
	// Level is the level of each job's record: debug, info, warn or error,
	// in any case. Default info.
	Level string `koanf:"level"`
	// PayloadBytes is how many bytes of each payload to log, at most 65536.
	// Default 256.
	PayloadBytes int `koanf:"payload_bytes"`
}

// parseLevel maps the accepted level names to slog levels.
func parseLevel(name string) (slog.Level, bool) {
	switch strings.ToLower(name) {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}

// New returns a handler that logs each job to log and returns nil. Invalid
// settings give one error per problem, joined, each starting with the
// setting's key.
func New(log *slog.Logger, s Settings) (worker.Handler, error) {
	var errs []error
	if log == nil {
		errs = append(errs, errors.New("logger: is nil"))
	}
	if s.Level == "" {
		s.Level = LevelDefault
	}
	level, ok := parseLevel(s.Level)
	if !ok {
		errs = append(errs, fmt.Errorf("level: must be one of debug, info, warn, error (got %q)", s.Level))
	}
	switch {
	case s.PayloadBytes == 0:
		s.PayloadBytes = PayloadBytesDefault
	case s.PayloadBytes < 0:
		errs = append(errs, fmt.Errorf("payload_bytes: must not be negative (got %d)", s.PayloadBytes))
	case s.PayloadBytes > PayloadBytesMax:
		errs = append(errs, fmt.Errorf("payload_bytes: must be at most %d (got %d)", PayloadBytesMax, s.PayloadBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &handler{log: log, level: level, limit: s.PayloadBytes}, nil
}

type handler struct {
	log   *slog.Logger
	level slog.Level
	limit int // payload bytes to log
}

var _ worker.Handler = (*handler)(nil)

// Handle logs job and returns nil.
func (h *handler) Handle(ctx context.Context, job *worker.Job) error {
	if !h.log.Enabled(ctx, h.level) {
		return nil // spare the payload encoding
	}
	attrs := append([]slog.Attr{
		slog.String("queue", job.Queue),
		slog.String("id", job.ID),
		slog.Int("attempt", job.Attempt),
	}, payloadAttrs(job.Payload, h.limit)...)
	h.log.LogAttrs(ctx, h.level, "job", attrs...)
	return nil
}

// payloadAttrs describes the first limit bytes of p.
func payloadAttrs(p []byte, limit int) []slog.Attr {
	text := utf8.Valid(p)
	shown := p
	if len(p) > limit {
		n := limit
		// Cutting text inside a character would make it look binary.
		for text && n > 0 && !utf8.RuneStart(p[n]) {
			n--
		}
		shown = p[:n]
	}
	var attrs []slog.Attr
	if text {
		attrs = append(attrs, slog.String("payload", string(shown)))
	} else {
		attrs = append(attrs,
			slog.String("payload", base64.StdEncoding.EncodeToString(shown)),
			slog.String("payload_encoding", "base64"))
	}
	if len(shown) < len(p) {
		attrs = append(attrs, slog.Bool("payload_truncated", true), slog.Int("payload_size", len(p)))
	}
	return attrs
}
