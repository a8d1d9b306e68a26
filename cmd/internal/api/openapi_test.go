package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestOpenAPI: openapi.json documents exactly the routes there are, with
// the right security, every error code, and references that resolve.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Errorf("openapi: %q, want 3.x", v)
	}
	h, err := New(Options{Backend: func() admin.Operator { return nil }, InsecureNoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]route{}
	for _, rt := range h.routes {
		routes[rt.method+" "+rt.path] = rt
	}
	documented := map[string]map[string]any{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			documented[strings.ToUpper(method)+" "+path] = op.(map[string]any)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(routes)) {
		if _, ok := documented[k]; !ok {
			t.Errorf("route %s is not in openapi.json", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(documented)) {
		rt, ok := routes[k]
		if !ok {
			t.Errorf("openapi.json documents %s, which is no route", k)
			continue
		}
		op := documented[k]
		security, hasSecurity := op["security"].([]any)
		if public := rt.role == ""; public != (hasSecurity && len(security) == 0) {
			t.Errorf("%s: security %v, but the route's role is %q", k, op["security"], rt.role)
		}
		if desc, _ := op["description"].(string); rt.role != "" && !strings.Contains(desc, "Role: "+map[Role]string{RoleProducer: "producer or admin", RoleAdmin: "admin"}[rt.role]+".") {
			t.Errorf("%s: the description does not state the role %s: %q", k, rt.role, desc)
		}
		responses, _ := op["responses"].(map[string]any)
		// Every route may refuse a throttled address (429) and, without
		// authentication, a foreign Host (403); a route with a role may
		// refuse a token (401, 403).
		codes := []string{"403", "429"}
		if rt.role != "" {
			codes = append(codes, "401")
		}
		// A route that needs Redis answers 503 when it cannot serve.
		if !rt.offline {
			codes = append(codes, "503")
		}
		for _, code := range codes {
			if _, ok := responses[code]; !ok {
				t.Errorf("%s: no %s response", k, code)
			}
		}
	}
	responses := doc["components"].(map[string]any)["responses"].(map[string]any)
	for name, words := range map[string][]string{
		"Forbidden":   {"role", "limited to other queues", "admin.max_queues", "Host", "another origin"},
		"RateLimited": {"admin.rate_limit", "failed authentication"},
	} {
		desc, _ := responses[name].(map[string]any)["description"].(string)
		for _, w := range words {
			if !strings.Contains(desc, w) {
				t.Errorf("the %s response does not say %q: %q", name, w, desc)
			}
		}
	}

	// The error codes, exactly.
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	enum := schemas["Error"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"].([]any)
	var codes []string
	for _, c := range enum {
		codes = append(codes, c.(string))
	}
	var want []string
	for _, c := range wire.Codes() {
		want = append(want, string(c))
	}
	slices.Sort(codes)
	slices.Sort(want)
	if !slices.Equal(codes, want) {
		t.Errorf("error codes in openapi.json %v, in the code %v", codes, want)
	}

	// The Unavailable response names each Retry-After the code sends.
	desc, _ := responses["Unavailable"].(map[string]any)["description"].(string)
	for _, d := range []time.Duration{oomRetryAfter, downRetryAfter, timeoutRetryAfter} {
		if n := strconv.Itoa(int(d / time.Second)); !strings.Contains(desc, n+")") { // "(Retry-After 2)", "(1)"
			t.Errorf("the Unavailable response does not give Retry-After %s: %q", n, desc)
		}
	}

	// Every reference resolves.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if !resolves(doc, ref) {
					t.Errorf("$ref %s does not resolve", ref)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}

func resolves(doc map[string]any, ref string) bool {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	var v any = doc
	for _, part := range strings.Split(path, "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

// TestOpenAPIServed: the document is served to anyone.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.want(b.do("GET", "/v1/openapi.json", "", ""), http.StatusOK)
	var served, embedded any
	r.json(t, &served)
	if err := json.Unmarshal(openAPI, &embedded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served, embedded) {
		t.Error("the served document differs from openapi.json")
	}
}

// TestOpenAPIMatchesWire: the schemas of the objects of package wire (and
// of the enqueue replies) have
// exactly the fields of its types, by their JSON tags: a field without
// omitempty is required, a pointer without omitempty is nullable, and
// each property's type is the Go field's.
func TestOpenAPIMatchesWire(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]schema
		}
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"Job": wire.Job{}, "Progress": wire.Progress{}, "Queue": wire.Queue{}, "Counts": wire.Counts{}, "Process": wire.Process{},
		"Page": wire.Page{}, "Triage": wire.Triage{}, "Error": wire.Error{}, "ErrorReply": wire.ErrorReply{},
		"Key": wire.Key{}, "KeyList": wire.KeyList{},
		// The enqueue replies, of this package.
		"Enqueued": enqueued{}, "BatchItem": batchItem{}, "BatchReply": batchReply{}, "QueueList": queueList{},
		// The body of PUT …/keys/{key}, as the Go client sends it.
		"KeyLimits": keyLimitsBody{},
	} {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("openapi.json has no schema %s (%T)", name, v)
			continue
		}
		checkSchema(t, name, reflect.TypeOf(v), s)
	}
}

// schema is the part of an OpenAPI schema TestOpenAPIMatchesWire reads.
type schema struct {
	Ref        string `json:"$ref"`
	Type       string
	Format     string
	Nullable   bool
	Required   []string
	Properties map[string]schema
	Items      *schema
}

func checkSchema(t *testing.T, name string, typ reflect.Type, s schema) {
	t.Helper()
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		field, opts, _ := strings.Cut(tag, ",")
		if field == "" || field == "-" {
			t.Errorf("%s.%s has no JSON name", typ, f.Name)
			continue
		}
		seen[field] = true
		p, ok := s.Properties[field]
		if !ok {
			t.Errorf("schema %s has no property %s (%s.%s)", name, field, typ, f.Name)
			continue
		}
		omit := strings.Contains(opts, "omitempty")
		if required := slices.Contains(s.Required, field); required == omit {
			t.Errorf("schema %s: %s required %v, but %s.%s is tagged %q", name, field, required, typ, f.Name, tag)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			if !omit && !p.Nullable {
				t.Errorf("schema %s: %s is not nullable, but %s.%s is a pointer written as null", name, field, typ, f.Name)
			}
			ft = ft.Elem()
		} else if p.Nullable {
			t.Errorf("schema %s: %s is nullable, but %s.%s is never null", name, field, typ, f.Name)
		}
		if want := jsonType(ft); want != p.Type && (want != "object" || p.Ref == "") {
			t.Errorf("schema %s: %s has type %q, want %q (%s.%s)", name, field, p.Type, want, typ, f.Name)
		}
		if ft == reflect.TypeFor[time.Time]() && p.Format != "date-time" {
			t.Errorf("schema %s: %s has format %q, want date-time", name, field, p.Format)
		}
	}
	for field := range s.Properties {
		if !seen[field] {
			t.Errorf("schema %s has property %s, which %s does not have", name, field, typ)
		}
	}
}

// jsonType is the OpenAPI type of values of t; "" for any JSON.
func jsonType(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return ""
	case t == reflect.TypeFor[time.Time]():
		return "string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	}
	return "object"
}
