package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKcatCommittedOffsetBelowLogStart is librdkafka's view of a consumer
// whose committed offset fell below the log start (retention or
// DeleteRecords moved it): the broker answers OFFSET_OUT_OF_RANGE, and the
// consumer must apply auto.offset.reset. That needs the error partition's
// record set to be empty rather than null: librdkafka refuses a whole Fetch
// response holding a null one ("invalid MessageSetSize -1"), never sees the
// error and re-fetches in a tight loop.
func TestKcatCommittedOffsetBelowLogStart(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	srv := startServer(t)
	const topic, group = "below-log-start", "stuck-group"
	const records, committed, logStart = 100, 10, 60
	createTopic(t, srv.addr, topic, 1)

	cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(topic))
	var batch []*kgo.Record
	for i := range records {
		batch = append(batch, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "v%03d", i)})
	}
	produceSync(t, cl, batch...)

	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	adm := kadm.NewClient(cl)
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: committed, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, group, offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit offset %d for %s: %v %v", committed, group, err, resp.Error())
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: topic, Partition: 0, At: logStart})
	if resp, err := adm.DeleteRecords(ctx, del); err != nil || resp.Error() != nil {
		t.Fatalf("delete records below %d: %v %v", logStart, err, resp.Error())
	}

	// -o stored starts at the group's committed offset (10), now below the
	// log start (60).
	consume := func(reset string) (cmdResult, time.Duration) {
		start := time.Now()
		res := mustRun(t, 30*time.Second, "", kcat, "-C", "-b", srv.addr, "-t", topic, "-p", "0",
			"-X", "group.id="+group, "-X", "auto.offset.reset="+reset, "-X", "enable.auto.commit=false",
			"-o", "stored", "-e", "-f", "%o\n")
		return res, time.Since(start)
	}

	res, took := consume("earliest")
	var want strings.Builder
	for o := logStart; o < records; o++ {
		fmt.Fprintf(&want, "%d\n", o)
	}
	if res.stdout != want.String() {
		t.Fatalf("auto.offset.reset=earliest: kcat read %s, want offsets %d..%d (stderr: %s)",
			firstLineDiff(res.stdout, want.String()), logStart, records-1, clip(res.stderr, 2000))
	}
	if strings.Contains(res.stderr, "MessageSetSize") || strings.Contains(res.stderr, "parse failure") {
		t.Fatalf("librdkafka could not parse a Fetch response: %s", clip(res.stderr, 2000))
	}
	t.Logf("auto.offset.reset=earliest: reset and read to the end in %v (kcat start included)", took.Round(time.Millisecond))
	checkQuick(t, "earliest", took, res)

	// latest: nothing to read, kcat reaches the end at once.
	res, took = consume("latest")
	if strings.TrimSpace(res.stdout) != "" {
		t.Fatalf("auto.offset.reset=latest: kcat read %q, want nothing", clip(res.stdout, 500))
	}
	t.Logf("auto.offset.reset=latest: reset in %v (kcat start included)", took.Round(time.Millisecond))
	checkQuick(t, "latest", took, res)
}

// checkQuick fails when kcat took far longer than a reset needs: before the
// fix it never reset and ran into mustRun's timeout. The bound leaves room
// for kcat's own start and a loaded machine (about 1 s here).
func checkQuick(t *testing.T, reset string, took time.Duration, res cmdResult) {
	t.Helper()
	if took > 5*time.Second {
		t.Fatalf("auto.offset.reset=%s took %v; a reset takes about a second (stderr: %s)", reset, took, clip(res.stderr, 2000))
	}
}
