package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
)

// signaturePrefix names the signature scheme, so that a new one can be added
// beside it without breaking receivers.
const signaturePrefix = "v1="

// Sign returns the Courier-Signature value of a request: "v1=" followed by
// the lower-case hex HMAC-SHA256, keyed with secret, of timestamp, a dot and
// body. timestamp is the Courier-Timestamp value, in Unix seconds.
func Sign(secret []byte, timestamp string, body []byte) string {
	return signaturePrefix + hex.EncodeToString(mac(secret, timestamp, body).Sum(nil))
}

// Verify reports whether header, a Courier-Signature value, signs timestamp
// and body with secret. It compares in constant time, accepts upper-case
// hex, and reports false for an empty secret. It does not judge the
// timestamp: a receiver should also refuse one too far from its own clock,
// so that a captured request cannot be replayed later.
func Verify(secret []byte, timestamp string, body []byte, header string) bool {
	if len(secret) == 0 {
		return false
	}
	sig, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	return hmac.Equal(got, mac(secret, timestamp, body).Sum(nil))
}

func mac(secret []byte, timestamp string, body []byte) hash.Hash {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m
}
