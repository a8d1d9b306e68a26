package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
)

// EnvPrefix starts the environment variables that set configuration keys.
const EnvPrefix = "COURIER_"

// Sources are the layers above the defaults, lowest first.
type Sources struct {
	// File is a YAML file; "" means none.
	File string
	// Environ is the environment as "KEY=value" strings (os.Environ());
	// only COURIER_* variables are read, and those a token_env names.
	Environ []string
	// Flags maps dotted keys to values set on the command line; only flags
	// the user gave belong here, so an unset flag does not hide the file.
	Flags map[string]any
}

// Loaded is a configuration with what was learnt loading it.
type Loaded struct {
	// Config is the merged, validated configuration; nil when Load
	// refused it.
	Config *Config
	// File is Sources.File.
	File string
	// Sources maps each key a layer above the defaults set to that layer:
	// "file", "env COURIER_REDIS__ADDR" or "flag". A list set as a whole
	// (redis.addr, admin.tokens) is one key. A key not here has its
	// default; see SourceOf.
	Sources map[string]string
	// Warnings are what does not stop the load but should be said: the
	// COURIER_* variables that set nothing. courier run and dev log them;
	// courier config check prints them.
	Warnings []string
}

// Layer names of Loaded.Sources.
const (
	SourceDefault = "default"
	SourceFile    = "file"
	SourceFlag    = "flag"
	sourceEnv     = "env " // + the variable
)

// SourceOf returns the layer that set key (dotted, list indexes allowed:
// admin.tokens[0].name): the entry of Sources for the key or the nearest
// section or list above it, else SourceDefault.
func (l *Loaded) SourceOf(key string) string {
	key = listIndex.ReplaceAllString(key, "")
	for k := key; k != ""; {
		if s, ok := l.Sources[k]; ok {
			return s
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return SourceDefault
}

// listIndex matches the indexes of a key: the [1] of admin.tokens[1].name.
var listIndex = regexp.MustCompile(`\[\d+\]`)

// Load reads the sources over the defaults and validates the result. The
// error is an *Error listing every problem by key, or an error reading the
// file. LoadFull says where each value came from, and warns.
func Load(src Sources) (*Config, error) {
	l, err := LoadFull(src)
	if err != nil {
		return nil, err
	}
	return l.Config, nil
}

// LoadFull is Load keeping the layer of each key and the warnings. When
// the configuration is refused, the *Loaded (never nil) still holds them,
// without a Config. Its errors never show credentials (scrub.go).
func LoadFull(src Sources) (*Loaded, error) {
	l, err := loadFull(src)
	return l, scrubbed(err)
}

func loadFull(src Sources) (*Loaded, error) {
	l := &Loaded{File: src.File, Sources: map[string]string{}}
	k := koanf.New(".")
	if src.File != "" {
		tree, err := readYAMLFile(src.File)
		if err != nil {
			return l, err
		}
		if err := k.Load(confmap.Provider(tree, ""), nil); err != nil {
			return l, fmt.Errorf("config file %s: %w", src.File, err)
		}
		leaves("", tree, func(key string) { l.set(key, SourceFile) })
	}
	env := readEnv(src.Environ)
	if err := k.Load(confmap.Provider(env.tree, ""), nil); err != nil {
		return l, fmt.Errorf("environment: %w", err)
	}
	leaves("", env.tree, func(key string) { l.set(key, sourceEnv+env.vars[key]) })
	if len(src.Flags) > 0 {
		if err := k.Load(confmap.Provider(src.Flags, "."), nil); err != nil {
			return l, fmt.Errorf("flags: %w", err)
		}
		for key := range src.Flags {
			l.set(key, SourceFlag)
		}
	}

	cfg := Default()
	var ps problems
	// Keys that did not decode kept their defaults, so validating the rest
	// reports every problem at once without inventing new ones.
	decode("", k.Raw(), reflect.ValueOf(&cfg).Elem(), false, &ps)
	claimed := cfg.Admin.readTokens(src.Environ, &ps)
	cfg.validate(&ps)
	l.Warnings = env.warnings(claimed)
	if err := ps.err(); err != nil {
		return l, l.named(err)
	}
	l.Config = &cfg
	return l, nil
}

// leaves calls set with the dotted key of every value in tree that is not
// a section; a list is one value.
func leaves(prefix string, tree map[string]any, set func(key string)) {
	for k, v := range tree {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			leaves(join(prefix, k), m, set)
			continue
		}
		set(join(prefix, k))
	}
}

// set records that source set key, a value that is not a section. It
// replaced what earlier layers set beneath it, and turns a value set above
// it into a section.
func (l *Loaded) set(key, source string) {
	for k := range l.Sources {
		if strings.HasPrefix(k, key+".") || strings.HasPrefix(key, k+".") {
			delete(l.Sources, k)
		}
	}
	l.Sources[key] = source
}

// named adds to each problem of a key set by an environment variable the
// variable's name: the key alone would send the reader to the file.
func (l *Loaded) named(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	for i, p := range e.Problems {
		if v, ok := strings.CutPrefix(l.SourceOf(p.Key), sourceEnv); ok && p.Key != "" {
			e.Problems[i].Message += " (set by " + v + ")"
		}
	}
	return e
}

// IsProblem reports whether err lists configuration problems (rather than,
// say, a missing file).
func IsProblem(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
