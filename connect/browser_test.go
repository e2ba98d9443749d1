package connect_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns a headless Chromium context, Debian's, started as the
// machine's probe starts it: without its background connections, which
// this machine's closed network refuses, and trusting the test's
// self-signed front. Without Chromium the test is skipped, except in CI
// (.ci/run installs it), where that is a failure.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium")
		}
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx
}

// A person opens their link in a real browser: Google's consent (given
// at once) sends them back, and they read the success page; another
// person, signed in to the wrong account, reads why nothing happened. The
// pages carry no secret, and the binding cookie is out of the page's
// reach (HttpOnly).
func TestPagesInChromium(t *testing.T) {
	ctx := chromium(t)
	r := newRig(t, 1)

	// page opens url and reads the page it ends on, once sel is visible.
	type seen struct{ heading, text, cookies, where string }
	open := func(url, sel string) (seen, error) {
		var p seen
		err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel)))
		if err != nil {
			return p, err
		}
		if p.heading, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"))); err != nil {
			return p, err
		}
		if p.text, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body"))); err != nil {
			return p, err
		}
		if p.cookies, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`)); err != nil {
			return p, err
		}
		p.where, err = chromedp.Run(ctx, chromedp.Location())
		return p, err
	}

	link := r.link("U1")
	got, err := open(link, "#connected h1")
	if err != nil {
		t.Fatalf("the success page: %v", err)
	}
	if got.heading != "Connected alice@example.com" || !strings.Contains(got.text, "Connected alice@example.com: you can close this tab.") {
		t.Errorf("the success page says %q / %q", got.heading, got.text)
	}
	noSecrets(t, got.text, strings.TrimPrefix(link[strings.Index(link, "?t="):], "?t="))
	if got.cookies != "" {
		t.Errorf("document.cookie = %q: the binding cookie is readable by the page", got.cookies)
	}
	if !strings.HasPrefix(got.where, r.front.URL+"/google/oauth/callback") {
		t.Errorf("the success page is at %s, want the callback", got.where)
	}
	<-r.connected

	r.google.SignIn("mallory@example.com")
	got, err = open(r.link("U2"), "#failed h1")
	if err != nil {
		t.Fatalf("the failure page: %v", err)
	}
	if got.heading != "That is another account" || !strings.Contains(got.text, "You signed in to Google as mallory@example.com, but your Slack profile's email is bob@example.com") {
		t.Errorf("the failure page says %q / %q", got.heading, got.text)
	}
	noSecrets(t, got.text)

	// The same link again: the page says it was used.
	got, err = open(link, "#failed h1")
	if err != nil || got.heading != "This link was used already" {
		t.Errorf("a used link in the browser: %q, %v", got.heading, err)
	}
}
