package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-53d105c9/courier/dashboards"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The tests in this file check the monitoring kit (dashboards/, the alert
// rules in configs/alerts.yml, configs/prometheus.yml) with Debian's
// promtool and prometheus, and run every dashboard and alert query against
// a real Prometheus scraping a real fleet.

const (
	alertsFile      = "../../configs/alerts.yml"
	alertsTestFile  = "../../configs/alerts_test.yml"
	prometheusFile  = "../../configs/prometheus.yml"
	runbookFile     = "../../docs/monitoring.md"
	runbookURLStart = "https://github.com/seed-53d105c9/courier/blob/main/docs/monitoring.md#"
)

// TestAlertRulesCheck: promtool accepts the rules, and their unit tests in
// configs/alerts_test.yml pass.
func TestAlertRulesCheck(t *testing.T) {
	t.Parallel()
	promtool(t, "check", "rules", alertsFile)
	promtool(t, "test", "rules", alertsTestFile)
}

// TestPrometheusConfigCheck: promtool accepts configs/prometheus.yml, the
// rule files it loads included.
func TestPrometheusConfigCheck(t *testing.T) {
	t.Parallel()
	promtool(t, "check", "config", prometheusFile)
}

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// ruleTests is the part of a promtool unit test file the tests read.
type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestAlertRulesDocumented: every alert has a for, a severity, a summary, a
// description naming what it is about, a runbook_url whose docs/monitoring.md
// paragraph exists, and unit tests that see it fire and stay quiet.
func TestAlertRulesDocumented(t *testing.T) {
	t.Parallel()
	var rules ruleFile
	readYAML(t, alertsFile, &rules)
	var tests ruleTests
	readYAML(t, alertsTestFile, &tests)
	readme, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				quiet[at.Alertname] = true
			}
		}
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if r.For == "" {
				t.Errorf("%s has no for: one bad evaluation would page", r.Alert)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s has no summary", r.Alert)
			}
			if d := r.Annotations["description"]; !strings.Contains(d, "{{ $labels.") {
				t.Errorf("%s: description %q does not name the queue, lock or process ({{ $labels.… }})", r.Alert, d)
			}
			if u, want := r.Annotations["runbook_url"], runbookURLStart+strings.ToLower(r.Alert); u != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, u, want)
			}
			if !strings.Contains(string(readme), "\n### "+r.Alert+"\n") {
				t.Errorf("%s: docs/monitoring.md has no runbook paragraph (### %s) for the runbook_url to point at", r.Alert, r.Alert)
			}
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("%s: %s needs a test case where it fires and one where it does not (fires %t, quiet %t)",
					r.Alert, alertsTestFile, fires[r.Alert], quiet[r.Alert])
			}
		}
	}
	if n == 0 {
		t.Errorf("%s has no alerts", alertsFile)
	}
}

// The monitored fleet: two queues on a flaky webhook endpoint, each with a
// periodic job, served by two processes with short leases, with the HTTP
// API on http.addr.
const (
	monQueueA = "mon_a"
	monQueueB = "mon_b"
	// monToken is the fleet's API token; no request of the test uses it.
	monToken = "0708b2827a119271ebe322b04dbada7f4e666911275ff5dcf37513c6ed4ea217"
	// monWrongToken is a well-formed token the fleet does not know.
	monWrongToken = "91138bf8c370b82be88b6faef14089edd86ba153df6408b50b456e21823b3e76"
)

func monitoringConfig(redisAddr, prefix, hookURL string) string {
	queue := func(name string, concurrency int) string {
		return fmt.Sprintf(`  %s:
    handler: webhook
    concurrency: %d
    max_attempts: 3
    timeout: 10s
    backoff:
      steps: [200ms]
    webhook:
      url: %s/%s
      allow_networks: [127.0.0.0/8]
      timeout: 5s
    periodic:
      tick:
        every: 1s
        payload: '{"tick": true}'
`, name, concurrency, hookURL, name)
	}
	return fmt.Sprintf(`
redis:
  addr: %s
  prefix: %s
http:
  addr: 127.0.0.1:0
shutdown:
  timeout: 1s
lease:
  duration: 2s
leader:
  lease: 1s
admin:
  tokens:
    - {name: ops, token: %s, role: admin}
queues:
%s%s`, redisAddr, prefix, monToken, queue(monQueueA, 4), queue(monQueueB, 8))
}

