package broker

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchWaiting reports whether a long-polling fetch is parked on the partition.
func (tb *testBroker) fetchWaiting(topic string, partition int32) bool {
	return tb.srv.topics.partition(topic, partition).Waiting() > 0
}

func longPoll(topic string, partition int32, maxWait time.Duration, minBytes int32) *kmsg.FetchRequest {
	req := fetchRequest(12, topic, [16]byte{}, map[int32]int64{partition: 0}, 1<<20)
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes = minBytes
	return req
}

// TestFetchLongPollWakesOnProduce: a fetch parked on an empty partition
// answers as soon as a produce lands, long before max_wait.
func TestFetchLongPollWakesOnProduce(t *testing.T) {
	t.Parallel()
	tb := startTestBroker(t)
	tb.createTopic("lp-wake", 1, nil)
	c := tb.dialRaw()
	const maxWait = 5 * time.Second
	req := longPoll("lp-wake", 0, maxWait, 1)
	start := time.Now()
	corr := c.send(req)
	waitFor(t, 5*time.Second, "the fetch to park", func() bool { return tb.fetchWaiting("lp-wake", 0) })
	if got := tb.dialRaw().produceRaw("lp-wake", 0, buildBatch(t, plainBatch(fixtureRecords(3, 8)...))); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	resp, err := c.readResponse(req, corr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > maxWait/2 {
		t.Fatalf("fetch answered after %v; want well before max_wait %v", elapsed, maxWait)
	}
	_, records := decodeBatches(t, resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches)
	if len(records) != 3 {
		t.Fatalf("woken fetch returned %d records, want 3", len(records))
	}
}

// TestFetchLongPollTimesOut: with nothing produced the fetch waits out
// max_wait; a produce too small for min_bytes, or to a partition the fetch
// does not read, does not end the wait early.
func TestFetchLongPollTimesOut(t *testing.T) {
	t.Parallel()
	tb := startTestBroker(t)
	tb.createTopic("lp-idle", 2, nil)
	const maxWait = 5 * time.Second
	type result struct {
		resp    *kmsg.FetchResponse
		elapsed time.Duration
		err     error
	}
	start := func(partition int32, minBytes int32) chan result {
		c := tb.dialRaw()
		req := longPoll("lp-idle", partition, maxWait, minBytes)
		out := make(chan result, 1)
		began := time.Now()
		corr := c.send(req)
		go func() {
			resp, err := c.readResponse(req, corr, 3*maxWait)
			r := result{elapsed: time.Since(began), err: err}
			if err == nil {
				r.resp = resp.(*kmsg.FetchResponse)
			}
			out <- r
		}()
		return out
	}
	idle := start(0, 1)
	starved := start(1, 1<<20)
	waitFor(t, 5*time.Second, "both fetches to park", func() bool {
		return tb.fetchWaiting("lp-idle", 0) && tb.fetchWaiting("lp-idle", 1)
	})
	if got := tb.dialRaw().produceRaw("lp-idle", 1, buildBatch(t, plainBatch(fixtureRecords(2, 9)...))); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	for name, ch := range map[string]chan result{"idle partition": idle, "below min_bytes": starved} {
		r := <-ch
		if r.err != nil {
			t.Fatalf("%s: %v", name, r.err)
		}
		if r.elapsed < maxWait*9/10 || r.elapsed > maxWait+3*time.Second {
			t.Errorf("%s: fetch answered after %v; want about max_wait %v", name, r.elapsed, maxWait)
		}
		if code := r.resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Errorf("%s: error %v", name, kerr.ErrorForCode(code))
		}
	}
}

// TestFetchLongPollReleasedByClose: shutting the broker down answers a
// parked fetch at once and Close returns.
func TestFetchLongPollReleasedByClose(t *testing.T) {
	t.Parallel()
	tb := startTestBroker(t)
	tb.createTopic("lp-close", 1, nil)
	c := tb.dialRaw()
	req := longPoll("lp-close", 0, 60*time.Second, 1)
	corr := c.send(req)
	waitFor(t, 5*time.Second, "the fetch to park", func() bool { return tb.fetchWaiting("lp-close", 0) })
	srv := tb.srv
	closed := make(chan error, 1)
	began := time.Now()
	go func() { closed <- srv.Close() }()
	resp, err := c.readResponse(req, corr, 10*time.Second)
	if err != nil {
		t.Fatalf("parked fetch got no response on shutdown: %v", err)
	}
	if code := resp.(*kmsg.FetchResponse).ErrorCode; code != 0 {
		t.Fatalf("fetch answered with %v on shutdown", kerr.ErrorForCode(code))
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10s of a parked fetch")
	}
	if elapsed := time.Since(began); elapsed > 5*time.Second {
		t.Fatalf("shutdown took %v with a parked fetch", elapsed)
	}
	c.expectClosed("after shutdown")
}

