package config

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"

	"github.com/seed-53d105c9/courier/handlers"
	"github.com/seed-53d105c9/courier/worker"
)

// hookSettings has the shape of webhook.Settings: its secret and its
// headers are marked secret.
type hookSettings struct {
	URL     string            `koanf:"url"`
	Secret  string            `koanf:"secret" secret:"true"`
	Headers map[string]string `koanf:"headers" secret:"true"`
}

// secretKinds marks a setting of every other kind secret, and keeps one
// that is not.
type secretKinds struct {
	PIN     int           `koanf:"pin" secret:"true"`
	Enabled bool          `koanf:"enabled" secret:"true"`
	Rotate  time.Duration `koanf:"rotate" secret:"true"`
	Keys    []string      `koanf:"keys" secret:"true"`
	Ports   []int         `koanf:"ports" secret:"true"`
	Nested  struct {
		Token string `koanf:"token"`
		Count int    `koanf:"count"`
	} `koanf:"nested" secret:"true"`
	Plain int `koanf:"plain"`
}

// testBuiltin is a built-in handler called name whose settings are an S,
// decoded as the built-in handlers decode theirs; check, when set, is its
// own validation.
func testBuiltin[S any](name string, check func(S) error) handlers.Builtin {
	return handlers.Builtin{
		Name: name,
		New: func(_ handlers.Env, decode handlers.Decoder) (worker.Handler, error) {
			var s S
			if err := decode(&s); err != nil {
				return nil, err
			}
			if check != nil {
				if err := check(s); err != nil {
					return nil, err
				}
			}
			return worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), nil
		},
	}
}

// buildTestHandler builds b for queue x from the YAML of the queue's
// section, through the decoder the registry hands to handlers.
func buildTestHandler(t *testing.T, b handlers.Builtin, section string) error {
	t.Helper()
	raw, err := yaml.Parser().Unmarshal([]byte(section))
	if err != nil {
		t.Fatal(err)
	}
	q := Queue{Handler: b.Name, Settings: raw}
	_, err = buildHandler("queues.x", "x", &q, b, slog.New(slog.DiscardHandler))
	return err
}

// notShown is how a message under a secret key says why it shows no value.
const notShown = "the value is not shown because this key holds a secret"

// TestSecretSettingsNeverEchoed: a value under a secret key of a handler's
// settings, whatever its YAML type, is named by its type only.
func TestSecretSettingsNeverEchoed(t *testing.T) {
	t.Parallel()
	hook := testBuiltin[hookSettings]("hook", nil)
	kinds := testBuiltin[secretKinds]("kinds", nil)
	tests := []struct {
		name    string
		b       handlers.Builtin
		yaml    string
		key     string
		msg     string
		leak    string // must not appear in the error
		showsIt bool   // the key is not secret: the value must appear
	}{
		{"secret as a number", hook, "secret: 123456789012", "secret", "expected text, got a number; " + notShown + " — quote it", "123456789012", false},
		{"secret as a boolean", hook, "secret: true", "secret", "expected text, got a boolean; " + notShown, "true", false},
		{"secret as a fraction", hook, "secret: 3.14159265", "secret", "got a number; " + notShown, "3.14159265", false},
		{"secret as a list", hook, "secret: [hunter2-a, hunter2-b]", "secret", "got a list; " + notShown, "hunter2", false},
		{"secret as a section", hook, "secret: {k: hunter2-c}", "secret", "got a section of keys; " + notShown, "hunter2", false},
		{"header value as a number", hook, "headers: {X-Api-Key: 987654321987}", "headers.X-Api-Key", "expected text, got a number; " + notShown, "987654321987", false},
		{"header value as a boolean", hook, "headers: {X-Flag: false}", "headers.X-Flag", "got a boolean; " + notShown, "false", false},
		{"header value as a section", hook, "headers: {X-Api-Key: {a: hunter2-d}}", "headers.X-Api-Key", "got a section of keys; " + notShown, "hunter2", false},
		{"headers as text", hook, `headers: "Authorization: Bearer hunter2-e"`, "headers", "expected a map of keys to values, got text; " + notShown, "hunter2", false},
		{"headers as a number", hook, "headers: 424242424242", "headers", "got a number; " + notShown, "424242424242", false},
		{"text for a number", kinds, "pin: hunter2-f", "pin", "expected a whole number, got text; " + notShown, "hunter2", false},
		{"fraction for a number", kinds, "pin: 1234.5678", "pin", "expected a whole number, got a number; " + notShown, "1234.5678", false},
		{"number too large", kinds, "pin: 18446744073709551615", "pin", "is too large; " + notShown, "18446744073709551615", false},
		{"text for a boolean", kinds, "enabled: hunter2-g", "enabled", "expected true or false, got text; " + notShown, "hunter2", false},
		{"number for a boolean", kinds, "enabled: 765432198765", "enabled", "got a number; " + notShown, "765432198765", false},
		{"text for a duration", kinds, "rotate: hunter2-h", "rotate", "expected a duration such as 30s, 5m or 1h30m, got text; " + notShown, "hunter2", false},
		{"number for a duration", kinds, "rotate: 864208642086", "rotate", "got a number; " + notShown, "864208642086", false},
		{"number for a list", kinds, "keys: 135791357913", "keys", "expected a list, got a number; " + notShown, "135791357913", false},
		{"number in a list", kinds, "keys: [246802468024]", "keys[0]", "expected text, got a number; " + notShown, "246802468024", false},
		{"text in a list of numbers", kinds, "ports: [hunter2-i]", "ports[0]", "expected a whole number, got text; " + notShown, "hunter2", false},
		{"text for a section", kinds, "nested: hunter2-j", "nested", "expected a section of keys, got text; " + notShown, "hunter2", false},
		{"number beneath a secret section", kinds, "nested: {token: 555555555555}", "nested.token", "got a number; " + notShown, "555555555555", false},
		{"text beneath a secret section", kinds, "nested: {count: hunter2-k}", "nested.count", "got text; " + notShown, "hunter2", false},
		{"unknown key beneath a secret section is named", kinds, "nested: {tokn: hunter2-l}", "nested.tokn", `did you mean "token"?`, "hunter2", false},
		{"a key that is not secret shows its value", kinds, "plain: 777777x", "plain", "expected a whole number, got the text", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := buildTestHandler(t, tt.b, tt.b.Name+":\n  "+tt.yaml+"\n")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("build: %v; want an *Error", err)
			}
			if tt.leak != "" && strings.Contains(err.Error(), tt.leak) {
				t.Errorf("the message shows the secret value %q:\n%v", tt.leak, err)
			}
			if tt.showsIt && !strings.Contains(err.Error(), "777777x") {
				t.Errorf("the message hides a value that is not secret:\n%v", err)
			}
			want := "queues.x." + tt.b.Name + "." + tt.key
			for _, p := range e.Problems {
				if p.Key == want && strings.Contains(p.Message, tt.msg) {
					return
				}
			}
			t.Errorf("problems:\n%v\nwant one for %s containing %q", err, want, tt.msg)
		})
	}
}

