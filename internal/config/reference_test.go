package config

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"

	"github.com/seed-53d105c9/courier/handlers"
)

// TestReferenceFile: configs/courier.yaml loads cleanly and documents every
// key there is, the built-in handlers' settings included.
func TestReferenceFile(t *testing.T) {
	t.Parallel()
	const path = "../../configs/courier.yaml"
	if _, err := Load(Sources{File: path}); err != nil {
		t.Fatalf("the reference file does not load: %v", err)
	}
	k := koanf.New(".")
	if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
		t.Fatal(err)
	}
	inFile := map[string]bool{}
	for _, key := range k.Keys() {
		inFile[key] = true
	}
	// Every key of the schema, with the file's example queues standing in
	// for queues.<name>.
	var schema []string
	collectKeys("", reflect.TypeFor[Config](), &schema)
	var want []string
	for _, key := range schema {
		rest, ok := strings.CutPrefix(key, "queues.*.")
		if !ok {
			want = append(want, key)
			continue
		}
		sub, isMap := strings.CutPrefix(rest, "periodic.*.")
		documented := false
		for _, q := range k.MapKeys("queues") {
			if !isMap {
				want = append(want, "queues."+q+"."+rest)
				continue
			}
			// A map of sections inside a queue: its keys are documented
			// under the example entries of the queues that have some.
			for _, name := range k.MapKeys("queues." + q + ".periodic") {
				want = append(want, "queues."+q+".periodic."+name+"."+sub)
				documented = true
			}
		}
		if isMap && !documented {
			t.Errorf("configs/courier.yaml has no example of queues.<name>.periodic.<schedule>.%s", sub)
		}
	}
	for _, b := range handlers.Builtins() {
		var settingsKeys []string
		_, _ = b.New(handlers.Env{Queue: "q", Logger: slog.New(slog.DiscardHandler)}, func(settings any) error {
			collectKeys("", reflect.TypeOf(settings).Elem(), &settingsKeys)
			return errors.New("stop")
		})
		if len(settingsKeys) == 0 {
			t.Errorf("handler %s has no settings keys", b.Name)
		}
		found := false
		for _, q := range k.MapKeys("queues") {
			if k.String("queues."+q+".handler") != b.Name {
				continue
			}
			found = true
			for _, s := range settingsKeys {
				want = append(want, "queues."+q+"."+b.Name+"."+s)
			}
		}
		if !found {
			t.Errorf("configs/courier.yaml has no example queue with handler %s", b.Name)
		}
	}
	for _, key := range want {
		if !inFile[key] && !hasChildren(k, key) {
			t.Errorf("configs/courier.yaml does not document %s", key)
		}
	}
}

// collectKeys lists the dotted keys of a settings type; a map of structs
// contributes "<prefix>.*.<key>", other maps and lists count as leaves.
func collectKeys(prefix string, t reflect.Type, out *[]string) {
	for i := range t.NumField() {
		name, opt, _ := strings.Cut(t.Field(i).Tag.Get("koanf"), ",")
		if opt == "remain" || name == "" || name == "-" {
			continue
		}
		key := join(prefix, name)
		ft := t.Field(i).Type
		switch {
		case ft.Kind() == reflect.Struct:
			collectKeys(key, ft, out)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			collectKeys(key+".*", ft.Elem(), out)
		default:
			*out = append(*out, key)
		}
	}
}

// hasChildren tells an empty map written as {} (a key koanf does not list).
func hasChildren(k *koanf.Koanf, key string) bool { return k.Exists(key) }
