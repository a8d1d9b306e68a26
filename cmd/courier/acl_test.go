package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/redisproc"
	"github.com/seed-53d105c9/courier/internal/testkit"
)

// readmeACL returns the ACL SETUSER line of docs/security.md ("A minimal
// Redis user"), with its key and channel patterns moved to prefix and its
// password set to password: the test holds the documentation to its word.
func readmeACL(t *testing.T, prefix, password string) []string {
	t.Helper()
	readme, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^[ \t]*ACL SETUSER courier .*$`).Find(readme)
	if line == nil {
		t.Fatal("docs/security.md has no line starting with \"ACL SETUSER courier \"")
	}
	acl := strings.NewReplacer(
		"~courier:*", "~"+prefix+":*",
		"&courier:*", "&"+prefix+":*",
		"&redisson_lock__channel:courier:*", "&redisson_lock__channel:"+prefix+":*",
		">CHANGE-ME", ">"+password,
	).Replace(string(line))
	return strings.Fields(acl)
}

// TestMinimalACL runs the whole workflow as the minimal Redis user of docs/security.md
// — two daemons (a leader and a follower waiting on the lock's channel),
// webhook deliveries, a failure into the dead set, periodic jobs, a rate
// limit, enqueue by CLI and API, inspect, dead list, requeue and purge, a
// graceful stop — on a single Redis and on a Cluster, and checks that Redis
// refused nothing (an empty ACL LOG). acl_scripts_test.go holds the same
// line to every script of the catalog (TestMinimalACLEveryScript) and to
// every command a script may call (TestACLAllowsEveryScriptCommand).
func TestMinimalACL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Redis and courier processes")
	}
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		p := testkit.StartPrivate(t)
		runACLWorkflow(t, []*testkit.Private{p})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := testkit.StartPrivateCluster(t, 3, 0)
		runACLWorkflow(t, c.Nodes)
	})
}

func runACLWorkflow(t *testing.T, nodes []*testkit.Private) {
	prefix, password := "acl", "s3cret-"+strings.ReplaceAll(t.Name(), "/", "-")
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
		args := readmeACL(t, prefix, password)
		n.MustDo(t, args...)
		n.MustDo(t, "ACL", "LOG", "RESET")
	}

	var delivered atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64)
		n, _ := r.Body.Read(buf)
		if strings.Contains(string(buf[:n]), "fail") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)

	token := "7d1f0c9a4e6b2a8d3c5e7f9b1a3c5e7d"
	cfg := writeConfig(t, fmt.Sprintf(`
redis:
  addr: [%s]
  username: courier
  password: %s
  prefix: %s
http:
  addr: 127.0.0.1:0
shutdown:
  timeout: 5s
admin:
  tokens:
    - {name: ops, token: %s, role: admin}
queues:
  hooks:
    handler: webhook
    max_attempts: 1
    webhook:
      url: %s/hook
      allow_networks: [127.0.0.0/8]
    periodic:
      tick: {every: 1s, payload: tick}
  logs:
    handler: log
    rate_limit: 100 per 1s
`, strings.Join(addrs, ", "), password, prefix, token, recv.URL))

	daemons := []*proc{startCourier(t, nil, "run", "--config", cfg), startCourier(t, nil, "run", "--config", cfg)}
	httpAddr := daemons[0].waitOutput(httpAddrRE, 30*time.Second)
	daemons[1].waitOutput(httpAddrRE, 30*time.Second)

	cli := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := courierCLI(t.Context(), t, nil, append(args, "--config", cfg)...)
		if code != 0 {
			t.Fatalf("courier %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
		return stdout
	}
	cli("enqueue", "--queue", "hooks", "--payload", "ok")
	cli("enqueue", "--queue", "hooks", "--payload", "fail", "--id", "f1")
	cli("enqueue", "--queue", "logs", "--payload", "later", "--delay", "300ms")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		"http://"+httpAddr+"/v1/queues/logs/jobs", strings.NewReader(`{"payload": "by api"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("enqueue through the API: %s", resp.Status)
	}
	aclUISession(t, httpAddr, token)

	testkit.EventuallyState(t, 30*time.Second, func() (bool, string) {
		out := cli("inspect", "--queue", "hooks", "--json")
		return strings.Contains(out, `"dead": 1`) && delivered.Load() >= 3, // ok + two ticks at least
			fmt.Sprintf("inspect: %s; delivered %d", out, delivered.Load())
	})
	cli("inspect", "--queue", "hooks", "--job", "f1")
	cli("dead", "list", "--queue", "hooks")
	cli("dead", "requeue", "--queue", "hooks", "--job", "f1")
	testkit.EventuallyState(t, 30*time.Second, func() (bool, string) {
		out := cli("inspect", "--queue", "hooks", "--json")
		return strings.Contains(out, `"dead": 1`), "inspect: " + out
	})
	cli("dead", "purge", "--queue", "hooks", "--all", "--yes")
	cli("queue", "pause", "--queue", "logs")
	if out := cli("queue", "status", "--queue", "logs", "--json"); !strings.Contains(out, `"paused": true`) {
		t.Errorf("queue status after a pause: %s", out)
	}
	cli("queue", "resume", "--queue", "logs")

	for _, d := range daemons {
		d.signal(syscall.SIGTERM)
	}
	for _, d := range daemons {
		if code := d.wait(30 * time.Second); code != 0 {
			t.Fatalf("courier run exited %d", code)
		}
	}
	for _, n := range nodes {
		entries, err := redisproc.Command(t.Context(), n.Addr, "ACL", "LOG")
		if err != nil {
			t.Fatal(err)
		}
		if list, _ := entries.([]any); len(list) > 0 {
			t.Errorf("Redis at %s refused the ACL user of docs/security.md %d time(s): %v", n.Addr, len(list), list)
		}
	}
}

// aclUISession logs in to the web UI, loads a page, logs out (the log-out
// is kept in Redis) and checks the old cookie is refused, so that the
// session's Redis commands run as the ACL user.
func aclUISession(t *testing.T, httpAddr, token string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	base := "http://" + httpAddr
	post := func(path string, form url.Values) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get := func(path string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	post("/ui/login", url.Values{"token": {token}})
	status, body := get("/ui/queues/logs")
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if status != http.StatusOK || csrf == nil {
		t.Fatalf("the UI as the ACL user: %d\n%s", status, body)
	}
	u, _ := url.Parse(base + "/ui/")
	cookies := jar.Cookies(u)
	if status := post("/ui/logout", url.Values{"csrf": {csrf[1]}}); status != http.StatusOK {
		t.Fatalf("log-out as the ACL user: %d", status)
	}
	jar.SetCookies(u, cookies)
	if _, body := get("/ui/queues/logs"); !strings.Contains(body, `id="login-token"`) {
		t.Fatalf("the logged-out session still works as the ACL user:\n%s", body)
	}
}
