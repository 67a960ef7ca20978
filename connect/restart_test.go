package connect

import (
	"path/filepath"
	"strconv"
	"testing"
)

// TestNewWorkerPicksUpClusterState: a worker shut down cleanly and a new
// worker started later (a fresh process's state: nothing but the three
// topics) finds the connectors and continues from the stored offsets.
func TestNewWorkerPicksUpClusterState(t *testing.T) {
	b := startBroker(t)
	first := startWorker(t, testWorkerProps(b.Addr))
	input := filepath.Join(t.TempDir(), "in.txt")
	appendLines(t, input, 1, 10)
	restJSON(t, "POST", "http://"+first.Addr()+"/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "file-source", "file": input, "topic": "restart-lines", "value.converter": "string"}}, 201, nil)
	readTopic(t, b.Addr, "restart-lines", 10)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	appendLines(t, input, 11, 15)

	second := startWorker(t, testWorkerProps(b.Addr))
	base := "http://" + second.Addr()
	s := waitState(t, base, "src", StateRunning, 1)
	if s.Tasks[0].WorkerID != second.ID() {
		t.Fatalf("status: %+v", s)
	}
	recs := readTopic(t, b.Addr, "restart-lines", 15)
	if len(recs) != 15 {
		t.Fatalf("%d records", len(recs))
	}
	for i, r := range recs {
		if want := "line-" + strconv.Itoa(i+1); string(r.Value) != want {
			t.Fatalf("record %d = %q, want %q: the new worker did not resume at the stored offset", i, r.Value, want)
		}
	}
}
