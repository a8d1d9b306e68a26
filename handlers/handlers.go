// Package handlers lists Courier's built-in handlers: the ones a queue can
// name in its configuration (queues.<name>.handler) without writing Go.
//
// Each handler lives in its own package and is listed here, in Builtins; there
// is no registration by init(). A handler's own settings sit under
// queues.<name>.<handler> in the configuration.
package handlers

import (
	"log/slog"
	"slices"

	"github.com/seed-53d105c9/courier/handlers/logjob"
	"github.com/seed-53d105c9/courier/handlers/webhook"
	"github.com/seed-53d105c9/courier/worker"
)

// Env is what the daemon hands a built-in handler when it builds one.
type Env struct {
	// Queue is the name of the queue the handler will serve.
	Queue string
	// Logger is the daemon's logger.
	Logger *slog.Logger
}

// Decoder fills settings, a pointer to a struct whose fields carry koanf
// tags, from the queue's section of the configuration for this handler. It
// refuses unknown keys and values of the wrong type with messages that name
// the key, and leaves settings untouched when the section is absent.
//
// A field tagged secret:"true" holds a secret (a signing key, a password, a
// credential-bearing header), and so does everything beneath it: every
// value of a map, every item of a list, every setting of a section (the
// keys themselves are no secret, and messages name them). The decoder's
// messages about a secret key name the kind of value it found, never the
// value, whatever its YAML type; and, as a last guard, the configuration
// layer blanks secret text of six bytes or more out of the problems New
// returns. Mark every secret setting so, as in
//
//	Secret  string            `koanf:"secret" secret:"true"`
//	Headers map[string]string `koanf:"headers" secret:"true"`
//
// The tag's only value is "true". The handler's own validation errors must
// still never repeat a secret.
type Decoder func(settings any) error

// Builtin is one built-in handler.
type Builtin struct {
	// Name is the value of queues.<name>.handler that selects the handler,
	// and the name of its settings section.
	Name string
	// Summary says in one line what the handler does.
	Summary string
	// New builds the handler for the queue env names. It decodes its
	// settings with decode and validates them; invalid settings give an
	// error (one per problem, joined with errors.Join) whose messages start
	// with the setting's key inside the section, as in "url: is required".
	New func(env Env, decode Decoder) (worker.Handler, error)
}

// Builtins returns the built-in handlers, sorted by name.
func Builtins() []Builtin {
	return []Builtin{
		{
			Name:    logjob.Name,
			Summary: "logs each job; for demos and smoke tests",
			New: func(env Env, decode Decoder) (worker.Handler, error) {
				var s logjob.Settings
				if err := decode(&s); err != nil {
					return nil, err
				}
				return logjob.New(env.Logger, s)
			},
		},
		{
			Name:    webhook.Name,
			Summary: "POSTs each job's payload to an HTTP endpoint, signed with HMAC-SHA256",
			New: func(env Env, decode Decoder) (worker.Handler, error) {
				var s webhook.Settings
				if err := decode(&s); err != nil {
					return nil, err
				}
				return webhook.New(env.Queue, env.Logger, s)
			},
		},
	}
}

// Lookup returns the built-in handler called name.
func Lookup(name string) (Builtin, bool) {
	all := Builtins()
	i := slices.IndexFunc(all, func(b Builtin) bool { return b.Name == name })
	if i < 0 {
		return Builtin{}, false
	}
	return all[i], true
}

// Names returns the names of the built-in handlers, sorted.
func Names() []string {
	var names []string
	for _, b := range Builtins() {
		names = append(names, b.Name)
	}
	return names
}