// failAuthentication sends requests to the API at addr that fail
// authentication, n with a wrong token and one without, so that
// courier_api_auth_failures_total moves. n stays below
// admin.failed_auth_limit (10 per 1m): a throttled 127.0.0.1 would get 429,
// held a second, instead of the 401 checked here.
func failAuthentication(t *testing.T, addr string, n int) {
	t.Helper()
	for i := range n + 1 {
		token := monWrongToken
		if i == n {
			token = ""
		}
		if code, body := apiRequest(t, http.MethodGet, "http://"+addr+"/v1/queues", token, ""); code != http.StatusUnauthorized {
			t.Fatalf("GET /v1/queues on %s with token %q: %d %s, want 401", addr, token, code, body)
		}
	}
}

// flakyEndpoint answers webhooks like a real, imperfect receiver: mostly 200
// after a few milliseconds, sometimes 500 (retried), 400 (dead), 429 with
// Retry-After (snoozed) or 200 after 1.5s (long enough to be cancelled by a
// drain).
func flakyEndpoint(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		delay := time.Duration(1+rand.IntN(20)) * time.Millisecond
		status := http.StatusOK
		switch n := rand.IntN(100); {
		case n < 8:
			status = http.StatusInternalServerError
		case n < 13:
			status = http.StatusBadRequest
		case n < 16:
			status = http.StatusTooManyRequests
			w.Header().Set("Retry-After", "1")
		case n < 17:
			delay = 1500 * time.Millisecond
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		served.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, &served
}

// startLoad enqueues jobs on both queues every 50ms, a third of them
// delayed by up to 2s, until the returned function is called; it returns
// the first enqueue error.
func startLoad(t *testing.T, prefix string) (stop func() error) {
	client := testClient(t, prefix)
	done := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var first error
		for {
			select {
			case <-done:
				result <- first
				return
			case <-tick.C:
			}
			var specs []worker.JobSpec
			for _, q := range []string{monQueueA, monQueueB} {
				for i := range 3 {
					spec := worker.JobSpec{Queue: q, Payload: []byte(`{"load": true}`)}
					if i == 2 {
						// Delayed, and of a job key: the keys' metrics
						// (courier_key_*) have keys with waiting jobs.
						spec.Delay = time.Duration(rand.IntN(2000)) * time.Millisecond
						spec.Key = fmt.Sprintf("tenant-%d", rand.IntN(3))
					}
					specs = append(specs, spec)
				}
			}
			if _, err := client.Enqueue(t.Context(), specs); err != nil && first == nil {
				first = err
			}
		}
	}()
	return func() error {
		close(done)
		return <-result
	}
}

