package config

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/seed-53d105c9/courier/worker"
)

// AdminToken is one bearer token of the API.
type AdminToken struct {
	// Name identifies the token in logs and rate limits; never the token.
	Name string `koanf:"name"`
	// Token is the secret the client sends as "Authorization: Bearer": at
	// least AdminTokenMinLen characters and AdminTokenMinBits of estimated
	// randomness. Set it, TokenFile or TokenEnv: exactly one.
	Token Secret `koanf:"token"`
	// TokenFile is a file that holds the token (a mounted secret), read
	// once by Load; a line break at its end is not part of the token.
	TokenFile string `koanf:"token_file"`
	// TokenEnv names an environment variable that holds the token, read by
	// Load.
	TokenEnv string `koanf:"token_env"`
	// Role is producer (enqueue, read and cancel jobs) or admin (everything).
	Role string `koanf:"role"`
	// Queues are the queues the token may use, each once; a request for
	// another queue gets 403. Default empty: every queue.
	Queues []string `koanf:"queues"`
}

// Admin roles.
const (
	RoleProducer = "producer"
	RoleAdmin    = "admin"
)

// Bounds of admin.tokens.
const (
	// AdminTokenMinLen is the shortest token accepted: 16 random
	// characters are beyond guessing.
	AdminTokenMinLen = 16
	// AdminTokenMinBits is the least randomness a token must show, as
	// tokenEntropyBits estimates it: 16 random hex digits, 64 bits.
	AdminTokenMinBits = 64
	adminTokenMaxLen  = 4096
	adminNameMaxLen   = 64
)

// validateTokens adds a problem for every invalid key of admin.tokens.
func validateTokens(tokens []AdminToken, ps *problems) {
	names := map[string]int{}
	secrets := map[string]int{}
	for i, t := range tokens {
		key := "admin.tokens[" + strconv.Itoa(i) + "]"
		if err := checkTokenName(t.Name); err != nil {
			ps.add(key+".name", "%v", err)
		} else if j, ok := names[t.Name]; ok {
			ps.add(key+".name", "%q is also the name of admin.tokens[%d]; names must be unique", t.Name, j)
		} else {
			names[t.Name] = i
		}
		// A problem names the key that gave the token, and its file or
		// variable.
		from, what := key+".token", ""
		switch {
		case t.TokenFile != "":
			from, what = key+".token_file", "the token in "+t.TokenFile+" "
		case t.TokenEnv != "":
			from, what = key+".token_env", "the token in $"+t.TokenEnv+" "
		}
		switch secret := t.Token.Reveal(); {
		case ps.has(from): // did not decode, or could not be read
		case secret == "" && what == "":
			ps.add(from, "is required (or token_file, or token_env)")
		case secret == "":
			ps.add(from, "%sis empty", what)
		case len(secret) < AdminTokenMinLen:
			ps.add(from, "%sis %d characters long; use at least %d random characters", what, len(secret), AdminTokenMinLen)
		case len(secret) > adminTokenMaxLen:
			ps.add(from, "%sis longer than %d characters", what, adminTokenMaxLen)
		case !printableASCII(secret):
			ps.add(from, "%smust be printable ASCII without spaces (it travels in an HTTP header)", what)
		case tokenEntropyBits(secret) < AdminTokenMinBits:
			ps.add(from, "%sis too easy to guess (about %d bits of entropy; want at least %d): generate one with \"openssl rand -hex 32\"",
				what, int(tokenEntropyBits(secret)), AdminTokenMinBits)
		default:
			if j, ok := secrets[secret]; ok {
				ps.add(from, "%sis the same as the token of admin.tokens[%d]; each token must be different", what, j)
			} else {
				secrets[secret] = i
			}
		}
		if t.Role != RoleProducer && t.Role != RoleAdmin {
			ps.add(key+".role", "must be producer or admin (got %q)", t.Role)
		}
		queues := map[string]int{}
		for j, q := range t.Queues {
			qkey := key + ".queues[" + strconv.Itoa(j) + "]"
			if err := worker.ValidateQueueName(q); err != nil {
				ps.add(qkey, "is not a valid queue name: %s", reason(err))
			} else if k, ok := queues[q]; ok {
				ps.add(qkey, "%q is also %s.queues[%d]; list each queue once", q, key, k)
			} else {
				queues[q] = j
			}
		}
	}
}

// readTokens fills in the tokens given by token_file and token_env, from
// the files and from environ, and returns the variables it read. A token
// given two ways, a file that cannot be read and a variable that is not
// set are problems.
func (a *Admin) readTokens(environ []string, ps *problems) map[string]bool {
	read := map[string]bool{}
	for i := range a.Tokens {
		t := &a.Tokens[i]
		key := "admin.tokens[" + strconv.Itoa(i) + "]"
		var given []string
		for _, g := range []struct {
			name string
			set  bool
		}{{"token", t.Token != ""}, {"token_file", t.TokenFile != ""}, {"token_env", t.TokenEnv != ""}} {
			if g.set {
				given = append(given, g.name)
			}
		}
		if len(given) > 1 {
			ps.add(key+"."+given[1], "is set, and so is %s; give the token one way", given[0])
			continue
		}
		switch {
		case t.TokenFile != "":
			data, err := os.ReadFile(t.TokenFile) // #nosec G304 -- a file the operator names in the configuration
			if err != nil {
				ps.add(key+".token_file", "%v", err)
				continue
			}
			t.Token = Secret(strings.TrimRight(string(data), "\r\n"))
		case t.TokenEnv != "":
			read[t.TokenEnv] = true
			v, ok := lookupEnv(environ, t.TokenEnv)
			if !ok {
				ps.add(key+".token_env", "$%s is not set", t.TokenEnv)
				continue
			}
			t.Token = Secret(strings.TrimRight(v, "\r\n"))
		}
	}
	return read
}

// lookupEnv is os.LookupEnv in environ, "KEY=value" strings.
func lookupEnv(environ []string, name string) (string, bool) {
	for _, kv := range slices.Backward(environ) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// checkTokenName allows what a queue name allows, up to 64 characters: the
// name appears in logs.
func checkTokenName(name string) error {
	if name == "" {
		return errors.New("is required")
	}
	if len(name) > adminNameMaxLen {
		return errors.New("is longer than " + strconv.Itoa(adminNameMaxLen) + " characters")
	}
	if err := worker.ValidateQueueName(name); err != nil {
		return errors.New(strconv.Quote(name) + " has characters other than A-Z a-z 0-9 . _ -")
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c > unicode.MaxASCII || c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}
