package config

import (
	"errors"
	"strconv"
	"unicode"

	"github.com/seed-53d105c9/courier/worker"
)

// AdminToken is one bearer token of the API.
type AdminToken struct {
	// Name identifies the token in logs and rate limits; never the token.
	Name string `koanf:"name"`
	// Token is the secret the client sends as "Authorization: Bearer": at
	// least AdminTokenMinLen characters and AdminTokenMinBits of estimated
	// randomness.
	Token Secret `koanf:"token"`
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
		switch secret := t.Token.Reveal(); {
		case ps.has(key + ".token"): // did not decode
		case secret == "":
			ps.add(key+".token", "is required")
		case len(secret) < AdminTokenMinLen:
			ps.add(key+".token", "is %d characters long; use at least %d random characters", len(secret), AdminTokenMinLen)
		case len(secret) > adminTokenMaxLen:
			ps.add(key+".token", "is longer than %d characters", adminTokenMaxLen)
		case !printableASCII(secret):
			ps.add(key+".token", "must be printable ASCII without spaces (it travels in an HTTP header)")
		case tokenEntropyBits(secret) < AdminTokenMinBits:
			ps.add(key+".token", "is too easy to guess (about %d bits of entropy; want at least %d): generate one with \"openssl rand -hex 32\"",
				int(tokenEntropyBits(secret)), AdminTokenMinBits)
		default:
			if j, ok := secrets[secret]; ok {
				ps.add(key+".token", "is the same as admin.tokens[%d].token; each token must be different", j)
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
