package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kafkajsSummary is the JSON line e2e/kafkajs/roundtrip.js prints.
type kafkajsSummary struct {
	OK                 bool                      `json:"ok"`
	Error              string                    `json:"error"`
	Mode               string                    `json:"mode"`
	Produced           int                       `json:"produced"`
	ProduceErrors      []json.RawMessage         `json:"produceErrors"`
	MetadataPartitions int                       `json:"metadataPartitions"`
	Offsets            map[string]kafkajsOffsets `json:"offsets"`
	OffsetsTotal       int                       `json:"offsetsTotal"`
	Fetch              *kafkajsRead              `json:"fetch"`
	Group              *kafkajsRead              `json:"group"`
}

type kafkajsOffsets struct {
	Low  string `json:"low"`
	High string `json:"high"`
}

type kafkajsRead struct {
	Count        int            `json:"count"`
	First        string         `json:"first"`
	Last         string         `json:"last"`
	PerPartition map[string]int `json:"perPartition"`
	InOrder      bool           `json:"inOrder"`
	Problems     []string       `json:"problems"`
}

// runKafkajs runs roundtrip.js and returns its summary; the test fails if
// the script cannot run or prints no summary.
func runKafkajs(t *testing.T, node, addr, topic string, count, partitions int, mode string, group bool) kafkajsSummary {
	t.Helper()
	script := filepath.Join(moduleRoot, "e2e", "kafkajs", "roundtrip.js")
	args := []string{script, addr, topic, strconv.Itoa(count), mode, "--partitions", strconv.Itoa(partitions)}
	if group {
		args = append(args, "--group")
	}
	res := runCmd(t, 2*time.Minute, "", node, args...)
	if res.err != nil {
		t.Fatalf("node roundtrip.js %s: %s", mode, res)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	var sum kafkajsSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("node roundtrip.js %s: no JSON summary (%v): %s", mode, err, res)
	}
	if !sum.OK || res.exitCode != 0 {
		t.Fatalf("node roundtrip.js %s failed: %s", mode, res)
	}
	return sum
}

// checkKafkajsRead checks one read-back section of the summary.
func checkKafkajsRead(t *testing.T, how string, r *kafkajsRead, count, partitions int) {
	t.Helper()
	if r == nil {
		t.Fatalf("kafkajs %s: summary has no read-back section", how)
	}
	if r.Count != count || !r.InOrder || r.First != "value-0" || r.Last != fmt.Sprintf("value-%d", count-1) {
		t.Fatalf("kafkajs %s: read %d of %d (first %q, last %q, in order %v): %v", how, r.Count, count, r.First, r.Last, r.InOrder, r.Problems)
	}
	if len(r.PerPartition) != partitions {
		t.Fatalf("kafkajs %s: read from partitions %v, want %d partitions", how, r.PerPartition, partitions)
	}
}

// kcatCheckKafkajsTopic reads what roundtrip.js produced with kcat (a second,
// independent decoder): every message once, in order within its partition,
// with its key, value and seq header.
func kcatCheckKafkajsTopic(t *testing.T, kcat, addr, topic string, count, partitions int) {
	t.Helper()
	res := mustRun(t, time.Minute, "", kcat, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%p %o %k %s %h\n")
	lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	if len(lines) != count {
		t.Fatalf("kcat read %d messages of kafkajs topic %s, want %d\n%s", len(lines), topic, count, clip(res.stdout, 2000))
	}
	nextOffset := make(map[int]int64)
	lastSeq := make(map[int]int)
	for _, line := range lines {
		var partition, seq, valueSeq int
		var offset int64
		var key, value, header string
		if _, err := fmt.Sscanf(line, "%d %d %s %s %s", &partition, &offset, &key, &value, &header); err != nil {
			t.Fatalf("kcat line %q: %v", line, err)
		}
		if _, err := fmt.Sscanf(header, "seq=%d", &seq); err != nil {
			t.Fatalf("kcat line %q: header: %v", line, err)
		}
		fmt.Sscanf(value, "value-%d", &valueSeq)
		if key != fmt.Sprintf("key-%d", seq) || value != fmt.Sprintf("value-%d", seq) || valueSeq != seq {
			t.Fatalf("kcat line %q: key/value do not match header seq=%d", line, seq)
		}
		if seq%partitions != partition {
			t.Fatalf("kcat line %q: seq %d on partition %d, want %d", line, seq, partition, seq%partitions)
		}
		if offset != nextOffset[partition] {
			t.Fatalf("kcat line %q: offset %d, want %d", line, offset, nextOffset[partition])
		}
		if last, ok := lastSeq[partition]; ok && seq <= last {
			t.Fatalf("kcat line %q: seq %d after %d on partition %d", line, seq, last, partition)
		}
		nextOffset[partition] = offset + 1
		lastSeq[partition] = seq
	}
}

// TestKafkajs produces with kafkajs (several batches, one gzip, keys and
// headers), reads back with kafkajs's Fetch and, when the broker has
// consumer groups, with a kafkajs consumer group; cross-checks with kcat;
// then crashes the broker (SIGKILL), restarts it and reads everything again.
func TestKafkajs(t *testing.T) {
	t.Parallel()
	node := requireTool(t, "node", "apt-get install -y nodejs npm")
	kcat := requireTool(t, "kcat", kcatInstall)
	if _, err := os.Stat(filepath.Join(moduleRoot, "e2e", "kafkajs", "node_modules", "kafkajs", "package.json")); err != nil {
		missingTool(t, "kafkajs", "cd e2e/kafkajs && npm ci")
	}
	srv := startServer(t)

	const (
		topic      = "kafkajs-roundtrip"
		count      = 600
		partitions = 3
	)
	groups := supportsConsumerGroups(supportedAPIs(t, srv.addr))
	if !groups {
		t.Logf("broker lists no consumer group APIs in ApiVersions: reading back with kafkajs's Fetch only")
	}

	sum := runKafkajs(t, node, srv.addr, topic, count, partitions, "roundtrip", groups)
	if sum.Produced != count || sum.OffsetsTotal != count || sum.MetadataPartitions != partitions {
		t.Fatalf("kafkajs roundtrip: produced %d, offsets total %d, metadata partitions %d; want %d, %d, %d",
			sum.Produced, sum.OffsetsTotal, sum.MetadataPartitions, count, count, partitions)
	}
	checkKafkajsRead(t, "fetch", sum.Fetch, count, partitions)
	if groups {
		checkKafkajsRead(t, "consumer group", sum.Group, count, partitions)
	}
	kcatCheckKafkajsTopic(t, kcat, srv.addr, topic, count, partitions)

	srv.kill()
	srv.restart()

	sum = runKafkajs(t, node, srv.addr, topic, count, partitions, "consume-only", groups)
	if sum.OffsetsTotal != count {
		t.Fatalf("kafkajs after restart: offsets total %d, want %d (%v)", sum.OffsetsTotal, count, sum.Offsets)
	}
	checkKafkajsRead(t, "fetch after restart", sum.Fetch, count, partitions)
	if groups {
		checkKafkajsRead(t, "consumer group after restart", sum.Group, count, partitions)
	}
	kcatCheckKafkajsTopic(t, kcat, srv.addr, topic, count, partitions)
}
