package webhook_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// problems splits an error from New into one message per problem.
func problems(err error) []string {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return msgs
}

func TestNewValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    webhook.Settings
	}{
		{"url only", webhook.Settings{URL: "https://example.com/hook"}},
		{"http", webhook.Settings{URL: "http://93.184.215.14:8080/"}},
		{"url in an allowed network", webhook.Settings{URL: "http://10.0.0.1:8080/", AllowNetworks: []string{"10.0.0.0/8"}}},
		{"url an allowed address", webhook.Settings{URL: "http://[::1]:8080/", AllowNetworks: []string{"::1"}}},
		{"url a name", webhook.Settings{URL: "http://localhost:8080/"}},
		{"signature v1", webhook.Settings{URL: "https://example.com/hook", Secret: "s", SignatureVersion: 1}},
		{"allow_hosts only", webhook.Settings{AllowHosts: []string{"example.com", "*.example.net:8443"}}},
		{"everything", webhook.Settings{
			URL:              "https://user:pw@example.com/hook?k=v",
			Secret:           "s",
			Timeout:          time.Second,
			Headers:          map[string]string{"Authorization": "Bearer x", "X-Tab": "a\tb", "User-Agent": "me"},
			ContentType:      "application/cloudevents+json; charset=utf-8",
			AllowHosts:       []string{"[::1]:9000"},
			AllowNetworks:    []string{"::1/128", "10.1.2.3", "192.168.0.0/16", "0.0.0.0/0"},
			PathSecret:       true,
			SignatureVersion: 2,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := webhook.New("q", slog.New(slog.DiscardHandler), tt.s); err != nil {
				t.Fatalf("New = %v; want nil", err)
			}
		})
	}
}

