package ui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestStepPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		values []int64
		want   string
	}{
		{[]int64{0, 0, 0}, "M0 9h3"},
		{[]int64{10, 0, 0, 5, 5}, "M0 0h1V9h2V4h2"},
		{[]int64{1, 1000}, "M0 8h1V0h1"}, // a value above zero shows
		{nil, ""},
	} {
		if got := stepPath(tc.values, maxOf(tc.values)); got != tc.want {
			t.Errorf("stepPath(%v) = %q, want %q", tc.values, got, tc.want)
		}
	}
}

func maxOf(vs []int64) int64 {
	var m int64
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

func TestLinePathAndScale(t *testing.T) {
	t.Parallel()
	if got, want := linePath([]int64{0, 5, 10}, 10), "M44 108L344 58 644 8"; got != want {
		t.Fatalf("linePath = %q, want %q", got, want)
	}
	for n, want := range map[int64]int64{0: 1, 1: 1, 3: 5, 7: 10, 11: 20, 1626: 2000, 5000: 5000} {
		if got := niceCeil(n); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestPayloadView(t *testing.T) {
	t.Parallel()
	if v := showPayload([]byte(`{"a":[1,2]}`)); v.Kind != "JSON" || v.Text != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Errorf("JSON: %+v", v)
	}
	if v := showPayload([]byte("héllo")); v.Kind != "text" || v.Text != "héllo" {
		t.Errorf("text: %+v", v)
	}
	if v := showPayload([]byte{0xff, 'a'}); v.Kind != "binary" || !strings.HasPrefix(v.Text, "00000000  ff 61") {
		t.Errorf("binary: %+v", v)
	}
	// A cut never splits a character.
	long := strings.Repeat("é", maxShown)
	if v := showPayload([]byte(long)); !v.Truncated || len(v.Text) != maxShown || v.Size != 2*maxShown {
		t.Errorf("long: truncated %v, %d bytes shown of %d", v.Truncated, len(v.Text), v.Size)
	}
}

func TestParsePayload(t *testing.T) {
	t.Parallel()
	nonce := strings.Repeat("ab", 16)
	name, exp, n, ok := parsePayload("v1|odd|name|1700000000|" + nonce)
	if !ok || name != "odd|name" || exp != 1700000000 || n != nonce {
		t.Fatalf("got %q %d %q %v", name, exp, n, ok)
	}
	for _, bad := range []string{"", "v2|a|1|" + nonce, "v1|a|x|" + nonce, "v1|a|1|short", "v1|" + nonce} {
		if _, _, _, ok := parsePayload(bad); ok {
			t.Errorf("parsePayload(%q) accepted", bad)
		}
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/ui/queues/q?state=dead": "/ui/queues/q?state=dead",
		"/ui/":                    "/ui/",
		"//evil.example/ui/":      "",
		"https://evil.example/":   "",
		"/ui/login?next=/ui/":     "",
		"/v1/queues":              "",
		"/ui/\\evil":              "",
		"":                        "",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// countingHistory is a Backend's History that records the minutes asked.
type countingHistory struct {
	Backend
	asked []int // minutes per call
}

func (c *countingHistory) History(_ context.Context, _ string, from, to time.Time) ([]admin.HistoryMinute, error) {
	var out []admin.HistoryMinute
	for t := from.Truncate(time.Minute); t.Before(to.Truncate(time.Minute)); t = t.Add(time.Minute) {
		out = append(out, admin.HistoryMinute{Start: t, Succeeded: t.Unix() / 60 % 100})
	}
	c.asked = append(c.asked, len(out))
	return out, nil
}

func TestHistoryCacheReadsOnlyUnsettledMinutes(t *testing.T) {
	t.Parallel()
	b := &countingHistory{}
	c := newHistoryCache()
	now := time.Date(2026, 1, 1, 12, 30, 20, 0, time.UTC)
	read := func(now time.Time) []admin.HistoryMinute {
		from, to := historySpan(now)
		got, err := c.history(t.Context(), b, "q", from, to, now)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := (&countingHistory{}).History(t.Context(), "q", from, to)
		if len(got) != len(want) {
			t.Fatalf("%d minutes, want %d", len(got), len(want))
		}
		for i := range got {
			if !got[i].Start.Equal(want[i].Start) || got[i].Succeeded != want[i].Succeeded {
				t.Fatalf("minute %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		return got
	}
	read(now)
	read(now.Add(5 * time.Second))
	read(now.Add(3 * time.Minute))
	// The whole hour, then the minutes that had not settled (the last two
	// ended less than settleAfter ago, and the one in progress), then those
	// three and the three minutes since.
	if want := []int{60, 3, 6}; !slices.Equal(b.asked, want) {
		t.Fatalf("minutes read %v, want %v", b.asked, want)
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab ", 1000)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "—"},
		{"json", []byte(`{"a": [1,` + "\n" + ` 2]}`), `{"a": [1, 2]}`},
		{"text", []byte("héllo\t\tworld\n"), "héllo world"},
		{"long text", []byte(long), strings.TrimSpace(long[:previewRunes]) + "…"},
		{"long word", []byte(strings.Repeat("é", 1000)), strings.Repeat("é", previewRunes) + "…"},
		{"binary", []byte{0xff, 0x00}, "binary, 2 bytes: ff00"},
		{"long binary", append([]byte{0xff}, make([]byte, 1999)...), "binary, 2,000 bytes: ff" + strings.Repeat("00", previewBytes-1) + "…"},
	} {
		if got := preview(tc.in); got != tc.want {
			t.Errorf("%s: preview = %q, want %q", tc.name, got, tc.want)
		}
	}
	// White space past the part read: the cut still shows.
	if got := preview([]byte("a" + strings.Repeat(" ", 1000) + "b")); got != "a…" {
		t.Errorf("preview of a, spaces, b = %q, want %q", got, "a…")
	}
}

func TestPercent(t *testing.T) {
	t.Parallel()
	for p, want := range map[float64]string{0: "0%", 42: "42%", 42.5: "42.5%", 99.99: "99.99%", 100: "100%"} {
		if got := percent(p); got != want {
			t.Errorf("percent(%v) = %q, want %q", p, got, want)
		}
	}
}

func TestTimelineOfACompletedJob(t *testing.T) {
	t.Parallel()
	now := time.Now()
	j := &worker.Job{State: worker.StateCompleted, Attempt: 3, EnqueuedAt: now.Add(-time.Minute), FinishedAt: now, LastError: "boom"}
	ev := timeline(j, now)
	if len(ev) != 3 || ev[1].What != "2 attempt(s) failed and were retried; the last with" || ev[1].Detail != "boom" ||
		ev[2].What != "completed at attempt 3" || !ev[2].At.Equal(now) {
		t.Fatalf("timeline = %+v", ev)
	}
	if ev := timeline(&worker.Job{State: worker.StateCompleted, Attempt: 1, FinishedAt: now}, now); len(ev) != 2 {
		t.Fatalf("a job completed at its first attempt: timeline = %+v", ev)
	}
}

// TestTimelineOfACancelledJob: a job cancelled while its attempt ran is
// not said to have failed and been retried.
func TestTimelineOfACancelledJob(t *testing.T) {
	t.Parallel()
	now := time.Now()
	j := &worker.Job{State: worker.StateCancelled, Attempt: 1, EnqueuedAt: now.Add(-time.Minute), FinishedAt: now, LastError: "cancelled"}
	ev := timeline(j, now)
	if len(ev) != 2 || ev[1].What != "cancelled after 1 attempt(s)" || ev[1].Detail != "cancelled" || !ev[1].At.Equal(now) {
		t.Fatalf("timeline = %+v", ev)
	}
}
