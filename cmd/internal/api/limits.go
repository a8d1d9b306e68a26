package api

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Limits bound what one request may carry. Zero fields take defaults.
type Limits struct {
	// MaxPayloadBytes sizes the body of a single enqueue (SingleBodyBytes):
	// the backend's worker.Config.MaxPayloadBytes, which the library
	// holds every payload to. Default worker.MaxPayloadBytesDefault.
	MaxPayloadBytes int
	// MaxBatch is the most jobs of a batch request, 1 to MaxBatchLimit.
	// Default MaxBatchLimit.
	MaxBatch int
	// MaxBodyBytes bounds a batch request's body (a single job's body is
	// bounded by its payload limit: SingleBodyBytes). Default 16 MiB.
	MaxBodyBytes int

	// maxWait bounds a job's durability.timeout: set by New from the
	// time a request may take (maxWaitOf); 0 = only the library's bound.
	maxWait time.Duration
}

// Bounds of a request.
const (
	// MaxBatchLimit is the largest Limits.MaxBatch: a batch is one script
	// call, and a script call holds at most 1,000 jobs.
	MaxBatchLimit = 1000
	// MaxBodyBytesDefault is the default of Limits.MaxBodyBytes.
	MaxBodyBytesDefault = 16 << 20
	// envelopeBytes is what a single job's body may hold beyond its
	// payload: the other fields and white space.
	envelopeBytes = 64 << 10
)

func (l Limits) withDefaults() (Limits, error) {
	l.MaxPayloadBytes = cmp.Or(l.MaxPayloadBytes, worker.MaxPayloadBytesDefault)
	l.MaxBatch = cmp.Or(l.MaxBatch, MaxBatchLimit)
	l.MaxBodyBytes = cmp.Or(l.MaxBodyBytes, MaxBodyBytesDefault)
	switch {
	case l.MaxPayloadBytes < 0 || l.MaxPayloadBytes > worker.MaxPayloadBytesLimit:
		return l, fmt.Errorf("api: MaxPayloadBytes %d out of range", l.MaxPayloadBytes)
	case l.MaxBatch < 1 || l.MaxBatch > MaxBatchLimit:
		return l, fmt.Errorf("api: MaxBatch must be 1 to %d (got %d)", MaxBatchLimit, l.MaxBatch)
	case l.MaxBodyBytes < 0:
		return l, errors.New("api: negative MaxBodyBytes")
	}
	return l, nil
}

// SingleBodyBytes is the largest body of a single enqueue: a payload at
// the limit in base64, plus the envelope.
func (l Limits) SingleBodyBytes() int {
	return base64.StdEncoding.EncodedLen(l.MaxPayloadBytes) + envelopeBytes
}

// BatchBodyBytes is the largest body of a batch: MaxBodyBytes, but never
// less than what one job may need.
func (l Limits) BatchBodyBytes() int { return max(l.MaxBodyBytes, l.SingleBodyBytes()) }
