package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
)

// newLogger returns the logger the configuration asks for, writing to w.
// In JSON every duration attribute is a number of seconds, its key ending
// in _seconds (see secondsAttr); text stays as people read it ("1.5s").
func newLogger(w io.Writer, c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level)) // validated by config.Load
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: secondsAttr}))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// secondsAttr turns a duration attribute into float seconds under its key
// with the suffix _seconds ("lease": 30s becomes "lease_seconds": 30), as
// Prometheus names units: encoding/json would write an integer of
// nanoseconds, which no log pipeline reads as a duration.
func secondsAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	key := a.Key
	if !strings.HasSuffix(key, "_seconds") {
		key += "_seconds"
	}
	return slog.Float64(key, a.Value.Duration().Seconds())
}

// console is where the process writes what is neither a command's result
// nor its logger's: main's notices of signals, and the error a command
// ends with. They are plain lines ("courier: ..."), until a daemon command
// with JSON logs hands over its logger: from then on they are records of
// it, so that every line on stderr parses as JSON. A nil console writes
// nothing of its own (run's caller prints the error).
type console struct {
	w    io.Writer
	json atomic.Pointer[slog.Logger]
}

// useJSON makes the console write through log, a JSON logger.
func (c *console) useJSON(log *slog.Logger) {
	if c != nil {
		c.json.Store(log)
	}
}

// jsonLogs reports whether the console writes JSON records.
func (c *console) jsonLogs() bool { return c != nil && c.json.Load() != nil }

// notice writes msg, with attrs when it is a JSON record.
func (c *console) notice(msg string, attrs ...any) {
	if log := c.json.Load(); log != nil {
		log.Warn(msg, attrs...)
		return
	}
	fmt.Fprintf(c.w, "courier: %s\n", msg)
}

// failed writes the error command name ended with, as a JSON record.
func (c *console) failed(name string, f failure) {
	attrs := []any{"command", name, "exit_code", f.code, "code", string(f.reply.Code), "err", f.reply.Message}
	if f.reply.Field != "" {
		attrs = append(attrs, "field", f.reply.Field)
	}
	c.json.Load().Error("courier "+name+" failed", attrs...) // #nosec G706 -- a JSON record: the message and values are quoted
}

// daemonLogger returns the logger of run and dev, and hands it to the
// console when it writes JSON.
func daemonLogger(std streams, c config.Log) *slog.Logger {
	log := newLogger(std.err, c)
	if c.Format == "json" {
		std.console.useJSON(log)
	}
	return log
}

// earlyJSONLogs makes the console write JSON before the configuration is
// loaded, for a configuration that fails to load, when --log-format or
// COURIER_LOG__FORMAT asks for JSON (a file that does cannot be read
// then).
func earlyJSONLogs(std streams, flagValue string) {
	if flagValue == "json" || flagValue == "" && os.Getenv(config.EnvPrefix+"LOG__FORMAT") == "json" {
		std.console.useJSON(newLogger(std.err, config.Log{Level: "info", Format: "json"}))
	}
}