// sessionFetch is one step of a KIP-227 conversation.
func sessionFetch(version int16, topic string, id [16]byte, sessionID, epoch int32, offsets map[int32]int64, forget []int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = sessionID, epoch
	if len(offsets) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		for p := int32(0); p < 16; p++ {
			if off, ok := offsets[p]; ok {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, off, 1<<20
				rt.Partitions = append(rt.Partitions, rp)
			}
		}
		req.Topics = append(req.Topics, rt)
	}
	if len(forget) > 0 {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = topic, id, forget
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return req
}

// partitionsOf flattens a fetch response: partition -> record count.
func partitionsOf(t *testing.T, resp *kmsg.FetchResponse) map[int32]int {
	t.Helper()
	out := map[int32]int{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("partition %d: %v", rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
			_, records := decodeBatches(t, rp.RecordBatches)
			out[rp.Partition] = len(records)
		}
	}
	return out
}

func samePartitions(got, want map[int32]int) bool {
	if len(got) != len(want) {
		return false
	}
	for p, n := range want {
		if m, ok := got[p]; !ok || m != n {
			return false
		}
	}
	return true
}

// TestFetchSessions walks a KIP-227 session by name (v12) and by topic ID
// (v16): creation at epoch 0, incremental fetches that return only
// partitions with news, epoch and id errors, forgotten partitions, close.
func TestFetchSessions(t *testing.T) {
	tb := startTestBroker(t)
	for _, version := range []int16{7, 12, 16} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			topic := fmt.Sprintf("sessions-v%d", version)
			id := tb.createTopic(topic, 3, nil)
			c := tb.dialRaw()
			produce := func(p int32, n int) {
				if got := c.produceRaw(topic, p, buildBatch(t, plainBatch(fixtureRecords(n, 10)...))); got.ErrorCode != 0 {
					t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
				}
			}
			fetch := func(what string, req *kmsg.FetchRequest, wantErr *kerr.Error, want map[int32]int) *kmsg.FetchResponse {
				t.Helper()
				resp := roundTrip[*kmsg.FetchResponse](c, req)
				wantCode := int16(0)
				if wantErr != nil {
					wantCode = wantErr.Code
				}
				if resp.ErrorCode != wantCode {
					t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(wantCode))
				}
				if wantErr == nil {
					if got := partitionsOf(t, resp); !samePartitions(got, want) {
						t.Fatalf("%s: partitions:records %v, want %v", what, got, want)
					}
				}
				return resp
			}
			produce(0, 2)
			produce(1, 2)

			full := fetch("full fetch opening the session", sessionFetch(version, topic, id, 0, 0, map[int32]int64{0: 0, 1: 0, 2: 0}, nil),
				nil, map[int32]int{0: 2, 1: 2, 2: 0})
			sid := full.SessionID
			if sid == 0 {
				t.Fatal("epoch-0 fetch created no session")
			}
			fetch("incremental with nothing new", sessionFetch(version, topic, id, sid, 1, map[int32]int64{0: 2, 1: 2}, nil),
				nil, map[int32]int{})
			produce(2, 3)
			fetch("incremental after a produce to partition 2", sessionFetch(version, topic, id, sid, 2, nil, nil),
				nil, map[int32]int{2: 3})
			fetch("epoch from the future", sessionFetch(version, topic, id, sid, 9, nil, nil), kerr.InvalidFetchSessionEpoch, nil)
			fetch("epoch already used", sessionFetch(version, topic, id, sid, 2, nil, nil), kerr.InvalidFetchSessionEpoch, nil)
			fetch("unknown session", sessionFetch(version, topic, id, sid^0x5a5a, 3, nil, nil), kerr.FetchSessionIDNotFound, nil)
			fetch("forgetting partition 2", sessionFetch(version, topic, id, sid, 3, nil, []int32{2}), nil, map[int32]int{})
			produce(0, 1)
			produce(2, 1)
			fetch("after forgetting, news on 0 and 2", sessionFetch(version, topic, id, sid, 4, nil, nil), nil, map[int32]int{0: 1})
			fetch("partition 2 added back", sessionFetch(version, topic, id, sid, 5, map[int32]int64{0: 3, 2: 3}, nil), nil, map[int32]int{2: 1})
			fetch("closing the session", sessionFetch(version, topic, id, sid, -1, map[int32]int64{0: 0}, nil), nil, map[int32]int{0: 3})
			fetch("closed session", sessionFetch(version, topic, id, sid, 6, nil, nil), kerr.FetchSessionIDNotFound, nil)
		})
	}
}

