package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Signature versions: the N of the "vN=" that starts a Courier-Signature
// value, and the values of Settings.SignatureVersion.
const (
	// SignatureV1 signs the timestamp and the body only. A captured
	// request can be replayed under another Courier-Job-Id, which a
	// receiver dedupes on, so it is only for receivers not yet upgraded.
	SignatureV1 = 1
	// SignatureV2 signs the timestamp, the queue, the job id, the attempt
	// and the body (see Sign).
	SignatureV2 = 2
)

// Message is what a v2 signature covers: the values of a request's
// Courier-* headers, and its body.
type Message struct {
	Timestamp string // Courier-Timestamp: Unix seconds, in decimal, as sent
	Queue     string // Courier-Queue
	JobID     string // Courier-Job-Id
	Attempt   int    // Courier-Attempt
	Body      []byte // the request body, byte for byte
}

// Sign returns the Courier-Signature value of a request: "v2=" followed by
// the lower-case hex HMAC-SHA256, keyed with secret, of
//
//	"v2\n" + Timestamp + "\n" + Queue + "\n" + JobID + "\n" + Attempt + "\n" + Body
//
// with Attempt in decimal. Newlines separate the fields unambiguously: a
// timestamp and an attempt are digits, a queue name is made of A-Z a-z
// 0-9 . _ - (worker.ValidateQueueName) and a job id holds no whitespace
// (worker.ValidateID), so that only the body, last, may hold a newline.
// Verify refuses a request whose queue or job id holds one.
func Sign(secret []byte, m Message) string {
	return "v2=" + hex.EncodeToString(macV2(secret, m))
}

func macV2(secret []byte, m Message) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("v2\n" + m.Timestamp + "\n" + m.Queue + "\n" + m.JobID + "\n" + strconv.Itoa(m.Attempt) + "\n"))
	h.Write(m.Body)
	return h.Sum(nil)
}

// signV1 returns a v1 Courier-Signature value: "v1=" followed by the hex
// HMAC-SHA256 of timestamp, a dot, and body.
func signV1(secret []byte, timestamp string, body []byte) string {
	return "v1=" + hex.EncodeToString(macV1(secret, timestamp, body))
}

func macV1(secret []byte, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(timestamp + "."))
	h.Write(body)
	return h.Sum(nil)
}
