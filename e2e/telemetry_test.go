package e2e

// Client telemetry (KIP-714) with a client that pushes on its own:
// librdkafka through confluent-kafka-go (enable.metrics.push), against a
// subscription made with `strata client-metrics`.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// clientSeriesLine is one strata_client_* sample: name, labels, value.
var clientSeriesLine = regexp.MustCompile(`^(strata_client_[a-zA-Z0-9_:]+)\{([^}]*)\} (\S+)$`)

// clientSeries lists the strata_client_* samples of /metrics by the
// client_id label, each as the line "name{labels} value".
func clientSeries(metrics string) map[string][]string {
	out := map[string][]string{}
	clientID := regexp.MustCompile(`(?:^|,)client_id="([^"]*)"`)
	for _, line := range strings.Split(metrics, "\n") {
		m := clientSeriesLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := ""
		if c := clientID.FindStringSubmatch(m[2]); c != nil {
			id = c[1]
		}
		out[id] = append(out[id], line)
	}
	return out
}

// TestClientTelemetryLibrdkafka: a subscription for client ids matching
// telemetry-yes-.* with a 1 s interval; a librdkafka producer that does not
// match starts first, then one that does. Both produce; the matching one's
// pushed metrics appear on /metrics as strata_client_* series labelled with
// its client id and instance id, and the other, running longer, pushes
// nothing.
func TestClientTelemetryLibrdkafka(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const (
		topic   = "telemetry-librdkafka"
		matched = "telemetry-yes-1"
		other   = "telemetry-no-1"
	)
	createTopic(t, srv.addr, topic, 1)
	strata := func(args ...string) cmdResult {
		t.Helper()
		return mustRun(t, time.Minute, "", strataBin, append(args, "-b", srv.addr)...)
	}
	strata("client-metrics", "create", "--name", "e2e-producers", "--metrics", "org.apache.kafka.producer.",
		"--interval", "1000", "--match", "client_id=telemetry-yes-.*")
	desc := strata("client-metrics", "describe", "--name", "e2e-producers")
	for _, want := range []string{"interval.ms=1000", "match=client_id=telemetry-yes-.*", "metrics=org.apache.kafka.producer."} {
		if !strings.Contains(desc.stdout, want) {
			t.Fatalf("client-metrics describe lacks %q:\n%s", want, desc.stdout)
		}
	}

	produce := func(clientID string) {
		t.Helper()
		p, err := kafka.NewProducer(&kafka.ConfigMap{
			"bootstrap.servers":   srv.addr,
			"client.id":           clientID,
			"enable.metrics.push": true,
			"log_level":           3,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		reports := make(chan kafka.Event, 5)
		name := topic
		for i := range 5 {
			m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &name, Partition: 0}, Value: fmt.Appendf(nil, "%s-%d", clientID, i)}
			if err := p.Produce(m, reports); err != nil {
				t.Fatalf("%s: produce %d: %v", clientID, i, err)
			}
		}
		deadline := time.After(clientTimeout)
		for i := range 5 {
			select {
			case ev := <-reports:
				if err := ev.(*kafka.Message).TopicPartition.Error; err != nil {
					t.Fatalf("%s: record %d: %v", clientID, i, err)
				}
			case <-deadline:
				t.Fatalf("%s: %d of 5 delivery reports after %v", clientID, i, clientTimeout)
			}
		}
	}
	produce(other)
	produce(matched)

	var (
		metrics string
		series  map[string][]string
	)
	waitFor(t, 30*time.Second, "strata_client_* series of "+matched+" on /metrics", func() (bool, string) {
		metrics = srv.metrics(t)
		series = clientSeries(metrics)
		return len(series[matched]) > 0, fmt.Sprintf("series by client id: %v", series)
	})
	instance := regexp.MustCompile(`client_instance_id="([^"]+)"`)
	ids := map[string]bool{}
	latency := false
	for _, s := range series[matched] {
		m := instance.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("series without a client_instance_id: %s", s)
			continue
		}
		ids[m[1]] = true
		latency = latency || strings.HasPrefix(s, "strata_client_org_apache_kafka_producer_node_request_latency_max{") && strings.Contains(s, `node_id="1"`)
	}
	if len(ids) != 1 {
		t.Errorf("%s's series carry %d client instance ids, want 1: %v", matched, len(ids), series[matched])
	}
	// A data point's attributes become labels; a monotonic sum is a counter.
	if !latency {
		t.Errorf("no node_request_latency_max series labelled node_id=\"1\" for %s: %v", matched, series[matched])
	}
	if !strings.Contains(metrics, "# TYPE strata_client_org_apache_kafka_producer_connection_creation_total counter") {
		t.Errorf("connection_creation_total is not exported as a counter:\n%s", clip(metrics, 4000))
	}
	for id, s := range series {
		if id != matched {
			t.Errorf("series of client id %q, which no subscription matches: %v", id, s)
		}
	}
}
