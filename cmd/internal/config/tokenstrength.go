package config

import "math"

// tokenEntropyBits estimates the bits of randomness in an API token, to
// refuse the ones a person made up ("passwordpassword") rather than drew
// from a random source. It is a rough upper bound, not a measure: it only
// has to put the output of `openssl rand` above AdminTokenMinBits and the
// usual human patterns below it.
//
// The estimate is the effective length times log2 of the pool:
//
//   - The pool is the character classes the token uses: 16 when it is
//     hexadecimal in one case (0-9a-f or 0-9A-F); otherwise the sum of
//     lower case 26, upper case 26, digits 10 and symbols (the other
//     printable ASCII characters) 32 over the classes present.
//   - The effective length discounts repetition. A token that repeats a
//     shorter period ("abcabcabc", "passwordpasswordpa") counts the period
//     only; in it, a run of three or more characters that repeats one
//     character or steps through ASCII one at a time, up or down ("aaa",
//     "abc", "123", "987"), counts as one character. Pairs are not
//     discounted: a random token has plenty of them by chance.
//
// A token of 16 random hex digits scores 64 bits unless chance put a run
// of three in it; `openssl rand -hex 32` scores about 256.
func tokenEntropyBits(token string) float64 {
	n := len(token)
	if n == 0 {
		return 0
	}

	var lower, upper, digit, symbol, hexLower, hexUpper bool
	hexLower, hexUpper = true, true
	for i := range n {
		switch c := token[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
			hexUpper = false
			hexLower = hexLower && c <= 'f'
		case 'A' <= c && c <= 'Z':
			upper = true
			hexLower = false
			hexUpper = hexUpper && c <= 'F'
		case '0' <= c && c <= '9':
			digit = true
		default:
			symbol = true
			hexLower, hexUpper = false, false
		}
	}
	pool := 0
	for _, class := range []struct {
		used bool
		size int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {symbol, 32}} {
		if class.used {
			pool += class.size
		}
	}
	if hexLower || hexUpper {
		pool = min(pool, 16) // digits alone stay 10
	}

	// The shortest period, from the failure function of Knuth-Morris-Pratt:
	// token[i] == token[i-period] for every i >= period.
	fail := make([]int, n)
	for i, k := 1, 0; i < n; i++ {
		for k > 0 && token[i] != token[k] {
			k = fail[k-1]
		}
		if token[i] == token[k] {
			k++
		}
		fail[i] = k
	}
	text := token
	if period := n - fail[n-1]; period <= n/2 {
		text = token[:period]
	}

	const minRun = 3
	length := 0
	for i := 0; i < len(text); length++ {
		end := i + 1 // end of the run that starts at i
		if end < len(text) {
			if step := int(text[end]) - int(text[i]); -1 <= step && step <= 1 {
				end++
				for end < len(text) && int(text[end])-int(text[end-1]) == step {
					end++
				}
			}
		}
		if end-i < minRun {
			end = i + 1
		}
		i = end
	}
	return float64(length) * math.Log2(float64(pool))
}