// TestFetchSessionsFranzManyPartitions consumes 64 partitions with
// franz-go, which uses incremental fetch sessions, in two rounds: the
// second produced after the consumer has caught up, so only incremental
// fetches can deliver it.
func TestFetchSessionsFranzManyPartitions(t *testing.T) {
	tb := startTestBroker(t)
	const topic, partitions, perRound = "many", 64, 10_000
	tb.createTopic(topic, partitions, nil)
	ctx := testContext(t)
	prod := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(perRound))
	cons := tb.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	next := map[int32]int64{}
	for round := 0; round < 2; round++ {
		for i := 0; i < perRound; i++ {
			n := round*perRound + i
			rec := &kgo.Record{Topic: topic, Partition: int32(n % partitions), Value: []byte(fmt.Sprintf("%d", n))}
			prod.Produce(ctx, rec, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := prod.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < perRound; {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("round %d: consumed %d of %d: %v", round, got, perRound, ctx.Err())
			}
			fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				if r.Offset != next[r.Partition] {
					t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
				}
				if want := fmt.Sprintf("%d", int(r.Offset)*partitions+int(r.Partition)); string(r.Value) != want {
					t.Fatalf("partition %d offset %d: value %q, want %q", r.Partition, r.Offset, r.Value, want)
				}
				next[r.Partition]++
				got++
			})
		}
	}
	// The consumer held a session over all partitions and advanced its epoch:
	// a session starts expecting epoch 1, so 2 means at least one
	// incremental fetch (round two may arrive in a single one).
	tb.srv.fetches.mu.Lock()
	defer tb.srv.fetches.mu.Unlock()
	found := false
	for _, s := range tb.srv.fetches.sessions {
		s.mu.Lock()
		if len(s.partitions) == partitions && s.epoch >= 2 {
			found = true
		}
		s.mu.Unlock()
	}
	if !found {
		t.Fatalf("no fetch session over %d partitions with incremental fetches among %d sessions", partitions, len(tb.srv.fetches.sessions))
	}
}

// TestFetchByteLimits checks partition_max_bytes and max_bytes, and KIP-74:
// the first batch of the first non-empty partition comes whole even when
// larger than both limits.
func TestFetchByteLimits(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("limits", 2, nil)
	tb.createTopic("huge", 3, nil)
	c := tb.dialRaw()
	value := bytes.Repeat([]byte("v"), 1000)
	var batchSize int
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 10; i++ {
			b := buildBatch(t, plainBatch(testRecord{value: value, timestamp: int64(i)}))
			batchSize = len(b)
			if got := c.produceRaw("limits", p, b); got.ErrorCode != 0 {
				t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
			}
		}
	}
	hugeValue := bytes.Repeat([]byte("h"), 60_000)
	for p := int32(1); p < 3; p++ {
		if got := c.produceRaw("huge", p, buildBatch(t, plainBatch(testRecord{value: hugeValue}))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}

	for _, version := range []int16{4, 11, 12} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			// check fetches and compares the whole batches per partition;
			// partitionLimit > 0 bounds each partition's bytes, and
			// max_bytes bounds the response unless kip74 allows a larger
			// first batch.
			check := func(what string, req *kmsg.FetchRequest, wholeBatches map[int32]int, partitionLimit int, kip74 bool) {
				t.Helper()
				resp := roundTrip[*kmsg.FetchResponse](c, req)
				total := 0
				for _, rp := range resp.Topics[0].Partitions {
					if rp.ErrorCode != 0 {
						t.Fatalf("%s: partition %d: %v", what, rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
					}
					headers, _ := decodeBatches(t, rp.RecordBatches)
					if got := len(headers); got != wholeBatches[rp.Partition] {
						t.Errorf("%s: partition %d: %d whole batches, want %d", what, rp.Partition, got, wholeBatches[rp.Partition])
					}
					if partitionLimit > 0 && len(rp.RecordBatches) > partitionLimit {
						t.Errorf("%s: partition %d: %d bytes, over partition_max_bytes %d", what, rp.Partition, len(rp.RecordBatches), partitionLimit)
					}
					total += len(rp.RecordBatches)
				}
				if !kip74 && total > int(req.MaxBytes) {
					t.Errorf("%s: %d bytes in the response, over max_bytes %d", what, total, req.MaxBytes)
				}
			}

			req := fetchRequest(version, "limits", [16]byte{}, map[int32]int64{0: 0}, int32(batchSize*5/2))
			check("partition_max_bytes of 2.5 batches", req, map[int32]int{0: 2}, batchSize*5/2, false)

			req = fetchRequest(version, "limits", [16]byte{}, map[int32]int64{0: 0, 1: 0}, 1<<20)
			req.MaxBytes = int32(batchSize * 7 / 2)
			check("max_bytes of 3.5 batches over two partitions", req, map[int32]int{0: 3, 1: 0}, 0, false)

			req = fetchRequest(version, "limits", [16]byte{}, map[int32]int64{0: 8, 1: 0}, 1<<20)
			req.MaxBytes = int32(batchSize * 7 / 2)
			check("max_bytes spanning two partitions", req, map[int32]int{0: 2, 1: 1}, 0, false)

			// Partition 0 of "huge" is empty, so partition 1 holds the
			// first batch of the response; partition 2 gets nothing.
			req = fetchRequest(version, "huge", [16]byte{}, map[int32]int64{0: 0, 1: 0, 2: 0}, 1000)
			req.MaxBytes = 1000
			check("KIP-74: oversized first batch", req, map[int32]int{0: 0, 1: 1, 2: 0}, 0, true)
		})
	}
}

