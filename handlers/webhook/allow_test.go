package webhook

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseHostPattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		entry   string
		want    hostPattern
		wantErr string
	}{
		{entry: "example.com", want: hostPattern{host: "example.com"}},
		{entry: "Example.COM.", want: hostPattern{host: "example.com"}},
		{entry: "example.com:8443", want: hostPattern{host: "example.com", port: "8443"}},
		{entry: "example.com:08443", want: hostPattern{host: "example.com", port: "8443"}},
		{entry: "*.example.com", want: hostPattern{host: ".example.com", wildcard: true}},
		{entry: "*.Example.com:443", want: hostPattern{host: ".example.com", wildcard: true, port: "443"}},
		{entry: "10.0.0.1", want: hostPattern{host: "10.0.0.1"}},
		{entry: "::1", want: hostPattern{host: "::1"}},
		{entry: "[0:0::1]", want: hostPattern{host: "::1"}},
		{entry: "[::1]:8080", want: hostPattern{host: "::1", port: "8080"}},
		{entry: "my_host", want: hostPattern{host: "my_host"}},

		{entry: "", wantErr: "is empty"},
		{entry: "*", wantErr: "would allow every host"},
		{entry: "*.", wantErr: "is not a valid wildcard"},
		{entry: "*.*.example.com", wantErr: "is not a valid wildcard"},
		{entry: "a.*.example.com", wantErr: "a wildcard may only be the first label"},
		{entry: "*example.com", wantErr: "a wildcard may only be the first label"},
		{entry: "https://example.com", wantErr: "is not a host"},
		{entry: "example.com/path", wantErr: "is not a host"},
		{entry: "example.com:", wantErr: "has an invalid port"},
		{entry: "example.com:0", wantErr: "has an invalid port"},
		{entry: "example.com:65536", wantErr: "has an invalid port"},
		{entry: "example.com:+1", wantErr: "has an invalid port"},
		{entry: "exa mple.com", wantErr: "is not a valid host name"},
		{entry: "a..b", wantErr: "is not a valid host name"},
		{entry: "a:b:c", wantErr: "is not a valid host name"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			t.Parallel()
			got, err := parseHostPattern(tt.entry)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseHostPattern(%q) = %+v, %v; want an error containing %q", tt.entry, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseHostPattern(%q) = %+v, %v; want %+v", tt.entry, got, err, tt.want)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		url     string
		want    bool
	}{
		{"*.example.com", "https://a.example.com/x", true},
		{"*.example.com", "https://a.b.example.com/x", true},
		{"*.example.com", "https://A.Example.COM/x", true},
		{"*.example.com", "https://a.example.com./x", true},
		{"*.example.com", "https://a.example.com:8443/x", false},
		{"*.example.com:8443", "https://a.example.com:8443/x", true},
		{"*.example.com", "https://example.com/x", false},
		{"*.example.com", "https://evil-example.com/x", false},
		{"*.example.com", "https://aexample.com/x", false},
		{"*.example.com", "https://a.example.com.evil.net/x", false},
		{"*.example.com", "https://.example.com/x", false},
		{"*.0.0.1", "http://10.0.0.1/x", false},

		{"example.com", "https://example.com/x", true},
		{"example.com", "http://example.com/x", true},
		{"example.com", "http://example.com:80/x", true},
		{"example.com", "https://example.com:443/x", true},
		{"example.com", "http://example.com:8080/x", false},
		{"example.com", "http://example.com:443/x", false},
		{"example.com", "https://example.com:80/x", false},
		{"example.com", "https://a.example.com/x", false},
		{"example.com", "https://example.com.evil.net/x", false},
		{"example.com", "https://user@example.com/x", true},
		{"example.com", "https://example.com@evil.net/x", false},

		{"example.com:8443", "https://example.com:8443/x", true},
		{"example.com:8443", "https://example.com:08443/x", true},
		{"example.com:8443", "https://example.com/x", false},
		{"example.com:443", "https://example.com/x", true},
		{"example.com:443", "http://example.com/x", false},
		{"example.com:80", "http://example.com/x", true},

		{"10.0.0.1", "http://10.0.0.1:9000/x", false},
		{"10.0.0.1", "http://10.0.0.1/x", true},
		{"10.0.0.1", "http://10.0.0.2/x", false},
		{"[::1]:8080", "http://[0:0::1]:8080/x", true},
		{"::1", "http://[::1]/x", true},
		{"example.com", "http://example.com:0/x", false},
		{"example.com", "http://example.com:99999/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.url, func(t *testing.T) {
			t.Parallel()
			p, err := parseHostPattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := allowed([]hostPattern{p}, u); got != tt.want {
				t.Errorf("allowed(%q, %q) = %t; want %t", tt.pattern, tt.url, got, tt.want)
			}
		})
	}
}
