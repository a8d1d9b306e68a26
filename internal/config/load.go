package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// EnvPrefix starts the environment variables that set configuration keys.
const EnvPrefix = "COURIER_"

// Sources are the layers above the defaults, lowest first.
type Sources struct {
	// File is a YAML file; "" means none.
	File string
	// Environ is the environment as "KEY=value" strings (os.Environ());
	// only COURIER_* variables are read.
	Environ []string
	// Flags maps dotted keys to values set on the command line; only flags
	// the user gave belong here, so an unset flag does not hide the file.
	Flags map[string]any
}

// Load reads the sources over the defaults and validates the result. The
// error is an *Error listing every problem by key, or an error reading the
// file.
func Load(src Sources) (*Config, error) {
	k := koanf.New(".")
	if src.File != "" {
		if _, err := os.Stat(src.File); err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		if err := k.Load(file.Provider(src.File), yaml.Parser()); err != nil {
			return nil, fmt.Errorf("config file %s: %w", src.File, err)
		}
	}
	environ := func() []string { return src.Environ }
	if err := k.Load(env.Provider(".", env.Opt{
		Prefix:        EnvPrefix,
		TransformFunc: envKey,
		EnvironFunc:   environ,
	}), nil); err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	if len(src.Flags) > 0 {
		if err := k.Load(confmap.Provider(src.Flags, "."), nil); err != nil {
			return nil, fmt.Errorf("flags: %w", err)
		}
	}
	cfg := Default()
	var ps problems
	// Keys that did not decode kept their defaults, so validating the rest
	// reports every problem at once without inventing new ones.
	decode("", k.Raw(), reflect.ValueOf(&cfg).Elem(), false, &ps)
	cfg.validate(&ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// envKey maps COURIER_QUEUES__EMAILS__MAX_ATTEMPTS to
// queues.emails.max_attempts. Every key sits in a section, so a variable
// without a double underscore (COURIER_TEST_REDIS_IMAGE) is not
// configuration and is skipped, as is an empty value.
func envKey(k, v string) (string, any) {
	if v == "" || !strings.Contains(k, "__") {
		return "", nil
	}
	k = strings.ToLower(strings.TrimPrefix(k, EnvPrefix))
	return strings.ReplaceAll(k, "__", "."), v
}

// IsProblem reports whether err lists configuration problems (rather than,
// say, a missing file).
func IsProblem(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
