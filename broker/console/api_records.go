package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	defaultRecordLimit = 50
	maxRecordLimit     = 500
	// browseTimeout bounds how long a browse waits for records: a
	// partition whose last offsets are transaction markers (never
	// returned) ends the browse by time.
	browseTimeout = 3 * time.Second
	// maxBrowseBytes bounds what one browse fetches.
	maxBrowseBytes = 8 << 20
	// A filtered browse reads past records that do not match: at most
	// maxScanRecords of them, for at most filterTimeout.
	maxScanRecords = 100_000
	filterTimeout  = 5 * time.Second
)

// payloadJSON is a key, value or header value: text when it is valid
// UTF-8, base64 otherwise; json tells the UI it parses as JSON.
type payloadJSON struct {
	Encoding string `json:"encoding"` // "text" or "base64"
	Data     string `json:"data"`
	JSON     bool   `json:"json"`
	Size     int    `json:"size"` // bytes
}

func payload(b []byte) *payloadJSON {
	if b == nil {
		return nil
	}
	if utf8.Valid(b) {
		return &payloadJSON{Encoding: "text", Data: string(b), JSON: len(b) > 0 && json.Valid(b), Size: len(b)}
	}
	return &payloadJSON{Encoding: "base64", Data: base64.StdEncoding.EncodeToString(b), Size: len(b)}
}

type headerJSON struct {
	Key   string       `json:"key"`
	Value *payloadJSON `json:"value"`
}

type recordJSON struct {
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"` // ms since the epoch
	Key       *payloadJSON `json:"key"`       // null: no key
	Value     *payloadJSON `json:"value"`     // null: a tombstone
	Headers   []headerJSON `json:"headers"`
}

type recordPageJSON struct {
	Topic          string       `json:"topic"`
	Partition      int32        `json:"partition"`
	LogStartOffset int64        `json:"logStartOffset"`
	HighWatermark  int64        `json:"highWatermark"`
	StartOffset    int64        `json:"startOffset"` // where the browse started
	NextOffset     int64        `json:"nextOffset"`  // where the next page starts
	Records        []recordJSON `json:"records"`
	// Scanned is how many records were examined (with a filter, more
	// than were answered).
	Scanned int `json:"scanned"`
	// StoppedBy says why a filtered browse stopped before limit matches
	// and the high watermark: "records" (maxScanRecords examined) or
	// "time" (filterTimeout); absent otherwise.
	StoppedBy string `json:"stoppedBy,omitempty"`
	// FilterErrors counts records the filter expression failed on (they
	// do not match); FilterError is the first failure.
	FilterErrors int    `json:"filterErrors,omitempty"`
	FilterError  string `json:"filterError,omitempty"`
}

