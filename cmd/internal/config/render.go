package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-53d105c9/courier/handlers"
)

// YAML renders the loaded configuration (courier config print): every
// key with its value, a comment after each value naming the layer that
// set it (# default, # file, # env COURIER_REDIS__ADDR, # flag), and
// "[redacted]" for every secret that is set. A handler's section shows
// the settings given; the others take the handler's defaults.
func (l *Loaded) YAML() ([]byte, error) {
	doc, _, err := l.render()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// JSON renders what YAML does as {"config": {...}, "sources": {"redis.addr":
// "env COURIER_REDIS__ADDR", ...}}, sources naming the layer of every key
// shown.
func (l *Loaded) JSON() ([]byte, error) {
	doc, sources, err := l.render()
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := doc.Decode(&tree); err != nil {
		return nil, err
	}
	return json.MarshalIndent(map[string]any{"config": tree, "sources": sources}, "", "  ")
}

// render builds the document of YAML and the layer of each key in it.
func (l *Loaded) render() (*yaml.Node, map[string]string, error) {
	if l.Config == nil {
		return nil, nil, errors.New("config: no configuration to render: Load refused it")
	}
	r := renderer{l: l, sources: map[string]string{}}
	return r.value("", reflect.ValueOf(l.Config).Elem(), false), r.sources, nil
}

type renderer struct {
	l       *Loaded
	sources map[string]string
}

// value renders v, the value of key.
func (r *renderer) value(key string, v reflect.Value, secret bool) *yaml.Node {
	t := v.Type()
	secret = secret || t == secretType
	switch {
	case t.Kind() == reflect.Struct:
		return r.section(key, v, secret)
	case t.Kind() == reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range slices.Sorted(maps.Keys(mapOf(v))) {
			n.Content = append(n.Content, scalar(k), r.value(key+"."+k, v.MapIndex(reflect.ValueOf(k)), secret))
		}
		if len(n.Content) == 0 {
			r.empty(key, n)
		}
		return n
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for i := range v.Len() {
			n.Content = append(n.Content, r.section(fmt.Sprintf("%s[%d]", key, i), v.Index(i), secret))
		}
		if len(n.Content) == 0 {
			r.empty(key, n)
		}
		return n
	}
	return r.leaf(key, v, secret)
}

// empty marks an empty map or list, a value of its own, with its layer.
func (r *renderer) empty(key string, n *yaml.Node) {
	n.Style = yaml.FlowStyle
	r.sources[key] = r.l.SourceOf(key)
	n.LineComment = r.sources[key]
}

// section renders a struct.
func (r *renderer) section(key string, v reflect.Value, secret bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opt, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if name == "" || opt == "remain" {
			continue
		}
		n.Content = append(n.Content, scalar(name), r.value(join(key, name), v.Field(i), secret || isSecretField(f)))
	}
	if q, ok := v.Interface().(Queue); ok {
		if k, val := r.handlerSection(key, &q); k != nil {
			n.Content = append(n.Content, k, val)
		}
	}
	return n
}

// handlerSection renders the settings a queue's handler was given, decoded
// by the handler's own type so that its secrets are known.
func (r *renderer) handlerSection(key string, q *Queue) (*yaml.Node, *yaml.Node) {
	b, ok := handlers.Lookup(q.Handler)
	raw, _ := q.Settings[q.Handler].(map[string]any)
	if !ok || len(raw) == 0 {
		return nil, nil
	}
	section := key + "." + b.Name
	var settings reflect.Value
	errStop := errors.New("stop")
	_, _ = b.New(handlers.Env{Queue: "render", Logger: slog.New(slog.DiscardHandler)}, func(s any) error {
		settings = valueOf(s)
		var ps problems
		decode(section, raw, settings, false, &ps) // validated by Load
		return errStop
	})
	k := scalar(b.Name)
	k.HeadComment = "settings not shown take the handler's defaults"
	n := &yaml.Node{Kind: yaml.MappingNode}
	t := settings.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if _, given := raw[name]; given && name != "" {
			n.Content = append(n.Content, scalar(name), r.value(section+"."+name, settings.Field(i), isSecretField(f)))
		}
	}
	return k, n
}

// leaf renders a value that is not a section, with its layer.
func (r *renderer) leaf(key string, v reflect.Value, secret bool) *yaml.Node {
	n := &yaml.Node{}
	_ = n.Encode(plain(v, secret)) // strings, numbers, booleans and lists of them
	if n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	r.sources[key] = r.l.SourceOf(key)
	n.LineComment = r.sources[key]
	return n
}

// plain returns v as a value yaml encodes as it is written in a file:
// durations as 30s, secrets that are set as "[redacted]".
func plain(v reflect.Value, secret bool) any {
	switch {
	case v.Type() == durationType:
		return formatDuration(time.Duration(v.Int()))
	case v.Kind() == reflect.String && (secret || v.Type() == secretType):
		if v.String() == "" {
			return ""
		}
		return "[redacted]"
	case v.Kind() == reflect.String:
		return v.String()
	case v.Kind() == reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = plain(v.Index(i), secret)
		}
		return out
	}
	return v.Interface()
}

// formatDuration writes d as the reference file does: 8760h, not
// 8760h0m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// mapOf returns the keys of v, a map with string keys, as a set.
func mapOf(v reflect.Value) map[string]bool {
	out := make(map[string]bool, v.Len())
	for _, k := range v.MapKeys() {
		out[k.String()] = true
	}
	return out
}