// TestDashboardQueriesReturnData runs a fleet of two courier processes under
// load, with a leader handover and a few failed API authentications,
// scraped every second by a real Prometheus that also loads
// configs/alerts.yml. Then every dashboard query (queue and instance
// variables set to the fleet's), every dashboard variable and every alert
// measure must return data, the alerts that a healthy fleet must not
// trigger must be quiet, and every metric they name must be one the daemon
// exports.
func TestDashboardQueriesReturnData(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	promBin := requireTool(t, "prometheus")
	redisAddr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	hook, served := flakyEndpoint(t)
	cfg := writeConfig(t, monitoringConfig(redisAddr, prefix, hook.URL))

	p1 := startCourier(t, nil, "run", "--config", cfg)
	addr1 := p1.waitOutput(httpAddrRE, 20*time.Second)
	p1.waitOutput(poolStartedRE, 20*time.Second)
	p2 := startCourier(t, nil, "run", "--config", cfg)
	addr2 := p2.waitOutput(httpAddrRE, 20*time.Second)
	p2.waitOutput(poolStartedRE, 20*time.Second)
	instances := []string{addr1, addr2}

	prom := startPrometheus(t, promBin, instances)
	stopLoad := startLoad(t, prefix)
	defer func() {
		if err := stopLoad(); err != nil {
			t.Errorf("enqueue: %v", err)
		}
	}()
	prom.waitTargetsUp(t, len(instances), 20*time.Second)
	waitServed(t, served, 600, 30*time.Second)

	// Hand leadership over: p1 drains and stops, p2 leads every queue, p1
	// comes back on the same address as a follower that contends for the
	// locks.
	p1.signal(syscall.SIGTERM)
	if code := p1.wait(20 * time.Second); code != 0 {
		t.Fatalf("p1 exited with %d after SIGTERM, want 0", code)
	}
	testkit.Poll{Every: logPollEvery}.EventuallyState(t, 10*time.Second, func() (bool, string) {
		return leadsByLog(p2, monQueueA) && leadsByLog(p2, monQueueB), "p2 does not lead both queues after p1 stopped"
	})
	p1 = startCourier(t, nil, "run", "--config", cfg, "--http-addr", addr1)
	p1.waitOutput(poolStartedRE, 20*time.Second)
	waitServed(t, served, served.Load()+600, 30*time.Second)

	// A client with a wrong token, far below CourierAPIAuthFailures.
	for _, addr := range instances {
		failAuthentication(t, addr, 3)
	}

	// Queries need a few scrapes of the new state: try until every check
	// passes, and report the last attempt (its problems are the failure).
	var r *monitoringReport
	_ = testkit.Poll{Every: 2 * time.Second}.Until(t, 45*time.Second, func() bool {
		r = checkMonitoring(t, prom, instances)
		return len(r.problems) == 0
	})
	for _, l := range r.log {
		t.Log(l)
	}
	for _, p := range r.problems {
		t.Error(p)
	}
	logExamples(t, instances)
}

// monitoringReport is the outcome of one round of checks.
type monitoringReport struct {
	log      []string // one line per query
	problems []string
}

func (r *monitoringReport) logf(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *monitoringReport) errorf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// quietAlerts are the alerts whose condition must be empty for the test's
// healthy fleet. CourierDeadSetGrowing is not among them: the endpoint
// kills jobs with 400s on purpose, so its condition must hold.
var quietAlerts = []string{
	"CourierQueueLagHigh", "CourierNoLeader", "CourierLeaderFlapping", "CourierLockRenewalFailures",
	"CourierRedisErrors", "CourierNoWorkers", "CourierQueueStalled", "CourierRedisRefusingWrites",
	"CourierAPIAuthFailures", "CourierKeyStarved", "CourierKeyAtCap",
}

