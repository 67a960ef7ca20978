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
var consoleDocsPages = map[string]bool{"cluster": true, "topics": true, "topic": true, "messages": true, "group-lag-fell": true,
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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
	page("group", "#/groups/e2e-billing", `//table[@id="group-lag"]//td[@class="lag"][.="2"]`, `//*[@id="lag-chart"]`, `//span[@id="group-status"]`)

	// A kgo consumer of the group reads and commits: the page, which
	// polls, shows the lag fall to 0 and the chart gains a point.
	member := newClient(t, s.addr, kgo.ConsumerGroup("e2e-billing"), kgo.ConsumeTopics("e2e-orders"), kgo.DisableAutoCommit())
	for read := 0; read < 2; {
		pollCtx, cancelPoll := context.WithTimeout(ctx, 10*time.Second)
		fetches := member.PollFetches(pollCtx)
		cancelPoll()
		if errs := fetches.Errors(); len(errs) > 0 {
			t.Fatalf("the group's consumer: %v", errs)
		}
		read += fetches.NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	member.LeaveGroup() // an inactive group's offsets may be reset
	waitVisible(t, tab, `//span[@id="group-total-lag"][.="0"]`)
	waitVisible(t, tab, `//*[@id="lag-chart"]//*[local-name()="circle"][2]`)
	screenshot(t, tab, artifacts, "group-lag-fell")

	// Offsets reset through the UI (dry run, then apply), seen by kadm.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		d, err := adm.DescribeGroups(ctx, "e2e-billing")
		if err == nil && d["e2e-billing"].State == "Empty" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("e2e-billing is %+v after its member left (%v)", d["e2e-billing"], err)
		}
	}
	waitVisible(t, tab, `//button[@id="reset-preview-submit"]`)
	setField(t, tab, "reset-to", "offset")
	setField(t, tab, "reset-offset", "1")
	setField(t, tab, "reset-topic", "e2e-orders")
	click(t, tab, "reset-preview-submit")
	waitVisible(t, tab, `//table[@id="reset-preview"]//tr[td[1]="e2e-orders"][td[2]="0"][td[3]="3"][td[4]="1"]`)
	if fetched, err := adm.FetchOffsets(ctx, "e2e-billing"); err != nil || fetched["e2e-orders"][0].At != 3 {
		t.Fatalf("kadm sees %+v after a dry run (%v)", fetched, err)
	}
	screenshot(t, tab, artifacts, "group-reset-preview")
	click(t, tab, "reset-apply")
	waitVisible(t, tab, `//p[@id="reset-result"][contains(.,"Committed")]`)
	if fetched, err := adm.FetchOffsets(ctx, "e2e-billing"); err != nil || fetched["e2e-orders"][0].At != 1 {
		t.Fatalf("kadm sees %+v after the reset (%v)", fetched, err)
	}
	waitVisible(t, tab, `//span[@id="group-total-lag"][.="2"]`)

	// A topic config edited through the UI: validated, then applied, seen
	// by kadm.
	page("topic-edit", "#/topics/e2e-orders", `//button[@id="config-validate"]`)
	setField(t, tab, "config-set", "retention.ms=sometimes")
	click(t, tab, "config-validate")
	waitVisible(t, tab, `//div[@id="config-error"]//li[contains(.,"retention.ms")]`)
	for _, e := range console.take() { // the browser may log the refused request's 400, nothing else
		if !strings.Contains(e, "400") {
			t.Fatalf("console error: %s", e)
		}
	}
	setField(t, tab, "config-set", "retention.ms=7200000")
	click(t, tab, "config-validate")
	waitVisible(t, tab, `//p[@id="config-result"][contains(.,"Valid")]`)
	click(t, tab, "config-apply")
	waitVisible(t, tab, `//p[@id="config-result"][contains(.,"Applied")]`)
	if rcs, err := adm.DescribeTopicConfigs(ctx, "e2e-orders"); err != nil || !hasConfigValue(rcs[0].Configs, "retention.ms", "7200000") {
		t.Fatalf("kadm sees configs %+v (%v)", rcs, err)
	}

	// The JSON decoding shows the value pretty-printed.
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/#/topics/e2e-orders/messages"), chromedp.WaitVisible(`//td[contains(.,"hello from kgo")]`)); err != nil {
		t.Fatal(err)
	}
	setField(t, tab, "browse-decode", "json")
	waitVisible(t, tab, `//td//pre[contains(., '"greeting": "hello from kgo"')]`)

	// Messages filtered by an expression.
	page("messages-filter", "#/topics/e2e-orders/messages", `//input[@id="browse-filter"]`)
	setField(t, tab, "browse-filter", `value == "third"`)
	click(t, tab, "browse-submit")
	waitVisible(t, tab, `//p[@id="browse-summary"][contains(.,"showing 1 ")][contains(.,"3 examined")]`)
	setField(t, tab, "browse-decode", "hex")
	waitVisible(t, tab, `//pre[@class="hex"][contains(.,"74 68 69 72 64")]`)
	screenshot(t, tab, artifacts, "messages-filter")

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

func hasConfigValue(cs []kadm.Config, name, value string) bool {
	for _, c := range cs {
		if c.Key == name && c.MaybeValue() == value {
			return true
		}
	}
	return false
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