// TestSecretKeysNeverEchoed: passwords and API tokens of the wrong type are
// named by their type only.
func TestSecretKeysNeverEchoed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		key  string
		msg  string
		leak string
	}{
		{"redis password as a number", "redis:\n  password: 123456789012\n", "redis.password", "expected text, got a number", "123456789012"},
		{"redis password as a boolean", "redis:\n  password: true\n", "redis.password", "expected text, got a boolean", "true"},
		{"redis password as a list", "redis:\n  password: [hunter2-a]\n", "redis.password", "expected text, got a list", "hunter2"},
		{"sentinel password as a number", "redis:\n  sentinel:\n    master: m\n    password: 998877665544\n", "redis.sentinel.password", "got a number", "998877665544"},
		{"token as a number", "admin:\n  tokens:\n    - {name: a, token: 123456789012345678, role: admin}\n", "admin.tokens[0].token", "expected text, got a number", "123456789012345678"},
		{"token as a boolean", "admin:\n  tokens:\n    - {name: a, token: false, role: admin}\n", "admin.tokens[0].token", "expected text, got a boolean", "false"},
		{"token as a section", "admin:\n  tokens:\n    - {name: a, token: {k: hunter2-b}, role: admin}\n", "admin.tokens[0].token", "got a section of keys", "hunter2"},
		{"webhook secret as a number", minimal + "      secret: 123456789012\n", "queues.emails.webhook.secret", "expected text, got a number", "123456789012"},
		{"webhook header as a boolean", minimal + "      headers: {X-Flag: false}\n", "queues.emails.webhook.headers.X-Flag", "expected text, got a boolean", "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(Sources{File: writeFile(t, tt.yaml)})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load: %v; want an *Error naming %s", err, tt.key)
			}
			if strings.Contains(err.Error(), tt.leak) {
				t.Errorf("the message shows the secret value %q:\n%v", tt.leak, err)
			}
			for _, p := range e.Problems {
				if p.Key == tt.key && strings.Contains(p.Message, tt.msg) && strings.Contains(p.Message, notShown) {
					return
				}
			}
			t.Errorf("problems:\n%v\nwant one for %s containing %q and %q", err, tt.key, tt.msg, notShown)
		})
	}
}

// TestHandlerProblemsRedactSecrets: a handler whose own validation repeats a
// secret setting has it blanked before the message leaves the package.
func TestHandlerProblemsRedactSecrets(t *testing.T) {
	t.Parallel()
	b := testBuiltin("hook", func(s hookSettings) error {
		return errors.Join(
			errors.New("secret: "+s.Secret+" is not accepted"),
			errors.New("headers.Authorization: "+s.Headers["Authorization"]+" is not accepted"),
			errors.New("headers.X-Key: "+s.Headers["X-Key"]+" is not accepted"),
			errors.New("url: "+s.URL+" is not accepted"),
		)
	})
	err := buildTestHandler(t, b, "hook:\n  url: http://plain.example/\n  secret: hunter2-secret\n  headers: {Authorization: Bearer hunter2-header, X-Key: hunter2-secret-tail}\n")
	if err == nil {
		t.Fatal("build succeeded")
	}
	// X-Key holds the secret and more: blanking the secret first must not
	// leave the rest of X-Key showing.
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "tail") {
		t.Errorf("the handler's message shows a secret:\n%v", err)
	}
	if !strings.Contains(err.Error(), "queues.x.hook.url: http://plain.example/ is not accepted") {
		t.Errorf("a value that is not secret was hidden or the key lost:\n%v", err)
	}
}

// TestBlank: every secret is blanked, those that hold or overlap another
// too, and a run of them is one mark.
func TestBlank(t *testing.T) {
	t.Parallel()
	tests := []struct{ s, want string }{
		{"no secret here", "no secret here"},
		{"key abcdef and abcdef", "key [redacted] and [redacted]"},
		{"nested: abcdef-ghijkl.", "nested: [redacted]."},
		{"overlap: abcdef-ghijkl-mnopqr!", "overlap: [redacted]!"},
		{"adjacent abcdefmnopqr", "adjacent [redacted]"},
	}
	secrets := []string{"abcdef", "abcdef-ghijkl", "kl-mnopqr", "mnopqr", ""}
	for _, tt := range tests {
		if got := blank(tt.s, secrets); got != tt.want {
			t.Errorf("blank(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
