package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consoleDocsPages are the screenshots README.md shows (docs/console/),
// refreshed when the test runs with STRATA_CONSOLE_DOCS=1.
var consoleDocsPages = map[string]bool{"cluster": true, "topics": true, "topic": true, "messages": true, "group": true,
	"cluster-three-nodes": true, "cluster-node-down": true, "under-replicated": true}

// browserConsole collects the page's console errors and exceptions.
type browserConsole struct {
	mu     sync.Mutex
	errors []string
}

func (b *browserConsole) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.errors
	b.errors = nil
	return out
}

// TestConsoleBrowser drives the web console of a real `strata server` in
// headless Chromium (chromedp): every page loads with no console error or
// exception and shows what kgo produced (a topic, a record's value, a
// group's lag); a topic created and a record produced through the UI are
// seen by kgo afterwards. Screenshots of each page go to
// $STRATA_E2E_ARTIFACTS/console (a temporary directory otherwise).
func TestConsoleBrowser(t *testing.T) {
	s := startServer(t)
	base := "http://" + s.httpAddr

	// What an independent client puts in the cluster first.
	createTopic(t, s.addr, "e2e-orders", 2)
	producer := newClient(t, s.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, producer,
		&kgo.Record{Topic: "e2e-orders", Partition: 0, Key: []byte("k1"), Value: []byte(`{"greeting":"hello from kgo"}`),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}}},
		&kgo.Record{Topic: "e2e-orders", Partition: 0, Value: []byte("second")},
		&kgo.Record{Topic: "e2e-orders", Partition: 0, Value: []byte("third")},
	)
	adm := kadm.NewClient(producer)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := adm.CommitOffsets(ctx, "e2e-billing", kadm.OffsetsFromRecords(kgo.Record{Topic: "e2e-orders", Partition: 0, Offset: 0})); err != nil {
		t.Fatal(err)
	}

	br := openConsoleBrowser(t, ctx)
	tab, console, artifacts := br.tab, br.console, br.artifacts
	page := func(name, route string, wantVisible ...string) {
		t.Helper()
		br.page(base, name, route, wantVisible...)
	}

	page("cluster", "#/", `//*[contains(@class,"stat-label")][.="Under-replicated"]`, `//table[@id="cluster-nodes"]//td[contains(.,"controller")]`, `//table[@id="quorum-voters"]`)
	page("topics", "#/topics", `//a[.="e2e-orders"]`, `//label[contains(.,"Search")]`)
	page("topic", "#/topics/e2e-orders", `//td[.="cleanup.policy"]`, `//th[.="High watermark"]`)
	page("messages", "#/topics/e2e-orders/messages", `//td[contains(.,"hello from kgo")]`, `//b[.="trace"]`)
	page("groups", "#/groups", `//a[.="e2e-billing"]`)
	page("group", "#/groups/e2e-billing", `//table[@id="group-lag"]//td[@class="lag"][.="2"]`)

	// The JSON decoding shows the value pretty-printed.
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/#/topics/e2e-orders/messages"), chromedp.WaitVisible(`//td[contains(.,"hello from kgo")]`)); err != nil {
		t.Fatal(err)
	}
	setField(t, tab, "browse-decode", "json")
	waitVisible(t, tab, `//td//pre[contains(., '"greeting": "hello from kgo"')]`)

	// A topic created through the UI, seen by kgo.
	page("topics-create", "#/topics", `//button[@id="create-topic-submit"]`)
	setField(t, tab, "new-topic-name", "made-in-browser")
	setField(t, tab, "new-topic-partitions", "2")
	click(t, tab, "create-topic-submit")
	waitVisible(t, tab, `//p[@role="status"][contains(.,"Created")]`)
	details, err := adm.ListTopics(ctx, "made-in-browser")
	if err != nil || details["made-in-browser"].Err != nil || len(details["made-in-browser"].Partitions) != 2 {
		t.Fatalf("kadm sees the UI's topic as %+v (%v)", details["made-in-browser"], err)
	}

	// A record produced through the UI, consumed by kgo.
	page("messages-empty", "#/topics/made-in-browser/messages", `//button[@id="produce-submit"]`) // rendered once the partitions are known
	setField(t, tab, "produce-partition", "1")
	setField(t, tab, "produce-key", "ui-key")
	setField(t, tab, "produce-value", "typed in the browser")
	click(t, tab, "produce-submit")
	waitVisible(t, tab, `//p[@id="produce-result"][contains(.,"partition 1 at offset 0")]`)
	screenshot(t, tab, artifacts, "produced")
	got := consumeN(t, s.addr, "made-in-browser", 1)
	if got[0].Partition != 1 || string(got[0].Key) != "ui-key" || string(got[0].Value) != "typed in the browser" {
		t.Fatalf("kgo consumed %+v", got[0])
	}

	// On a phone-sized screen the pages fit the width (tables scroll
	// inside their boxes).
	if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	page("topics-phone", "#/topics", `//a[.="e2e-orders"]`)
	fits, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth + 1`))
	if err != nil || !fits {
		t.Fatalf("the topics page is wider than a phone screen (%v)", err)
	}
	if errs := console.take(); len(errs) > 0 {
		t.Fatalf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	t.Logf("screenshots in %s", artifacts)
}

// setField sets the form control with id to value and fires the event
// Preact listens to (change for a select, input otherwise).
func setField(t *testing.T, tab context.Context, id, value string) {
	t.Helper()
	js := fmt.Sprintf(`(() => {
		const el = document.getElementById(%q);
		if (!el) return false;
		el.value = %q;
		el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));
		return true;
	})()`, id, value)
	ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](js))
	if err != nil || !ok {
		t.Fatalf("setting #%s: found %v, %v", id, ok, err)
	}
}

func click(t *testing.T, tab context.Context, id string) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Click(chromedp.ID(id))); err != nil {
		t.Fatalf("clicking #%s: %v", id, err)
	}
}

func waitVisible(t *testing.T, tab context.Context, xpath string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(xpath)); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Text("body"))
		t.Fatalf("waiting for %s: %v; page text: %.600s", xpath, err, text)
	}
}

// screenshot saves the whole page as dir/name.png and, with
// STRATA_CONSOLE_DOCS=1, the README's pages as docs/console/name.png.
func screenshot(t *testing.T, tab context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("STRATA_CONSOLE_DOCS") != "" && consoleDocsPages[name] {
		docs := filepath.Join(moduleRoot, "docs", "console")
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
