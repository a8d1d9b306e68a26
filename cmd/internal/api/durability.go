package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// durabilityFields are the fields of a durability object, for
// unknown-field messages.
const durabilityFields = "replicas, timeout, aof"

// readDurability decodes the durability object raw at field ("durability",
// "jobs[3].durability"): {"replicas": 1, "timeout": "250ms", "aof": false}.
// The library checks it as it checks every worker.Durability; here only
// its timeout against the time this server gives a request (l.maxWait),
// a bound of the server, not of the job.
func readDurability(field string, raw json.RawMessage, l Limits) (worker.Durability, *Error) {
	var d worker.Durability
	prefix := field + "."
	err := readObject(json.NewDecoder(bytes.NewReader(raw)), prefix, rawMember(func(key string, raw json.RawMessage) *Error {
		f := fieldName(prefix, key)
		var err *Error
		switch key {
		case "replicas":
			if !isNull(raw) {
				d.Replicas, err = intField(f, raw)
			}
		case "timeout":
			if !isNull(raw) {
				d.Timeout, err = durationField(f, raw)
			}
		case "aof":
			if !isNull(raw) {
				d.AOF, err = boolField(f, raw)
			}
		default:
			return unknownField(f, durabilityFields)
		}
		return err
	}))
	if err != nil {
		return worker.Durability{}, err
	}
	if l.maxWait > 0 && d.Timeout > l.maxWait {
		return worker.Durability{}, invalidField(prefix+"timeout", fmt.Sprintf(
			"%s is longer than the API waits for replicas (%s: half of what it gives a request, see admin.write_timeout)", d.Timeout, l.maxWait))
	}
	return d, nil
}

// maxWaitOf is the longest durability timeout the API takes when a
// request's work may last work: half of it, the rest left for the write
// and the reply.
func maxWaitOf(work time.Duration) time.Duration { return work / 2 }

// notReplicated is the error member of an enqueue result that was stored
// but not confirmed on replicas (err matches worker.ErrNotReplicated).
// Why a wait got no answer is for the server's log, not the client: it
// may name Redis's address.
func notReplicated(err error) *wire.Error {
	var nr *worker.NotReplicatedError
	if errors.As(err, &nr) && nr.Err != nil {
		c := *nr
		c.Err = errors.New("the wait for them got no answer")
		err = &c
	}
	return &wire.Error{Code: wire.CodeNotReplicated, Message: err.Error()}
}

// replicatedFalse is the replicated member of such a result.
func replicatedFalse() *bool { return new(bool) }