// getRecords: GET /api/v1/topics/{topic}/records?partition=&offset=
// |timestamp=|fromEnd=true&limit=&key=&filter=. Reads committed and
// uncommitted records below the high watermark, at most limit of them and
// for at most browseTimeout; without a start it reads from the log start.
// key (a substring of the key as text) and filter (an expression over the
// record, record_filter.go) keep only the records that match; a filtered
// browse examines at most maxScanRecords for at most filterTimeout and
// says how many it examined.
func (c *Console) getRecords(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	topic := r.PathValue("topic")
	q := r.URL.Query()
	partition, ok := intParam(w, r, "partition", 0, 0, 1<<31-1)
	if !ok {
		return
	}
	limit, ok := intParam(w, r, "limit", defaultRecordLimit, 1, maxRecordLimit)
	if !ok {
		return
	}
	offset, ok := intParam(w, r, "offset", -1, 0, 1<<63-1)
	if !ok {
		return
	}
	timestamp, ok := intParam(w, r, "timestamp", -1, 0, 1<<63-1)
	if !ok {
		return
	}
	fromEnd := false
	if s := q.Get("fromEnd"); s != "" {
		var err error
		if fromEnd, err = strconv.ParseBool(s); err != nil {
			writeError(w, http.StatusBadRequest, "", "fromEnd must be true or false, not %q", s)
			return
		}
	}
	starts := 0
	for _, set := range []bool{offset >= 0, timestamp >= 0, fromEnd} {
		if set {
			starts++
		}
	}
	if starts > 1 {
		writeError(w, http.StatusBadRequest, "", "give at most one of offset, timestamp and fromEnd")
		return
	}
	match, err := newRecordFilter(q.Get("key"), q.Get("filter"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	adm := kadm.NewClient(cl)
	p := int32(partition)
	if err := checkPartition(ctx, adm, topic, p); err != nil {
		c.writeKafkaError(w, fmt.Sprintf("reading %s/%d", topic, p), err)
		return
	}
	logStart, hw, err := partitionBounds(ctx, adm, topic, p)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("listing the offsets of %s/%d", topic, p), err)
		return
	}
	start := logStart
	switch {
	case offset >= 0:
		start = max(offset, logStart)
	case timestamp >= 0:
		listed, err := adm.ListOffsetsAfterMilli(ctx, timestamp, topic)
		if err != nil {
			c.writeKafkaError(w, fmt.Sprintf("finding the offset at %d ms in %s/%d", timestamp, topic, p), err)
			return
		}
		start = hw
		if o, ok := listed.Lookup(topic, p); ok && o.Err == nil && o.Offset >= 0 {
			start = max(o.Offset, logStart)
		}
	case fromEnd:
		start = max(hw-limit, logStart)
	}
	out := recordPageJSON{Topic: topic, Partition: p, LogStartOffset: logStart, HighWatermark: hw, StartOffset: start, NextOffset: start, Records: []recordJSON{}}
	if start < hw {
		res, err := c.browse(ctx, topic, p, start, hw, int(limit), match)
		if err != nil {
			c.writeKafkaError(w, fmt.Sprintf("reading %s/%d from offset %d", topic, p, start), err)
			return
		}
		for _, rec := range res.records {
			out.Records = append(out.Records, toRecordJSON(rec))
		}
		out.NextOffset, out.Scanned, out.StoppedBy = res.next, res.scanned, res.stoppedBy
		if match != nil {
			out.FilterErrors, out.FilterError = match.failures, match.firstFailure
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// checkPartition: the topic exists and has partition p (404 and 400 as
// Kafka errors otherwise).
func checkPartition(ctx context.Context, adm *kadm.Client, topic string, p int32) error {
	td, err := describeTopic(ctx, adm, topic)
	if err != nil {
		return err
	}
	if _, ok := td.Partitions[p]; !ok {
		return &kerr.Error{Message: kerr.InvalidPartitions.Message, Code: kerr.InvalidPartitions.Code,
			Description: fmt.Sprintf("topic %q has %d partitions, there is no partition %d", topic, len(td.Partitions), p)}
	}
	return nil
}

func partitionBounds(ctx context.Context, adm *kadm.Client, topic string, p int32) (logStart, hw int64, err error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	s, _ := starts.Lookup(topic, p)
	e, _ := ends.Lookup(topic, p)
	if s.Err != nil {
		return 0, 0, s.Err
	}
	if e.Err != nil {
		return 0, 0, e.Err
	}
	return s.Offset, e.Offset, nil
}

// browsed is what one browse read.
type browsed struct {
	records   []*kgo.Record // those that match
	scanned   int           // records examined
	next      int64         // the offset after the last examined
	stoppedBy string        // "records" or "time" when a filter's bound ended it
}

// browse reads records of topic/p from start, stopping before end, and
// keeps up to limit that match (every one when match is nil), with a
// consumer of its own that lives for this request. Unfiltered it waits at
// most browseTimeout; filtered it examines at most maxScanRecords records
// for at most filterTimeout.
func (c *Console) browse(ctx context.Context, topic string, p int32, start, end int64, limit int, match *recordFilter) (browsed, error) {
	out := browsed{next: start}
	cl, err := c.cfg.NewClient(
		kgo.ClientID("strata-console-browse"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(start)}}),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.FetchMaxBytes(maxBrowseBytes),
		kgo.FetchMaxPartitionBytes(maxBrowseBytes),
	)
	if err != nil {
		return out, err
	}
	defer cl.Close()
	timeout, poll := browseTimeout, limit
	if match != nil {
		timeout, poll = filterTimeout, 0 // 0: whatever the fetch brought
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for len(out.records) < limit && out.next < end {
		if match != nil && out.scanned >= maxScanRecords {
			out.stoppedBy = "records"
			break
		}
		var fetches kgo.Fetches
		if poll > 0 {
			fetches = cl.PollRecords(ctx, limit-len(out.records))
		} else {
			fetches = cl.PollFetches(ctx)
		}
		if ctx.Err() != nil {
			if match != nil {
				out.stoppedBy = "time"
			}
			break // the time is up: answer what was read
		}
		for _, fe := range fetches.Errors() {
			if fe.Err != context.DeadlineExceeded && fe.Err != context.Canceled {
				return out, fe.Err
			}
		}
		fetches.EachRecord(func(rec *kgo.Record) {
			if rec.Offset >= end || len(out.records) >= limit || (match != nil && out.scanned >= maxScanRecords) {
				return
			}
			out.scanned++
			out.next = rec.Offset + 1
			if match == nil || match.matches(rec) {
				out.records = append(out.records, rec)
			}
		})
	}
	return out, nil
}

func toRecordJSON(rec *kgo.Record) recordJSON {
	out := recordJSON{
		Partition: rec.Partition,
		Offset:    rec.Offset,
		Timestamp: rec.Timestamp.UnixMilli(),
		Key:       payload(rec.Key),
		Value:     payload(rec.Value),
		Headers:   []headerJSON{},
	}
	for _, h := range rec.Headers {
		out.Headers = append(out.Headers, headerJSON{Key: h.Key, Value: payload(h.Value)})
	}
	return out
}

// producePayloadJSON is a key, value or header value to produce: text, or
// base64 when encoding is "base64". null or absent: no key (a null value
// is a tombstone).
type producePayloadJSON struct {
	Encoding string `json:"encoding"`
	Data     string `json:"data"`
}

func (p *producePayloadJSON) bytes(what string) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	switch p.Encoding {
	case "", "text":
		return []byte(p.Data), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return nil, fmt.Errorf("%s is not valid base64: %v", what, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s has encoding %q; use text or base64", what, p.Encoding)
}

type produceHeaderJSON struct {
	Key   string              `json:"key"`
	Value *producePayloadJSON `json:"value"`
}

type produceJSON struct {
	Partition *int32              `json:"partition"` // absent: by key, as producers do
	Key       *producePayloadJSON `json:"key"`
	Value     *producePayloadJSON `json:"value"`
	Headers   []produceHeaderJSON `json:"headers"`
}

type producedJSON struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"`
}

// produceRecord: POST /api/v1/topics/{topic}/records, 201 with where the
// record landed once the cluster acknowledged it (acks=all).
func (c *Console) produceRecord(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	topic := r.PathValue("topic")
	var req produceJSON
	if !decodeBody(w, r, &req) {
		return
	}
	rec := &kgo.Record{Topic: topic}
	var err error
	if rec.Key, err = req.Key.bytes("key"); err == nil {
		rec.Value, err = req.Value.bytes("value")
	}
	for i, h := range req.Headers {
		if err != nil {
			break
		}
		var v []byte
		v, err = h.Value.bytes(fmt.Sprintf("header %d (%q)", i, h.Key))
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: v})
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "%v", err)
		return
	}
	rec.Context = ctx
	if req.Partition != nil {
		if err := checkPartition(ctx, kadm.NewClient(cl), topic, *req.Partition); err != nil {
			c.writeKafkaError(w, fmt.Sprintf("producing to %s/%d", topic, *req.Partition), err)
			return
		}
		rec.Context = withPartition(ctx, *req.Partition)
	} else if _, err := describeTopic(ctx, kadm.NewClient(cl), topic); err != nil {
		// Never create a topic by producing to it.
		c.writeKafkaError(w, fmt.Sprintf("producing to %s", topic), err)
		return
	}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		c.writeKafkaError(w, fmt.Sprintf("producing to %s", topic), err)
		return
	}
	writeJSON(w, http.StatusCreated, producedJSON{Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli()})
}