// checkMonitoring runs every dashboard and alert query once.
func checkMonitoring(t *testing.T, prom *prometheusServer, instances []string) *monitoringReport {
	t.Helper()
	r := &monitoringReport{}
	vars := map[string]string{
		"queue":           "(" + monQueueA + "|" + monQueueB + ")",
		"instance":        "(" + strings.Join(instances, "|") + ")",
		"__rate_interval": "1m",
		"__interval":      "15s",
		"__range":         "5m",
	}
	var used []string // every query, for the metric names
	for _, d := range loadDashboards(t) {
		for _, v := range d.variables {
			used = append(used, v.query)
			checkVariable(t, prom, r, d.name, v, instances)
		}
		for _, q := range d.queries {
			used = append(used, q.expr)
			expr, err := expandVars(q.expr, vars)
			if err != nil {
				r.errorf("%s / %s [%s]: %v", d.name, q.panel, q.ref, err)
				continue
			}
			checkQuery(t, prom, r, fmt.Sprintf("%s / %s [%s]", d.name, q.panel, q.ref), expr)
		}
	}

	rules := prom.alertRules(t)
	if len(rules) == 0 {
		r.errorf("Prometheus loaded no alert rules from %s", alertsFile)
	}
	for _, rule := range rules {
		used = append(used, rule.Query)
		if rule.Health != "ok" {
			r.errorf("alert %s: health %q (%s), want ok", rule.Name, rule.Health, rule.LastError)
		}
		if len(splitTop(rule.Query)) < 2 {
			r.errorf("alert %s: %s is not a condition (<measure> > <threshold>)", rule.Name, rule.Query)
		}
		full, err := prom.query(t, rule.Query)
		switch {
		case err != nil:
			r.errorf("alert %s: %v", rule.Name, err)
		case slices.Contains(quietAlerts, rule.Name) && len(full) > 0:
			r.errorf("alert %s: its condition holds for a healthy fleet: %s → %v", rule.Name, rule.Query, full)
		case !slices.Contains(quietAlerts, rule.Name) && len(full) == 0:
			r.errorf("alert %s: its condition is empty, though the fleet should trigger it: %s", rule.Name, rule.Query)
		default:
			r.logf("alert %s (%s): condition holds for %d series", rule.Name, rule.State, len(full))
		}
		for i, m := range alertMeasures(rule.Query) {
			checkQuery(t, prom, r, fmt.Sprintf("alert %s, measure %d", rule.Name, i+1), m)
		}
	}
	checkMetricNames(t, r, used, instances)
	return r
}

// checkQuery runs expr and requires at least one series with a value.
func checkQuery(t *testing.T, prom *prometheusServer, r *monitoringReport, what, expr string) {
	t.Helper()
	res, err := prom.query(t, expr)
	if err != nil {
		r.errorf("%s: %v", what, err)
		return
	}
	values := 0
	for _, s := range res {
		if !math.IsNaN(s.value) {
			values++
		}
	}
	r.logf("%s: %d series, %d with a value", what, len(res), values)
	if values == 0 {
		r.errorf("%s: %s returned %d series and no value, want data", what, expr, len(res))
	}
}

// checkVariable runs a label_values variable query the way Grafana does.
func checkVariable(t *testing.T, prom *prometheusServer, r *monitoringReport, dashboard string, v dashboardVariable, instances []string) {
	t.Helper()
	m := labelValuesRE.FindStringSubmatch(v.query)
	if m == nil {
		r.errorf("%s: variable %s: query %q is not label_values(<metric>, <label>)", dashboard, v.name, v.query)
		return
	}
	values, err := prom.labelValues(t, m[2], m[1])
	if err != nil {
		r.errorf("%s: variable %s: %v", dashboard, v.name, err)
		return
	}
	r.logf("%s: variable %s = %s: %d values %v", dashboard, v.name, v.query, len(values), values)
	want := map[string][]string{"queue": {monQueueA, monQueueB}, "instance": instances}[v.name]
	if want != nil && !slices.Equal(values, slices.Sorted(slices.Values(want))) {
		r.errorf("%s: variable %s has values %v, want %v", dashboard, v.name, values, want)
	}
}

