package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	goyaml "go.yaml.in/yaml/v3"

	"github.com/seed-53d105c9/courier/handlers"
)

// TestReferenceFile: configs/courier.yaml loads cleanly and documents every
// key there is, the built-in handlers' settings included.
func TestReferenceFile(t *testing.T) {
	t.Parallel()
	const path = "../../../configs/courier.yaml"
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

// composeTokenPath is where configs/docker-compose.yml's api-token service
// writes the API token and configs/compose/courier.yaml reads it.
const composeTokenPath = "/run/courier/api-token"

// TestComposeFiles: the compose demo's configuration loads, with the API
// on under the token the api-token service draws, and the compose file
// hands that token over: the service writes it where token_file reads it,
// into the volume Courier mounts there.
func TestComposeFiles(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../../../configs/compose/courier.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "token_file: "+composeTokenPath+"\n") {
		t.Fatalf("configs/compose/courier.yaml reads no token_file %s", composeTokenPath)
	}
	// The token as the service draws it: 64 hex digits and a line break.
	tokenFile := filepath.Join(t.TempDir(), "api-token")
	if err := os.WriteFile(tokenFile, []byte(hex.EncodeToString(randomBytes(t, 32))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Sources{File: writeFile(t, strings.ReplaceAll(string(text), composeTokenPath, tokenFile))})
	if err != nil {
		t.Fatalf("configs/compose/courier.yaml does not load: %v", err)
	}
	if warnings, err := cfg.CheckDaemon(); err != nil || len(warnings) != 0 {
		t.Errorf("configs/compose/courier.yaml: courier run would say %q, %v", warnings, err)
	}
	if len(cfg.Admin.Tokens) != 1 || cfg.Admin.Tokens[0].Role != RoleAdmin {
		t.Errorf("tokens %+v; want one admin token", cfg.Admin.Tokens)
	}

	var compose struct {
		Services map[string]struct {
			Command   any      `yaml:"command"`
			Volumes   []string `yaml:"volumes"`
			DependsOn any      `yaml:"depends_on"` // a list, or conditions by service
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	data, err := os.ReadFile("../../../configs/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := goyaml.Unmarshal(data, &compose); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(composeTokenPath)
	gen, courier := compose.Services["api-token"], compose.Services["courier"]
	if script := fmt.Sprint(gen.Command); !strings.Contains(script, "f="+composeTokenPath) || !strings.Contains(script, "head -c 64") {
		t.Errorf("the api-token service does not write 64 characters to %s: %s", composeTokenPath, script)
	}
	if !slices.Contains(gen.Volumes, "api-token:"+dir) || !slices.Contains(courier.Volumes, "api-token:"+dir+":ro") {
		t.Errorf("the volume api-token is not mounted at %s in both services: %v, %v", dir, gen.Volumes, courier.Volumes)
	}
	if _, ok := compose.Volumes["api-token"]; !ok {
		t.Errorf("the volume api-token is not declared")
	}
	deps, _ := courier.DependsOn.(map[string]any)
	if dep, _ := deps["api-token"].(map[string]any); dep["condition"] != "service_completed_successfully" {
		t.Errorf("courier starts without waiting for its token (depends_on: %v)", courier.DependsOn)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
