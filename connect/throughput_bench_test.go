package connect

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkFileSourceToTopic measures the source path end to end against a
// real broker: a file-source task reads lines, the runtime converts them
// (StringConverter) and produces them; each iteration appends 20,000 lines
// and waits until the topic holds them.
func BenchmarkFileSourceToTopic(b *testing.B) {
	const perIteration = 20000
	broker := startBroker(b)
	w := startWorker(b, testWorkerProps(broker.Addr))
	input := filepath.Join(b.TempDir(), "in.txt")
	if err := os.WriteFile(input, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "bench-lines"); err != nil {
		b.Fatal(err)
	}
	status, body := rest(b, "POST", "http://"+w.Addr()+"/connectors", map[string]any{"name": "bench", "config": map[string]string{
		"connector.class": "file-source", "file": input, "topic": "bench-lines", "value.converter": "string", "batch.size": "2000"}})
	if status != 201 {
		b.Fatalf("create: %d %s", status, body)
	}
	line := "a line of a log file, about the size people write, with a timestamp 2026-11-29T21:00:00Z"
	total := int64(0)
	round := func() {
		f, err := os.OpenFile(input, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			b.Fatal(err)
		}
		bw := bufio.NewWriter(f)
		for i := 0; i < perIteration; i++ {
			fmt.Fprintln(bw, line)
		}
		if err := bw.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		total += perIteration
		deadline := time.Now().Add(60 * time.Second)
		for {
			ends, err := adm.ListEndOffsets(context.Background(), "bench-lines")
			if err == nil {
				if o, ok := ends.Lookup("bench-lines", 0); ok && o.Offset >= total {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("topic did not reach %d records", total)
			}
			time.Sleep(time.Millisecond)
		}
	}
	round() // warm up: the task, its producer and the topic's metadata
	start := total
	b.SetBytes(int64(perIteration * (len(line) + 1)))
	b.ResetTimer()
	for b.Loop() {
		round()
	}
	b.ReportMetric(float64(total-start)/b.Elapsed().Seconds(), "records/s")
}
