package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// consoleBrowser is a headless Chromium tab (chromedp, Debian's
// `chromium`; the test is skipped when it is missing, failed under CI)
// for the web console's browser tests, with the page's console errors
// and exceptions collected and screenshots written to artifacts
// ($STRATA_E2E_ARTIFACTS/console, a temporary directory otherwise).
type consoleBrowser struct {
	t         *testing.T
	tab       context.Context
	console   *browserConsole
	artifacts string
}

// openConsoleBrowser starts Chromium for the test's lifetime (or ctx's).
func openConsoleBrowser(t *testing.T, ctx context.Context) *consoleBrowser {
	t.Helper()
	chromium := requireTool(t, "chromium", "apt-get install chromium")
	artifacts := t.TempDir()
	if dir := os.Getenv("STRATA_E2E_ARTIFACTS"); dir != "" {
		artifacts = filepath.Join(dir, "console")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // tests often run as root, where Chromium's sandbox refuses to start
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	console := &browserConsole{}
	messages := chromedp.Console(tab)
	go func() { // ends when the tab closes
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				console.mu.Lock()
				console.errors = append(console.errors, fmt.Sprintf("%s (%s:%d)", m.String(), m.URL, m.Line))
				console.mu.Unlock()
			}
		}
	}()
	return &consoleBrowser{t: t, tab: tab, console: console, artifacts: artifacts}
}

// page opens a console route of base, waits for what must be on it,
// checks the console stayed clean, and saves a screenshot as name.
func (b *consoleBrowser) page(base, name, route string, wantVisible ...string) {
	t := b.t
	t.Helper()
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(base + "/" + route)}
	for _, w := range wantVisible {
		steps = append(steps, chromedp.WaitVisible(w))
	}
	waitCtx, cancel := context.WithTimeout(b.tab, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(waitCtx, steps...); err != nil {
		text, _ := chromedp.Run(b.tab, chromedp.Text("body"))
		t.Fatalf("page %s (%s): %v; page text: %.600s", name, route, err, text)
	}
	screenshot(t, b.tab, b.artifacts, name)
	b.clean(name)
}

// clean fails the test if the page logged errors since the last look.
func (b *consoleBrowser) clean(what string) {
	b.t.Helper()
	if errs := b.console.take(); len(errs) > 0 {
		b.t.Fatalf("%s: console errors:\n%s", what, strings.Join(errs, "\n"))
	}
}
