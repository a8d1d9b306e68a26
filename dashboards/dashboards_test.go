package dashboards_test

import (
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/dashboards"
)

// The queries themselves are run against a real Prometheus scraping a real
// fleet by cmd/courier's TestDashboardQueriesReturnData; these tests check
// the structure Grafana and docs/monitoring.md rely on.

// dashboard is the part of Grafana's classic dashboard JSON the tests read.
type dashboard struct {
	UID           string   `json:"uid"`
	Title         string   `json:"title"`
	ID            *int     `json:"id"`
	SchemaVersion int      `json:"schemaVersion"`
	Refresh       string   `json:"refresh"`
	Tags          []string `json:"tags"`
	Time          struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"` // a string, or {"query": ...}
	Datasource *datasource     `json:"datasource"`
	Multi      bool            `json:"multi"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
}

// queryText returns the variable's query, written either way Grafana
// accepts.
func (v variable) queryText() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var q struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &q)
	return q.Query
}

type panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *datasource `json:"datasource"`
	Collapsed   bool        `json:"collapsed"`
	GridPos     struct {
		H, W, X, Y int
	} `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Options struct {
		Legend *struct {
			ShowLegend bool `json:"showLegend"`
		} `json:"legend"`
	} `json:"options"`
	Targets []struct {
		RefID        string      `json:"refId"`
		Expr         string      `json:"expr"`
		LegendFormat string      `json:"legendFormat"`
		Format       string      `json:"format"`
		Datasource   *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's panels
}

// pinned are the dashboards and their uids: links and provisioning use
// the uids, so they never change.
var pinned = map[string]string{
	"courier-overview.json": "courier-overview",
	"courier-locks.json":    "courier-locks",
	"courier-redis.json":    "courier-redis",
}

const dsUID = "${datasource}"

// knownVars are the variables a query may use: the dashboards' own and
// Grafana's built-in interval variables.
var knownVars = []string{"datasource", "queue", "instance", "__rate_interval", "__interval", "__range"}

var varRE = regexp.MustCompile(`\$\{?(\w+)`)

func load(t *testing.T, name string) dashboard {
	t.Helper()
	b, err := fs.ReadFile(dashboards.Files, name)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not valid dashboard JSON: %v", name, err)
	}
	return d
}

func TestFiles(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(dashboards.Files, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name := range pinned {
		want = append(want, name)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("embedded dashboards %v, want %v (add a new one to pinned and docs/monitoring.md)", names, want)
	}
}

func TestDashboardSettings(t *testing.T) {
	t.Parallel()
	for name, uid := range pinned {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := load(t, name)
			if d.UID != uid {
				t.Errorf("uid %q, want %q", d.UID, uid)
			}
			if !strings.HasPrefix(d.Title, "Courier / ") {
				t.Errorf("title %q, want it to start with %q", d.Title, "Courier / ")
			}
			if d.ID != nil {
				t.Errorf("id %d, want null: an id ties the file to one Grafana database", *d.ID)
			}
			if d.SchemaVersion < 36 {
				t.Errorf("schemaVersion %d, want at least 36 (data source references by uid)", d.SchemaVersion)
			}
			if d.Time.From != "now-1h" || d.Time.To != "now" {
				t.Errorf("time range %s to %s, want now-1h to now", d.Time.From, d.Time.To)
			}
			if d.Refresh != "30s" {
				t.Errorf("refresh %q, want 30s", d.Refresh)
			}
			if !slices.Contains(d.Tags, "courier") {
				t.Errorf("tags %v, want courier among them (the dashboards link to each other by it)", d.Tags)
			}
		})
	}
}

func TestVariables(t *testing.T) {
	t.Parallel()
	for name := range pinned {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]variable{}
			for _, v := range load(t, name).Templating.List {
				vars[v.Name] = v
			}
			ds, ok := vars["datasource"]
			if !ok || ds.Type != "datasource" || ds.queryText() != "prometheus" {
				t.Errorf("datasource variable %+v, want type datasource with query prometheus", ds)
			}
			for _, label := range []string{"queue", "instance"} {
				v, ok := vars[label]
				if !ok {
					t.Errorf("no %s variable", label)
					continue
				}
				if v.Type != "query" || v.Datasource == nil || v.Datasource.UID != dsUID {
					t.Errorf("%s variable: type %q, datasource %+v; want a query on %s", label, v.Type, v.Datasource, dsUID)
				}
				if !v.Multi || !v.IncludeAll || v.AllValue != ".*" {
					t.Errorf("%s variable: multi %t, includeAll %t, allValue %q; want true, true, .*", label, v.Multi, v.IncludeAll, v.AllValue)
				}
				if q := v.queryText(); !regexp.MustCompile(`^label_values\(\w+, ` + label + `\)$`).MatchString(q) {
					t.Errorf("%s variable query %q, want label_values(<metric>, %s)", label, q, label)
				}
			}
		})
	}
}