// TestFetchUsesSendfile proves the zero-copy path: the bytes sent with
// sendfile(2) grow by at least the record bytes a TCP fetch returned.
func TestFetchUsesSendfile(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("zerocopy", 1, nil)
	c := tb.dialRaw()
	for i := 0; i < 20; i++ {
		if got := c.produceRaw("zerocopy", 0, buildBatch(t, plainBatch(fixtureRecords(100, uint64(i))...))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	before := sendfileBytes.Load()
	resp := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "zerocopy", [16]byte{}, map[int32]int64{0: 0}, 10<<20))
	returned := len(resp.Topics[0].Partitions[0].RecordBatches)
	_, records := decodeBatches(t, resp.Topics[0].Partitions[0].RecordBatches)
	if len(records) != 2000 {
		t.Fatalf("fetched %d records, want 2000", len(records))
	}
	if sent := sendfileBytes.Load() - before; sent < int64(returned) {
		t.Fatalf("sendfile sent %d bytes for a fetch returning %d record bytes", sent, returned)
	}
}

// TestFetchErrors covers per-partition fetch errors.
func TestFetchErrors(t *testing.T) {
	tb := startTestBroker(t)
	id := tb.createTopic("fetch-errors", 1, nil)
	c := tb.dialRaw()
	if got := c.produceRaw("fetch-errors", 0, buildBatch(t, plainBatch(fixtureRecords(5, 11)...))); got.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	cases := []struct {
		name string
		req  *kmsg.FetchRequest
		want *kerr.Error
	}{
		{"offset past the end", fetchRequest(12, "fetch-errors", id, map[int32]int64{0: 6}, 1<<20), kerr.OffsetOutOfRange},
		{"negative offset", fetchRequest(12, "fetch-errors", id, map[int32]int64{0: -5}, 1<<20), kerr.OffsetOutOfRange},
		{"unknown topic", fetchRequest(12, "nope", id, map[int32]int64{0: 0}, 1<<20), kerr.UnknownTopicOrPartition},
		{"unknown topic id", fetchRequest(13, "", [16]byte{9, 9, 9}, map[int32]int64{0: 0}, 1<<20), kerr.UnknownTopicID},
	}
	fenced := fetchRequest(12, "fetch-errors", id, map[int32]int64{0: 0}, 1<<20)
	fenced.Topics[0].Partitions[0].CurrentLeaderEpoch = 3
	cases = append(cases, struct {
		name string
		req  *kmsg.FetchRequest
		want *kerr.Error
	}{"leader epoch from the future", fenced, kerr.UnknownLeaderEpoch})
	for _, tc := range cases {
		resp := roundTrip[*kmsg.FetchResponse](c, tc.req)
		if got := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); got != tc.want {
			t.Errorf("%s: error %v, want %v", tc.name, got, tc.want)
		}
	}
	// At the log end: no error, no records.
	resp := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "fetch-errors", id, map[int32]int64{0: 5}, 1<<20))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 5 {
		t.Fatalf("fetch at the log end: error %d, %d bytes, high watermark %d", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
	}
}

