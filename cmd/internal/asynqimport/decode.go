package asynqimport

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// task is what the import reads of one asynq task: the fields of asynq's
// TaskMessage (its internal/proto/asynq.proto, field numbers in the
// comments) that have a place in Courier.
type task struct {
	Type         string            // 1
	Payload      []byte            // 2
	ID           string            // 3
	Queue        string            // 4
	Retry        int64             // 5: max retries
	Retried      int64             // 6: retries spent
	ErrorMsg     string            // 7
	Timeout      int64             // 8: seconds, 0 = none
	Deadline     int64             // 9: Unix seconds, 0 = none
	UniqueKey    string            // 10: the Redis key of its uniqueness lock
	LastFailedAt int64             // 11: Unix seconds
	Retention    int64             // 12: seconds
	GroupKey     string            // 14
	Headers      map[string]string // 15
}

// decodeTask reads an encoded TaskMessage. Unknown fields are skipped, as
// protobuf readers do.
func decodeTask(b []byte) (task, error) {
	var t task
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return t, fmt.Errorf("task message: %w", protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		switch {
		case typ == protowire.BytesType && num != 15:
			var v []byte
			v, n = protowire.ConsumeBytes(b)
			switch num {
			case 1:
				t.Type = string(v)
			case 2:
				t.Payload = append([]byte(nil), v...)
			case 3:
				t.ID = string(v)
			case 4:
				t.Queue = string(v)
			case 7:
				t.ErrorMsg = string(v)
			case 10:
				t.UniqueKey = string(v)
			case 14:
				t.GroupKey = string(v)
			}
		case typ == protowire.BytesType: // 15: one map entry
			var v []byte
			v, n = protowire.ConsumeBytes(b)
			if n >= 0 {
				err = t.header(v)
			}
		case typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(b)
			switch num {
			case 5:
				t.Retry = signed(v)
			case 6:
				t.Retried = signed(v)
			case 8:
				t.Timeout = signed(v)
			case 9:
				t.Deadline = signed(v)
			case 11:
				t.LastFailedAt = signed(v)
			case 12:
				t.Retention = signed(v)
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return t, fmt.Errorf("task message field %d: %w", num, protowire.ParseError(n))
		}
		if err != nil {
			return t, err
		}
		b = b[n:]
	}
	if t.ID == "" {
		return t, errors.New("task message has no id")
	}
	return t, nil
}

// header reads one entry of the headers map: key = field 1, value = 2.
func (t *task) header(b []byte) error {
	var k, v string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("task message header: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
		} else {
			var s []byte
			s, n = protowire.ConsumeBytes(b)
			switch num {
			case 1:
				k = string(s)
			case 2:
				v = string(s)
			}
		}
		if n < 0 {
			return fmt.Errorf("task message header: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	if t.Headers == nil {
		t.Headers = map[string]string{}
	}
	t.Headers[k] = v
	return nil
}

// signed is the integer a varint of an int32 or int64 field holds: both
// travel as the 64-bit two's complement of their value (an int32 sign
// extended), so the bits are the value.
func signed(v uint64) int64 { return int64(v) } // #nosec G115 -- two's complement, as protobuf encodes it
