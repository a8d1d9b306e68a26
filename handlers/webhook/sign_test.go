package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

func TestSign(t *testing.T) {
	t.Parallel()
	secret, ts, body := []byte("k"), "1700000000", []byte(`{"a":1}`)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("1700000000.{\"a\":1}"))
	want := "v1=" + hex.EncodeToString(m.Sum(nil))
	if got := webhook.Sign(secret, ts, body); got != want {
		t.Fatalf("Sign = %q; want %q", got, want)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secret, ts, body := []byte("k"), "1700000000", []byte(`{"a":1}`)
	good := webhook.Sign(secret, ts, body)
	tests := []struct {
		name   string
		secret []byte
		ts     string
		body   string
		header string
		want   bool
	}{
		{"good", secret, ts, string(body), good, true},
		{"upper-case hex", secret, ts, string(body), "v1=" + strings.ToUpper(good[3:]), true},
		{"other secret", []byte("K"), ts, string(body), good, false},
		{"other timestamp", secret, "1700000001", string(body), good, false},
		{"other body", secret, ts, `{"a":2}`, good, false},
		{"no prefix", secret, ts, string(body), good[3:], false},
		{"other scheme", secret, ts, string(body), "v2=" + good[3:], false},
		{"cut short", secret, ts, string(body), good[:len(good)-2], false},
		{"not hex", secret, ts, string(body), "v1=zz", false},
		{"empty header", secret, ts, string(body), "", false},
		{"empty secret", nil, ts, string(body), webhook.Sign(nil, ts, body), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := webhook.Verify(tt.secret, tt.ts, []byte(tt.body), tt.header); got != tt.want {
				t.Errorf("Verify = %t; want %t", got, tt.want)
			}
		})
	}
}