// TestConcurrentProduceConsume consumes while two producers write to three
// partitions whose small segments roll constantly, so fetches read
// segments being appended to and rolled; every record arrives once, in
// order per partition.
func TestConcurrentProduceConsume(t *testing.T) {
	tb := startTestBroker(t)
	const topic, partitions, perProducer = "concurrent", 3, 15_000
	tb.createTopic(topic, partitions, map[string]*string{"segment.bytes": ptr("32768")})
	ctx := testContext(t)
	cons := tb.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(50*time.Millisecond))
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		prod := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond), kgo.ProducerBatchMaxBytes(4<<10))
		go func() {
			var firstErr atomic.Value
			for i := 0; i < perProducer; i++ {
				rec := &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte{byte(w)}, Value: []byte(fmt.Sprintf("%d-%d", w, i))}
				prod.Produce(ctx, rec, func(_ *kgo.Record, err error) {
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
					}
				})
			}
			err := prod.Flush(ctx)
			if e, ok := firstErr.Load().(error); ok && err == nil {
				err = e
			}
			errs <- err
		}()
	}
	next := map[int32]int64{}
	last := map[[2]int]int{} // (producer, partition) -> last index seen
	for got := 0; got < 2*perProducer; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d: %v", got, 2*perProducer, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
			var w, i int
			if _, err := fmt.Sscanf(string(r.Value), "%d-%d", &w, &i); err != nil {
				t.Fatalf("value %q", r.Value)
			}
			k := [2]int{w, int(r.Partition)}
			if prev, ok := last[k]; ok && i != prev+partitions {
				t.Fatalf("producer %d partition %d: record %d after %d", w, r.Partition, i, prev)
			}
			last[k] = i
			got++
		})
	}
	for w := 0; w < 2; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for p := int32(0); p < partitions; p++ {
		if n := tb.srv.topics.partition(topic, p).Log().NumSegments(); n < 3 {
			t.Errorf("partition %d has %d segments; the test wants rolls during reads", p, n)
		}
	}
}

// TestFetchLongPollReleasedByTopicDeletion: deleting the topic a fetch is
// parked on answers it at once with UNKNOWN_TOPIC_OR_PARTITION.
func TestFetchLongPollReleasedByTopicDeletion(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("lp-deleted", 1, nil)
	c := tb.dialRaw()
	req := longPoll("lp-deleted", 0, 30*time.Second, 1)
	began := time.Now()
	corr := c.send(req)
	waitFor(t, 5*time.Second, "the fetch to park", func() bool { return tb.fetchWaiting("lp-deleted", 0) })
	resp, err := tb.admin().DeleteTopics(testContext(t), "lp-deleted")
	if err != nil || resp["lp-deleted"].Err != nil {
		t.Fatalf("delete: %v %v", err, resp["lp-deleted"].Err)
	}
	got, err := c.readResponse(req, corr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if code := got.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("parked fetch after deletion: %v", kerr.ErrorForCode(code))
	}
	if elapsed := time.Since(began); elapsed > 10*time.Second {
		t.Fatalf("parked fetch answered after %v", elapsed)
	}
}

