package webhook_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// Text that came from outside the daemon reaches a job's error on one
// line, without anything a terminal would act on, whoever escapes it (a
// certificate's names, which nobody else escapes, are in TestTLSErrorEscaped).
func TestErrorsEscaped(t *testing.T) {
	t.Parallel()
	const hostile = "\x1b]0;pwned\x07\r\nstate: done\u202e\u0085"
	tests := []struct {
		name     string
		respond  http.HandlerFunc
		settings webhook.Settings
		payload  string
		want     string // part of the error
	}{
		{
			name: "response body",
			respond: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, hostile)
			},
			payload: `{}`,
			want:    "400 Bad Request: ]0;pwned state: done",
		},
		{
			name:     "envelope field name",
			settings: webhook.Settings{AllowHosts: []string{"example.com"}},
			payload:  `{"body":{},"\u001b]0;pwned\u0007\r\nstate: done\u202e":1}`,
			want:     `unknown field "\x1b]0;pwned`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			respond := tt.respond
			if respond == nil {
				respond = status(http.StatusOK)
			}
			rc := newReceiver(t, respond)
			s := tt.settings
			s.URL = rc.srv.URL
			err := newLocalHandler(t, s).Handle(t.Context(), newJob(tt.payload))
			if err == nil {
				t.Fatal("Handle = nil; want an error")
			}
			msg := err.Error()
			if i := strings.IndexFunc(msg, func(r rune) bool {
				return r < ' ' || r == 0x7f || 0x80 <= r && r < 0xa0 || r == '\u202e'
			}); i >= 0 {
				t.Errorf("error = %q; it holds %q at byte %d", msg, msg[i:i+1], i)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error = %q; want it to contain %q", msg, tt.want)
			}
		})
	}
}