// walk calls f for every panel, rows and the panels of collapsed rows
// included.
func walk(panels []panel, f func(p panel)) {
	for _, p := range panels {
		f(p)
		walk(p.Panels, f)
	}
}

func TestPanels(t *testing.T) {
	t.Parallel()
	for name := range pinned {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := load(t, name)
			ids := map[int]bool{}
			n := 0
			walk(d.Panels, func(p panel) {
				if ids[p.ID] {
					t.Errorf("panel %q: id %d is used twice", p.Title, p.ID)
				}
				ids[p.ID] = true
				if p.Title == "" {
					t.Errorf("panel %d has no title", p.ID)
				}
				if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
					t.Errorf("panel %q: gridPos %+v is outside the 24-column grid", p.Title, g)
				}
				if p.Type == "row" {
					if !p.Collapsed && len(p.Panels) > 0 {
						t.Errorf("row %q is open but holds panels (Grafana shows them only once collapsed)", p.Title)
					}
					return
				}
				n++
				checkPanel(t, p)
			})
			if n == 0 {
				t.Error("no panels")
			}
			checkOverlaps(t, d.Panels)
		})
	}
}

func checkPanel(t *testing.T, p panel) {
	t.Helper()
	if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != dsUID {
		t.Errorf("panel %q: datasource %+v, want prometheus %s", p.Title, p.Datasource, dsUID)
	}
	// What it shows and what a bad value means: the descriptions say
	// "Bad: ..." for the second part.
	if len(p.Description) < 80 || !strings.Contains(p.Description, "Bad") {
		t.Errorf("panel %q: description %q, want what it shows and what a bad value means (Bad: ...)", p.Title, p.Description)
	}
	if p.FieldConfig.Defaults.Unit == "" {
		t.Errorf("panel %q has no unit", p.Title)
	}
	if p.Type == "timeseries" && (p.Options.Legend == nil || !p.Options.Legend.ShowLegend) {
		t.Errorf("panel %q: the legend is hidden", p.Title)
	}
	if len(p.Targets) == 0 {
		t.Errorf("panel %q has no targets", p.Title)
	}
	refs := map[string]bool{}
	for _, tg := range p.Targets {
		if tg.Datasource == nil || tg.Datasource.UID != dsUID {
			t.Errorf("panel %q target %s: datasource %+v, want uid %s", p.Title, tg.RefID, tg.Datasource, dsUID)
		}
		if tg.RefID == "" || refs[tg.RefID] {
			t.Errorf("panel %q: refId %q is empty or repeated", p.Title, tg.RefID)
		}
		refs[tg.RefID] = true
		if strings.TrimSpace(tg.Expr) == "" {
			t.Errorf("panel %q target %s has no expr", p.Title, tg.RefID)
		}
		if tg.Format != "table" && tg.LegendFormat == "" {
			t.Errorf("panel %q target %s has no legendFormat", p.Title, tg.RefID)
		}
		for _, m := range varRE.FindAllStringSubmatch(tg.Expr, -1) {
			if !slices.Contains(knownVars, m[1]) {
				t.Errorf("panel %q target %s uses $%s, which is not a variable of the dashboard", p.Title, tg.RefID, m[1])
			}
		}
	}
}

// checkOverlaps reports top-level panels that cover the same grid cells.
func checkOverlaps(t *testing.T, panels []panel) {
	t.Helper()
	for i, a := range panels {
		for _, b := range panels[i+1:] {
			ga, gb := a.GridPos, b.GridPos
			if ga.X < gb.X+gb.W && gb.X < ga.X+ga.W && ga.Y < gb.Y+gb.H && gb.Y < ga.Y+ga.H {
				t.Errorf("panels %q %+v and %q %+v overlap", a.Title, ga, b.Title, gb)
			}
		}
	}
}
