package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestTracingErrorsHideTheKey: a collector that refuses the export and
// echoes the key it got (as given, lower-cased and in base64) has its
// reply logged by courier run with the key blanked, whether the key comes
// from tracing.headers or from OTEL_EXPORTER_OTLP_HEADERS.
func TestTracingErrorsHideTheKey(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	const key = "Otlp-Key-0123456789-SECRET"
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got := r.Header.Get("Api-Key")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "unknown key %s (%s, %s)", got, strings.ToLower(got), base64.StdEncoding.EncodeToString([]byte(got)))
	}))
	t.Cleanup(collector.Close)
	for name, tc := range map[string]struct {
		yaml string
		env  []string
	}{
		"tracing.headers":            {yaml: "  headers: {api-key: " + key + "}\n"},
		"OTEL_EXPORTER_OTLP_HEADERS": {env: []string{"OTEL_EXPORTER_OTLP_HEADERS=api-key=" + key}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := writeConfig(t, fmt.Sprintf(`
redis: {addr: [%q], prefix: %s}
http: {addr: 127.0.0.1:0}
queues:
  ticks:
    handler: log
    periodic:
      tick: {every: 1s, payload: tick}
tracing:
  exporter: otlp
  protocol: http/protobuf
  endpoint: %s
%s`, testkit.SingleAddr(t), testkit.Prefix(t), collector.URL, tc.yaml))
			daemon := startCourier(t, append([]string{"OTEL_BSP_SCHEDULE_DELAY=100"}, tc.env...), "run", "--config", cfg)
			logged := daemon.waitOutput(regexp.MustCompile(`msg=tracing err=.*(unknown key .*)`), 30*time.Second)
			if !strings.Contains(logged, "[redacted]") {
				t.Errorf("the collector's reply is logged as %q; want the key blanked", logged)
			}
			out := strings.ToLower(daemon.stderr.String() + daemon.stdout.String())
			for _, form := range []string{key, base64.StdEncoding.EncodeToString([]byte(key))} {
				if strings.Contains(out, strings.ToLower(form)) {
					t.Errorf("the key is in the output, as %q:\n%s", form, out)
				}
			}
		})
	}
}
