package broker

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// consolePageBudget is what issue 19 asks of every console page's API
// answer with 10,000 partitions on one node.
const consolePageBudget = 200 * time.Millisecond

// consolePageBudgetHere is the budget for this test binary: doubled under
// the race detector (make test runs broker/ with -race), where the cluster
// page took a median 237 ms on a loaded 2-core machine: its DescribeCluster
// waits on the console's connection behind the 10,000-partition Metadata
// refresh. Without it, BenchmarkConsoleAPI10kPartitions/cluster averages
// 0.5 ms, refreshes included.
func consolePageBudgetHere() time.Duration {
	if raceDetector {
		return 2 * consolePageBudget
	}
	return consolePageBudget
}

// consoleShape is a cluster of partitions for timing the console's pages:
// one topic "wide" of 100 partitions with records and a consumer group
// on it, and topics of 100 partitions each up to the total.
type consoleShape struct {
	partitions int
}

// consolePages are the API requests behind each console page.
var consolePages = []struct{ name, path string }{
	{"cluster", "/api/v1/cluster"},
	{"topics-page", "/api/v1/topics?page=3&pageSize=25"},
	{"topics-search", "/api/v1/topics?search=wide"},
	{"problem-partitions", "/api/v1/cluster/partitions?state=under-replicated"},
	{"topic-100-partitions", "/api/v1/topics/wide"},
	{"groups", "/api/v1/groups"},
	{"group", "/api/v1/groups/wide-readers"},
	{"records", "/api/v1/topics/wide/records?partition=7&limit=50"},
}

// setup creates the shape on a fresh in-process node and returns the
// console's base URL.
func (s consoleShape) setup(tb testing.TB) string {
	tb.Helper()
	node := startTestBroker(tb, func(c *Config) { c.NumPartitions = 1 })
	cl := node.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	ctx := testContext(tb)
	start := time.Now()
	const perTopic = 100
	if _, err := adm.CreateTopic(ctx, perTopic, 1, nil, "wide"); err != nil {
		tb.Fatal(err)
	}
	var names []string
	for i := perTopic; i < s.partitions; i += perTopic {
		names = append(names, fmt.Sprintf("bench-%05d", i/perTopic))
	}
	for batch := range slices.Chunk(names, 10) {
		resp, err := adm.CreateTopics(ctx, perTopic, 1, nil, batch...)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	var records []*kgo.Record
	for p := range int32(perTopic) {
		for i := range 20 {
			records = append(records, &kgo.Record{Topic: "wide", Partition: p, Value: []byte("record " + strconv.Itoa(i))})
		}
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	if _, err := adm.CommitOffsets(ctx, "wide-readers", kadm.OffsetsFromRecords(*records[0], *records[len(records)-1])); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("%d partitions in %d topics created in %v", s.partitions, len(names)+1, time.Since(start).Round(time.Millisecond))
	return "http://" + node.srv.HTTPAddr()
}

// getPage asks path and fails unless it answers 200.
func getPage(tb testing.TB, client *http.Client, base, path string) {
	resp, err := client.Get(base + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("%s: %d (%d bytes)", path, resp.StatusCode, n)
	}
}

// BenchmarkConsoleAPI10kPartitions times each console page's API answer
// with 10,000 partitions on one node (one setup for all; creating them
// takes a while). The cluster page and the topic lists share a Metadata
// snapshot of 2 s (broker/console/snapshot.go), so a run mixes answers
// from the snapshot with the refresh every 2 s; -benchtime 3s or more
// covers both. STRATA_CONSOLE_BENCH_PARTITIONS changes the total.
func BenchmarkConsoleAPI10kPartitions(b *testing.B) {
	shape := consoleShape{partitions: 10_000}
	if n, err := strconv.Atoi(os.Getenv("STRATA_CONSOLE_BENCH_PARTITIONS")); err == nil && n >= 100 {
		shape.partitions = n
	}
	base := shape.setup(b)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, page := range consolePages {
		b.Run(page.name, func(b *testing.B) {
			var slowest time.Duration
			for b.Loop() {
				start := time.Now()
				getPage(b, client, base, page.path)
				slowest = max(slowest, time.Since(start))
			}
			b.ReportMetric(float64(slowest.Microseconds())/1000, "slowest-ms")
		})
	}
}

// TestConsolePageTimes: each console page's API answers within
// consolePageBudget with 10,000 partitions on one node (about 5 s to
// create; 2,000 with -short). Each page is asked 15 times over more than
// one snapshot interval, and the median is held to the budget: one slow
// answer on a loaded machine (a snapshot refresh, a GC) is not a failure,
// a slow page is. The slowest is logged.
func TestConsolePageTimes(t *testing.T) {
	shape := consoleShape{partitions: 10_000}
	if testing.Short() {
		shape.partitions = 2_000
	}
	base := shape.setup(t)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, page := range consolePages {
		getPage(t, client, base, page.path) // connections and first snapshot
	}
	const rounds = 15
	took := map[string][]time.Duration{}
	for range rounds {
		for _, page := range consolePages {
			start := time.Now()
			getPage(t, client, base, page.path)
			took[page.name] = append(took[page.name], time.Since(start))
		}
		time.Sleep(200 * time.Millisecond) // 15 rounds span the 2 s snapshot more than once
	}
	for _, page := range consolePages {
		d := took[page.name]
		slices.Sort(d)
		median, worst := d[len(d)/2], d[len(d)-1]
		t.Logf("%-22s median %v, slowest %v", page.name, median.Round(100*time.Microsecond), worst.Round(100*time.Microsecond))
		if budget := consolePageBudgetHere(); median > budget {
			t.Errorf("%s (%s): median %v over %v", page.name, page.path, median, budget)
		}
	}
}