// checkMetricNames requires every metric name in the queries to be one the
// daemon exports, and every courier_ metric the daemon exports to be on a
// dashboard or in an alert.
func checkMetricNames(t *testing.T, r *monitoringReport, queries, instances []string) {
	t.Helper()
	exported := map[string]bool{} // names a query may use, _bucket and friends included
	families := map[string]bool{}
	for _, addr := range instances {
		fams, err := scrape(t, addr)
		if err != nil {
			r.errorf("%v", err)
			return
		}
		for name, typ := range fams {
			families[name] = true
			exported[name] = true
			if typ == "histogram" || typ == "summary" {
				exported[name+"_bucket"], exported[name+"_sum"], exported[name+"_count"] = true, true, true
			}
		}
	}
	usedFamily := map[string]bool{}
	for _, q := range queries {
		for _, name := range metricNameRE.FindAllString(q, -1) {
			if !exported[name] {
				r.errorf("%s is not exported by courier run (query %s)", name, q)
			}
			usedFamily[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")] = true
			usedFamily[name] = true
		}
	}
	for name := range families {
		if strings.HasPrefix(name, "courier_") && !usedFamily[name] {
			r.errorf("%s is exported but no dashboard or alert uses it", name)
		}
	}
}

// scrape returns the metric families an instance exports, by type.
func scrape(t *testing.T, addr string) (map[string]string, error) {
	t.Helper()
	text, err := get(t, "http://"+addr+"/metrics")
	if err != nil {
		return nil, err
	}
	fams := map[string]string{}
	for _, line := range lines(text) {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = f[3]
		}
	}
	return fams, nil
}

// logExamples logs a sample of every courier_ metric, preferring a
// non-zero one (for histograms, their _count).
func logExamples(t *testing.T, instances []string) {
	t.Helper()
	examples := map[string]string{}
	for _, addr := range instances {
		text, err := get(t, "http://"+addr+"/metrics")
		if err != nil {
			t.Error(err)
			return
		}
		types := map[string]string{}
		for _, line := range lines(text) {
			f := strings.Fields(line)
			if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
				types[f[2]] = f[3]
				continue
			}
			if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, "courier_") {
				continue
			}
			name := line[:strings.IndexAny(line, "{ ")]
			family := name
			if base := strings.TrimSuffix(name, "_count"); types[base] == "histogram" {
				family = base
			} else if types[name] == "" {
				continue // a _bucket or _sum line
			}
			value := f[len(f)-1]
			if prev, ok := examples[family]; !ok || strings.HasSuffix(prev, " 0") && value != "0" {
				examples[family] = addr + ": " + line
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(examples)) {
		t.Logf("example %s", examples[name])
	}
}

func get(t *testing.T, u string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return string(b), nil
}

func waitServed(t *testing.T, served *atomic.Int64, n int64, d time.Duration) {
	t.Helper()
	testkit.EventuallyState(t, d, func() (bool, string) {
		got := served.Load()
		return got >= n, fmt.Sprintf("the endpoint answered %d webhooks, want %d", got, n)
	})
}

// dashboardQueries are the queries of one dashboard.
type dashboardQueries struct {
	name      string
	variables []dashboardVariable
	queries   []panelQuery
}

type dashboardVariable struct{ name, query string }

type panelQuery struct{ panel, ref, expr string }

// grafanaPanel is the part of a Grafana panel the test reads.
type grafanaPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

func loadDashboards(t *testing.T) []dashboardQueries {
	t.Helper()
	names, err := fs.Glob(dashboards.Files, "*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no dashboards (%v)", err)
	}
	var out []dashboardQueries
	for _, name := range names {
		b, err := fs.ReadFile(dashboards.Files, name)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Templating struct {
				List []struct {
					Name  string          `json:"name"`
					Type  string          `json:"type"`
					Query json.RawMessage `json:"query"`
				} `json:"list"`
			} `json:"templating"`
			Panels []grafanaPanel `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dq := dashboardQueries{name: name}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			var q struct {
				Query string `json:"query"`
			}
			if json.Unmarshal(v.Query, &q) != nil {
				_ = json.Unmarshal(v.Query, &q.Query) // the older form: a string
			}
			dq.variables = append(dq.variables, dashboardVariable{v.Name, q.Query})
		}
		var walk func([]grafanaPanel)
		walk = func(panels []grafanaPanel) {
			for _, p := range panels {
				for _, tg := range p.Targets {
					dq.queries = append(dq.queries, panelQuery{p.Title, tg.RefID, tg.Expr})
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)
		out = append(out, dq)
	}
	return out
}
