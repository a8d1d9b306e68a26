package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestAdminTokenStrength: tokens a person made up are refused, the output of
// a random generator is accepted.
func TestAdminTokenStrength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		token  string
		refuse bool
	}{
		{"a word repeated", "passwordpassword", true},
		{"one character", "aaaaaaaaaaaaaaaa", true},
		{"the alphabet", "abcdefghijklmnop", true},
		{"the hex digits in order", "0123456789abcdef", true},
		{"a password with a counting suffix", "Password12345678", true},
		{"a short period", "abcabcabcabcabcabc", true},
		{"openssl rand -hex 32", "4cb1c03380ee3d06f5449b7110d65315d0fd5f45240699ab401095d3484df5d6", false},
		{"openssl rand -hex 16", "ea0861e1ec7f45a4576a2f36b53a2c1c", false},
		{"openssl rand -base64 32", "Wtxb9qRYW43RtDZujfD1oxT8c49aPhcBkSbr9M4npNU=", false},
		{"16 random hex digits: exactly 64 bits", "3f9a1c7e5b2d8046", false},
		{"16 random upper-case hex digits", "3F9A1C7E5B2D8046", false},
		{"diceware-like", "correct-horse-battery-staple-x9", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(Sources{File: writeFile(t, fmt.Sprintf("admin:\n  tokens:\n    - {name: a, token: %q, role: admin}\n", tt.token))})
			if !tt.refuse {
				if err != nil {
					t.Errorf("Load refused %s: %v", tt.token, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) != 1 {
				t.Fatalf("Load: %v; want one problem", err)
			}
			p := e.Problems[0]
			const advice = `; want at least 64): generate one with "openssl rand -hex 32"`
			if p.Key != "admin.tokens[0].token" || !strings.HasPrefix(p.Message, "is too easy to guess (about ") ||
				!strings.Contains(p.Message, " bits of entropy"+advice) {
				t.Errorf("problem %s: %s; want admin.tokens[0].token: is too easy to guess (about N bits of entropy%s", p.Key, p.Message, advice)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Errorf("the message shows the token: %v", err)
			}
		})
	}
}

// TestTokenEntropyBits: the estimate of each rule, on the boundary too.
func TestTokenEntropyBits(t *testing.T) {
	t.Parallel()
	lower, hex, alnum := math.Log2(26), math.Log2(16), math.Log2(62)
	tests := []struct {
		token string
		want  float64
	}{
		{"", 0},
		{"3f9a1c7e5b2d8046", 16 * hex},           // exactly 64
		{"3F9A1C7E5B2D8046", 16 * hex},           // hex in upper case
		{"3F9a1c7e5b2d8046", 16 * alnum},         // mixed case is not hex
		{"7391046825", 10 * math.Log2(10)},       // digits alone
		{"qqqqqqqqqqqqqqqq", lower},              // one run
		{"aaaaaaaaaaaaaaaa", hex},                // a-f alone is hex
		{"xyzxyzxyzxyzxyzxyz", lower},            // the period "xyz", one run
		{"passwordpassword", 8 * lower},          // the period "password"
		{"passwordpasswordpa", 8 * lower},        // a partial last repetition
		{"0123456789abcdef", 2 * hex},            // two runs
		{"zyx-cba-987", 5 * math.Log2(26+10+32)}, // descending runs, symbols
		{"qqr", 3 * lower},                       // a pair is no run
		{"Password12345678", 9 * alnum},          // one run of eight
		{"correct-horse-battery-staple-x9", 31 * math.Log2(26+10+32)},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			t.Parallel()
			got := tokenEntropyBits(tt.token)
			if diff := got - tt.want; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("tokenEntropyBits(%q) = %v, want %v", tt.token, got, tt.want)
			}
		})
	}
}
