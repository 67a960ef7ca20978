package broker

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scrape fetches /metrics and returns sample values by their full series
// text, e.g. `strata_partition_log_end_offset{partition="0",topic="m"}`.
func (tb *testBroker) scrape() map[string]float64 {
	tb.t.Helper()
	resp, err := http.Get("http://" + tb.srv.HTTPAddr() + "/metrics")
	if err != nil {
		tb.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.t.Fatalf("/metrics: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.t.Fatalf("bad sample line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func TestMetricsAndHealth(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("metered", 2, nil)
	c := tb.dialRaw()

	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version = 4
	initReq.ProducerID, initReq.ProducerEpoch = -1, -1
	pid := roundTrip[*kmsg.InitProducerIDResponse](c, initReq).ProducerID
	var bytesIn int
	for i := 0; i < 5; i++ {
		b := buildBatch(t, batchSpec{records: fixtureRecords(10, uint64(i)), producerID: pid, epoch: 0, baseSeq: int32(i * 10)})
		bytesIn += len(b)
		if got := c.produceRaw("metered", 1, b); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
		if i == 4 { // a retry appends nothing and counts nothing
			if got := c.produceRaw("metered", 1, b); got.ErrorCode != 0 {
				t.Fatalf("retry: %v", kerr.ErrorForCode(got.ErrorCode))
			}
		}
	}
	if got := c.produceRaw("missing", 0, buildBatch(t, plainBatch(fixtureRecords(1, 9)...))); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to missing topic: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	fetch := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "metered", [16]byte{}, map[int32]int64{1: 0}, 1<<20))
	fetched := len(fetch.Topics[0].Partitions[0].RecordBatches)

	m := tb.scrape()
	expect := func(series string, want float64, atLeast bool) {
		t.Helper()
		got, ok := m[series]
		switch {
		case !ok:
			t.Errorf("no series %s", series)
		case atLeast && got < want:
			t.Errorf("%s = %v, want at least %v", series, got, want)
		case !atLeast && got != want:
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	expect(`strata_topic_bytes_in_total{topic="metered"}`, float64(bytesIn), false)
	expect(`strata_topic_records_in_total{topic="metered"}`, 50, false)
	expect(`strata_topic_bytes_out_total{topic="metered"}`, float64(fetched), false)
	expect(`strata_request_duration_seconds_count{api="Produce"}`, 7, false)
	expect(`strata_request_duration_seconds_count{api="Fetch"}`, 1, false)
	expect(`strata_partition_log_end_offset{partition="1",topic="metered"}`, 50, false)
	expect(`strata_partition_log_end_offset{partition="0",topic="metered"}`, 0, false)
	expect(`strata_partition_high_watermark{partition="1",topic="metered"}`, 50, false)
	expect(`strata_partition_log_start_offset{partition="1",topic="metered"}`, 0, false)
	expect(`strata_errors_total{error="UNKNOWN_TOPIC_OR_PARTITION"}`, 1, false)
	expect(`strata_open_connections`, 1, true)

	resp, err := http.Get("http://" + tb.srv.HTTPAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/healthz: %s %q", resp.Status, body)
	}
}
