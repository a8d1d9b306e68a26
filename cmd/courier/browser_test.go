package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// The web UI's tests drive a real, headless Chromium through the Chrome
// DevTools protocol (chromedp): Debian's chromium package, which make test
// installs (.ci/setup). Without it they fail, they do not skip: CI must run them.

// chromiumPath finds the browser: $COURIER_TEST_CHROMIUM, else the first
// of Debian's and Google's names on PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("COURIER_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the web UI's tests need Chromium: install Debian's chromium package (apt-get install chromium), " +
		"as make test does, or set COURIER_TEST_CHROMIUM to a Chromium or Chrome binary")
	return ""
}

// browser is one headless Chromium with its own profile (cookies), and the
// test it belongs to.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// newBrowser starts a headless Chromium for t, stopped at its end.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // root in CI's container
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, stop := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	t.Cleanup(stop)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx}
}

// fail fails the test with err and what the page shows.
func (b *browser) fail(err error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	url, _ := chromedp.Run(ctx, chromedp.Location())
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	b.t.Fatalf("browser: %v\nat %s:\n%s", err, url, body)
}

// do runs steps, failing the test after within or on an error.
func (b *browser) do(within time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, within)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail(err)
	}
}

// open navigates to url and waits for the CSS selector sel.
func (b *browser) open(url, sel string) {
	b.t.Helper()
	b.do(20*time.Second, chromedp.Navigate(url), waitVisible(sel))
}

// submit clicks sel, a button that submits a form, and waits for the
// page the submission leads to and then for then to be visible on it: a
// flag set on the page before the click tells the old page from the new.
func (b *browser) submit(sel, then string) {
	b.t.Helper()
	evalJS[bool](b, `window.__before = true`)
	b.do(20*time.Second, click(sel))
	err := testkit.Poll{Every: 50 * time.Millisecond}.Until(b.t, 20*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		// Between two pages the evaluation may fail: look again.
		gone, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__before === undefined && document.readyState !== 'loading'`))
		return err == nil && gone
	})
	if err != nil {
		b.fail(fmt.Errorf("clicking %s led to no new page", sel))
	}
	b.do(20*time.Second, waitVisible(then))
}

// evalJS evaluates a JavaScript expression in b's page, awaiting a
// promise, and decodes its value.
func evalJS[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.fail(fmt.Errorf("evaluate %s: %w", expr, err))
	}
	return v
}

// text returns the text of the first element sel matches ("" when none).
func (b *browser) text(sel string) string {
	b.t.Helper()
	return strings.TrimSpace(evalJS[string](b, `(document.querySelector(`+jsString(sel)+`) || {innerText: ""}).innerText`))
}

// exists reports whether sel matches an element.
func (b *browser) exists(sel string) bool {
	b.t.Helper()
	return evalJS[int](b, `document.querySelectorAll(`+jsString(sel)+`).length`) > 0
}

// waitText waits up to within for the text of sel to satisfy ok, without
// navigating: the page's live refresh has to bring it.
func (b *browser) waitText(sel string, within time.Duration, what string, ok func(string) bool) {
	b.t.Helper()
	var last string
	err := testkit.Poll{Every: 100 * time.Millisecond}.Until(b.t, within, func() bool {
		last = b.text(sel)
		return ok(last)
	})
	if err != nil {
		b.t.Fatalf("%s: the text of %s is %q after %s", what, sel, last, within)
	}
}

// cookie returns the browser's cookie named name for the page's URL.
func (b *browser) cookie(name string) *network.Cookie {
	b.t.Helper()
	res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		b.fail(err)
	}
	for _, c := range res.Cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// screenshot returns a PNG of the whole page.
func (b *browser) screenshot() []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.fail(err)
	}
	return png
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// sendKeys, click and waitVisible are chromedp's actions on the first
// element a CSS selector matches.
func sendKeys(sel, keys string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), keys)
}
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }
func waitVisible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}
