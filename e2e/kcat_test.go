package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

const kcatInstall = "apt-get install -y kcat"

// kcatCodecs are the -z values kcat's producer is run with; "none" sends
// uncompressed batches.
var kcatCodecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// kcatLines returns messages [from, to) as kcat -K: producer input and as
// the "%o %k %s" lines its consumer prints for them.
func kcatLines(from, to int) (input, output string) {
	var in, out strings.Builder
	for i := from; i < to; i++ {
		key := fmt.Sprintf("key-%05d", i)
		value := fmt.Sprintf("value %05d %s", i, strings.Repeat("abcdefghij", i%17))
		fmt.Fprintf(&in, "%s:%s\n", key, value)
		fmt.Fprintf(&out, "%d %s %s\n", i, key, value)
	}
	return in.String(), out.String()
}

// kcatProduce sends messages [from, to) to topic with the codec, in batches
// of at most 137 messages so that one run writes several batches.
func kcatProduce(t *testing.T, kcat, addr, topic, codec string, from, to int) {
	t.Helper()
	input, _ := kcatLines(from, to)
	args := []string{"-P", "-b", addr, "-t", topic, "-K", ":", "-X", "batch.num.messages=137", "-X", "linger.ms=5"}
	if codec != "none" {
		args = append(args, "-z", codec)
	}
	mustRun(t, time.Minute, input, kcat, args...)
}

// kcatConsumeAll reads topic from the beginning to its end and checks that
// it holds exactly messages [0, to), in order, at offsets 0..to-1.
func kcatConsumeAll(t *testing.T, kcat, addr, topic string, to int) {
	t.Helper()
	res := mustRun(t, 30*time.Second, "", kcat, "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o %k %s\n")
	_, want := kcatLines(0, to)
	if res.stdout != want {
		t.Fatalf("kcat -C %s: read back differs from what was produced: %s\n(stderr: %s)",
			topic, firstLineDiff(res.stdout, want), clip(res.stderr, 2000))
	}
}

// firstLineDiff describes where got and want first differ, line by line.
func firstLineDiff(got, want string) string {
	gotLines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	wantLines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	if got == "" {
		gotLines = nil
	}
	for i := 0; i < len(gotLines) && i < len(wantLines); i++ {
		if gotLines[i] != wantLines[i] {
			return fmt.Sprintf("line %d: got %q, want %q (got %d lines, want %d)", i+1, clip(gotLines[i], 200), clip(wantLines[i], 200), len(gotLines), len(wantLines))
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(gotLines), len(wantLines))
}

// TestKcat drives the broker with librdkafka through kcat: metadata,
// produce and consume with every codec, a crash (SIGKILL) and restart on the
// same data directory, and appends after the restart.
func TestKcat(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	srv := startServer(t)

	t.Run("metadata", func(t *testing.T) {
		res := mustRun(t, 30*time.Second, "", kcat, "-b", srv.addr, "-L", "-J")
		var md struct {
			Brokers []struct {
				ID   int32  `json:"id"`
				Name string `json:"name"`
			} `json:"brokers"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &md); err != nil {
			t.Fatalf("kcat -L -J: %v\n%s", err, res)
		}
		if len(md.Brokers) != 1 || md.Brokers[0].Name != srv.addr {
			t.Fatalf("kcat -L lists brokers %+v, want exactly one at %s", md.Brokers, srv.addr)
		}
	})

	const first = 1000
	topics := map[string]string{} // codec -> topic
	for _, codec := range kcatCodecs {
		topic := "kcat-" + codec
		topics[codec] = topic
		createTopic(t, srv.addr, topic, 1)
	}
	for _, codec := range kcatCodecs {
		ok := t.Run("produce-consume-"+codec, func(t *testing.T) {
			kcatProduce(t, kcat, srv.addr, topics[codec], codec, 0, first)
			kcatConsumeAll(t, kcat, srv.addr, topics[codec], first)
		})
		if !ok && codec == "none" {
			t.Fatal("uncompressed produce/consume failed; not trying the codecs")
		}
	}
	if t.Failed() {
		return
	}

	srv.kill()
	srv.restart()

	for _, codec := range kcatCodecs {
		t.Run("after-crash-"+codec, func(t *testing.T) {
			kcatConsumeAll(t, kcat, srv.addr, topics[codec], first)
			kcatProduce(t, kcat, srv.addr, topics[codec], codec, first, 2*first)
			kcatConsumeAll(t, kcat, srv.addr, topics[codec], 2*first)
		})
	}
}