// TestFetchAcrossSegments reads a log of many small segments, one with a
// batch larger than segment.bytes, batch by batch (partition_max_bytes
// below any batch, so KIP-74 returns exactly one) before and after a
// restart and a DeleteRecords to a segment boundary.
func TestFetchAcrossSegments(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("segments", 1, map[string]*string{"segment.bytes": ptr("300")})
	c := tb.dialRaw()
	var batches [][]testRecord
	for i := 0; i < 12; i++ {
		recs := fixtureRecords(1+i%4, uint64(100+i))
		if i == 5 {
			recs = []testRecord{{key: []byte("big"), value: bytes.Repeat([]byte("B"), 5000), timestamp: 5}}
		}
		if got := c.produceRaw("segments", 0, buildBatch(t, plainBatch(recs...))); got.ErrorCode != 0 {
			t.Fatalf("batch %d: %v", i, kerr.ErrorForCode(got.ErrorCode))
		}
		batches = append(batches, recs)
	}
	var want []testRecord
	for _, b := range batches {
		want = append(want, b...)
	}
	readAll := func(what string, from int64) {
		t.Helper()
		c := tb.dialRaw()
		next := from
		for next < int64(len(want)) {
			resp := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "segments", [16]byte{}, map[int32]int64{0: next}, 10))
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 {
				t.Fatalf("%s: fetch at %d: %v", what, next, kerr.ErrorForCode(p.ErrorCode))
			}
			headers, records := decodeBatches(t, p.RecordBatches)
			if len(headers) != 1 {
				t.Fatalf("%s: fetch at %d returned %d whole batches, want 1", what, next, len(headers))
			}
			for _, r := range records {
				if r.Offset < next {
					continue
				}
				if r.Offset != next {
					t.Fatalf("%s: offset %d, want %d", what, r.Offset, next)
				}
				if diff := sameRecord(want[next], r.Key, r.Value, r.Headers, r.Timestamp); diff != "" {
					t.Fatalf("%s: record %d: %s", what, next, diff)
				}
				next++
			}
		}
	}
	readAll("fresh", 0)
	if n := tb.srv.topics.partition("segments", 0).Log().NumSegments(); n < 6 {
		t.Fatalf("%d segments; the test wants many", n)
	}
	tb.restart()
	readAll("after restart", 0)

	// Cut at the first offset of the big batch, a segment boundary.
	boundary := int64(0)
	for _, b := range batches[:5] {
		boundary += int64(len(b))
	}
	del := kmsg.NewPtrDeleteRecordsRequest()
	del.Version = 2
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "segments"
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = 0, boundary
	dt.Partitions = append(dt.Partitions, dp)
	del.Topics = append(del.Topics, dt)
	c = tb.dialRaw()
	if got := roundTrip[*kmsg.DeleteRecordsResponse](c, del).Topics[0].Partitions[0]; got.ErrorCode != 0 || got.LowWatermark != boundary {
		t.Fatalf("delete records to %d: %v, low watermark %d", boundary, kerr.ErrorForCode(got.ErrorCode), got.LowWatermark)
	}
	tb.restart()
	c = tb.dialRaw()
	if lo := c.listOffset(7, "segments", 0, -2); lo.Offset != boundary {
		t.Fatalf("earliest %d after restart, want %d", lo.Offset, boundary)
	}
	if lo := c.listOffset(7, "segments", 0, 0); lo.Offset != boundary {
		t.Fatalf("first offset by timestamp 0: %d, want %d", lo.Offset, boundary)
	}
	readAll("after delete records and restart", boundary)
	if got := c.produceRaw("segments", 0, buildBatch(t, plainBatch(fixtureRecords(1, 200)...))); got.ErrorCode != 0 || got.BaseOffset != int64(len(want)) {
		t.Fatalf("produce after everything: %v at %d, want %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset, len(want))
	}
}

// TestFetchLongPollSeesAppendRacingTheRead: a record appended after a
// sessionless fetch read its partition, but before the long poll
// registered its waiter, answers the fetch at once. The watermark the
// poll compares against was once taken after the read, so such an
// append left the fetch (a follower's too: the leader's acks=all
// produces waited with it) parked for all of max_wait.
func TestFetchLongPollSeesAppendRacingTheRead(t *testing.T) {
	// Not parallel: the hook is package state. Reset after the broker
	// closed (cleanups run last-registered first).
	t.Cleanup(func() { fetchAfterReadHook = nil })
	tb := startTestBroker(t)
	tb.createTopic("lp-race", 1, nil)
	producer := tb.dialRaw()
	var raced atomic.Bool
	hookErr := make(chan error, 1)
	fetchAfterReadHook = func(topic string) {
		if topic != "lp-race" || !raced.CompareAndSwap(false, true) {
			return
		}
		// Between the read and the long poll's registration.
		got := producer.produceRaw("lp-race", 0, buildBatch(t, plainBatch(fixtureRecords(3, 8)...)))
		hookErr <- kerr.ErrorForCode(got.ErrorCode)
	}
	c := tb.dialRaw()
	const maxWait = 5 * time.Second
	req := longPoll("lp-race", 0, maxWait, 1)
	req.SessionEpoch = -1 // no session: the waiter path, not the watches
	start := time.Now()
	corr := c.send(req)
	resp, err := c.readResponse(req, corr, 3*maxWait)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if err := <-hookErr; err != nil {
		t.Fatalf("produce inside the fetch: %v", err)
	}
	if elapsed > maxWait/2 {
		t.Fatalf("fetch answered after %v; an append between its read and its wait must end the wait at once (max_wait %v)", elapsed, maxWait)
	}
	_, records := decodeBatches(t, resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches)
	if len(records) != 3 {
		t.Fatalf("fetch returned %d records, want 3", len(records))
	}
}