func TestNewInvalid(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/hook"
	tests := []struct {
		name   string
		s      webhook.Settings
		nilLog bool
		want   []string // one prefix per problem, in order
	}{
		{name: "nothing", want: []string{"url: is required (or set allow_hosts so that jobs name their own URL)"}},
		{name: "nil logger", s: webhook.Settings{URL: url}, nilLog: true, want: []string{"logger: is nil"}},
		{name: "relative url", s: webhook.Settings{URL: "/hook"}, want: []string{`url: must be an http or https URL (got scheme "")`}},
		{name: "ftp url", s: webhook.Settings{URL: "ftp://example.com/"}, want: []string{`url: must be an http or https URL (got scheme "ftp")`}},
		{name: "no host", s: webhook.Settings{URL: "https:///hook"}, want: []string{"url: has no host"}},
		{name: "opaque", s: webhook.Settings{URL: "https:example.com"}, want: []string{"url: has no host"}},
		{name: "bad port", s: webhook.Settings{URL: "https://example.com:x/"}, want: []string{"url: is not a valid URL: "}},
		{name: "control character", s: webhook.Settings{URL: "https://example.com/\n"}, want: []string{"url: is not a valid URL: "}},
		{name: "negative timeout", s: webhook.Settings{URL: url, Timeout: -time.Second}, want: []string{"timeout: must be positive (got -1s)"}},
		{name: "content type", s: webhook.Settings{URL: url, ContentType: "json"}, want: []string{"content_type: is not a media type: "}},
		{name: "header name", s: webhook.Settings{URL: url, Headers: map[string]string{"X Foo": "v"}},
			want: []string{`headers."X Foo": is not a valid header name`}},
		{name: "empty header name", s: webhook.Settings{URL: url, Headers: map[string]string{"": "v"}},
			want: []string{`headers."": is not a valid header name`}},
		{name: "header value", s: webhook.Settings{URL: url, Headers: map[string]string{"X-Foo": "a\r\nInjected: 1"}},
			want: []string{"headers.X-Foo: value holds a control character"}},
		{name: "reserved headers", s: webhook.Settings{URL: url, Headers: map[string]string{
			"content-type": "text/plain", "Courier-Job-Id": "x", "courier-extra": "x",
			"Host": "h", "Content-Length": "1", "Transfer-Encoding": "chunked", "Connection": "close",
		}}, want: []string{
			"headers.Connection: is set by the HTTP client",
			"headers.Content-Length: is set by the HTTP client",
			"headers.Courier-Job-Id: the Courier- prefix is reserved",
			"headers.Host: is set by the HTTP client",
			"headers.Transfer-Encoding: is set by the HTTP client",
			"headers.content-type: is set by content_type",
			"headers.courier-extra: the Courier- prefix is reserved",
		}},
		{name: "repeated header", s: webhook.Settings{URL: url, Headers: map[string]string{"X-Key": "a", "x-key": "b"}},
			want: []string{"headers.x-key: repeats headers.X-Key"}},
		{name: "allow_hosts", s: webhook.Settings{AllowHosts: []string{"ok.example.com", "", "*", "https://example.com"}},
			want: []string{"allow_hosts[1]: is empty", `allow_hosts[2]: "*" would allow every host`, `allow_hosts[3]: "https://example.com" is not a host`}},
		{name: "url a loopback address", s: webhook.Settings{URL: "http://127.0.0.1:6379/"},
			want: []string{"url: 127.0.0.1 is a loopback address; list its network in allow_networks to allow it"}},
		{name: "url a mapped loopback address", s: webhook.Settings{URL: "http://[::ffff:127.0.0.1]/"},
			want: []string{"url: 127.0.0.1 is a loopback address"}},
		{name: "url a private address", s: webhook.Settings{URL: "https://192.168.1.1/", AllowNetworks: []string{"10.0.0.0/8"}},
			want: []string{"url: 192.168.1.1 is a private address"}},
		{name: "url a link-local address", s: webhook.Settings{URL: "http://[fe80::1%25eth0]/"},
			want: []string{"url: fe80::1 is a link-local address"}},
		{name: "url the metadata service", s: webhook.Settings{URL: "http://169.254.169.254/latest/meta-data/"},
			want: []string{"url: 169.254.169.254 is a link-local address"}},
		{name: "allow_networks", s: webhook.Settings{URL: url, AllowNetworks: []string{
			"10.0.0.0/8", "", "10.0.0.0", "example.com", "10.1.0.0/8", "::ffff:10.0.0.0/104", "fe80::1%eth0", "10.0.0.0/33",
		}}, want: []string{
			"allow_networks[1]: is empty",
			`allow_networks[3]: "example.com" is not a network`,
			`allow_networks[4]: "10.1.0.0/8" has bits set past its prefix length; did you mean 10.0.0.0/8?`,
			`allow_networks[5]: "::ffff:10.0.0.0/104" is an IPv4-mapped IPv6 prefix`,
			`allow_networks[6]: "fe80::1%eth0" has a zone`,
			`allow_networks[7]: "10.0.0.0/33" is not a network`,
		}},
		{name: "signature_version", s: webhook.Settings{URL: url, SignatureVersion: 3},
			want: []string{"signature_version: must be 1 or 2 (got 3)"}},
		{name: "every key", nilLog: true, s: webhook.Settings{
			URL: "gopher://x", Timeout: -1, ContentType: "/", Headers: map[string]string{"Host": "x"}, AllowHosts: []string{""},
			AllowNetworks: []string{"x"}, SignatureVersion: -1,
		}, want: []string{"logger: ", "allow_networks[0]: ", "url: ", "timeout: ", "content_type: ", "headers.Host: ", "allow_hosts[0]: ", "signature_version: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := slog.New(slog.DiscardHandler)
			if tt.nilLog {
				log = nil
			}
			h, err := webhook.New("q", log, tt.s)
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", h)
			}
			got := problems(err)
			if len(got) != len(tt.want) {
				t.Fatalf("New: %d problems %q; want %d", len(got), got, len(tt.want))
			}
			for i, msg := range got {
				if !strings.HasPrefix(msg, tt.want[i]) {
					t.Errorf("problem %d = %q; want prefix %q", i, msg, tt.want[i])
				}
			}
		})
	}
}

// Settings errors name the key, never the secret or a header value.
func TestNewErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	s := webhook.Settings{
		URL:     "https://user:pa55word@example.com:bad/?token=t0ken",
		Secret:  "s3cret",
		Headers: map[string]string{"Authorization": "Bearer t0k3n\n", "Host": "h0st-value"},
	}
	_, err := webhook.New("q", slog.New(slog.DiscardHandler), s)
	if err == nil {
		t.Fatal("New = nil; want an error")
	}
	for _, hidden := range []string{"pa55word", "t0ken", "s3cret", "t0k3n", "h0st-value"} {
		if strings.Contains(err.Error(), hidden) {
			t.Errorf("New = %q; it shows %q", err, hidden)
		}
	}
}
