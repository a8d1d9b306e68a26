// The helpers in this file run Debian's promtool and a real prometheus
// process for the monitoring tests, write its configuration and call its
// HTTP API.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// requireTool returns the path of promtool or prometheus. Only -short runs
// may do without them.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if testing.Short() {
		t.Skipf("%s is not installed", name)
	}
	t.Fatalf("%s: %v: install Debian's prometheus package (apt-get install prometheus)", name, err)
	return ""
}

func promtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), requireTool(t, "promtool"), args...).CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		return
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), strings.TrimSpace(string(out)))
}

// prometheusPollEvery is how often the tests ask Prometheus again while
// they wait: each look is an HTTP request to it.
const prometheusPollEvery = 50 * time.Millisecond

// prometheusServer is a prometheus process with its own storage.
type prometheusServer struct {
	url  string
	cmd  *exec.Cmd
	out  testkit.Buffer
	done chan struct{}
}

// startPrometheus starts prometheus scraping targets every second and
// evaluating configs/alerts.yml every second.
func startPrometheus(t *testing.T, bin string, targets []string) *prometheusServer {
	t.Helper()
	dir := t.TempDir()
	rules, err := filepath.Abs(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: courier
    static_configs:
      - targets: [%s]
`, strconv.Quote(rules), strings.Join(quoted, ", "))
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// A port picked now may be taken before prometheus binds it: try again.
	for attempt := 1; ; attempt++ {
		p, err := launchPrometheus(t, bin, configPath, filepath.Join(dir, "data"))
		if err == nil {
			return p
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Log(err)
	}
}

func launchPrometheus(t *testing.T, bin, configPath, dataDir string) (*prometheusServer, error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	p := &prometheusServer{url: "http://" + addr, done: make(chan struct{})}
	p.cmd = exec.Command(bin,
		"--config.file="+configPath,
		"--storage.tsdb.path="+dataDir,
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("prometheus output:\n%s", p.out.String())
		}
	})
	err = testkit.Poll{Every: prometheusPollEvery, Stop: p.done}.Until(t, 20*time.Second, func() bool {
		_, err := get(t, p.url+"/-/ready")
		return err == nil
	})
	switch {
	case errors.Is(err, testkit.ErrStopped):
		return nil, fmt.Errorf("prometheus on %s exited: %s", addr, p.out.String())
	case err != nil:
		return nil, fmt.Errorf("prometheus on %s not ready after 20s: %s", addr, p.out.String())
	}
	return p, nil
}

// api calls a Prometheus HTTP API endpoint and decodes its data.
func (p *prometheusServer) api(t *testing.T, path string, params url.Values, data any) error {
	t.Helper()
	u := p.url + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s %v: status %q: %s", path, params, body.Status, body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

// series is one element of an instant vector.
type series struct {
	labels map[string]string
	value  float64
}

// query runs an instant query and returns its vector.
func (p *prometheusServer) query(t *testing.T, expr string) ([]series, error) {
	t.Helper()
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.api(t, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: result type %s, want vector", expr, data.ResultType)
	}
	out := make([]series, len(data.Result))
	for i, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %v: %w", expr, r.Value[1], err)
		}
		out[i] = series{r.Metric, v}
	}
	return out, nil
}

// labelValues returns the values of label on the series that match
// selector, as Grafana's label_values(selector, label) does.
func (p *prometheusServer) labelValues(t *testing.T, label, selector string) ([]string, error) {
	t.Helper()
	var values []string
	err := p.api(t, "/api/v1/label/"+label+"/values", url.Values{"match[]": {selector}}, &values)
	slices.Sort(values)
	return values, err
}

// alertRule is an alerting rule as Prometheus reports it.
type alertRule struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	State     string `json:"state"`
}

func (p *prometheusServer) alertRules(t *testing.T) []alertRule {
	t.Helper()
	var data struct {
		Groups []struct {
			Rules []alertRule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.api(t, "/api/v1/rules", url.Values{"type": {"alert"}}, &data); err != nil {
		t.Fatal(err)
	}
	var out []alertRule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// waitTargetsUp waits until n targets are scraped successfully.
func (p *prometheusServer) waitTargetsUp(t *testing.T, n int, d time.Duration) {
	t.Helper()
	testkit.Poll{Every: prometheusPollEvery}.EventuallyState(t, d, func() (bool, string) {
		var data struct {
			ActiveTargets []struct {
				ScrapeURL string `json:"scrapeUrl"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		}
		if err := p.api(t, "/api/v1/targets", nil, &data); err != nil {
			return false, err.Error()
		}
		up, status := 0, fmt.Sprintf("want %d healthy scrape targets:", n)
		for _, tg := range data.ActiveTargets {
			if tg.Health == "up" {
				up++
			}
			status += fmt.Sprintf(" %s %s %s;", tg.ScrapeURL, tg.Health, tg.LastError)
		}
		return up == n, status
	})
}
