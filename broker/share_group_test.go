package broker

// End-to-end share groups (KIP-932) with franz-go's share consumer: many
// members on few partitions, acknowledgements, redelivery on release and
// lock expiry, the delivery limit, restarts.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startShareBroker starts a broker with short share-group timings.
func startShareBroker(t *testing.T, tune ...func(*Config)) *testBroker {
	t.Helper()
	return startTestBroker(t, append([]func(*Config){func(c *Config) {
		c.GroupShareHeartbeatIntervalMs = 1000
		c.GroupShareSessionTimeoutMs = 10000
	}}, tune...)...)
}

// setShareGroupConfigs sets GROUP configs of a share group.
func setShareGroupConfigs(t testing.TB, tb *testBroker, group string, cfgs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for k, v := range cfgs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, ptr(v)
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(testContext(t), tb.client())
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Resources[0].ErrorCode; code != 0 {
		t.Fatalf("group configs of %s: code %d %v", group, code, stringOrEmpty(resp.Resources[0].ErrorMessage))
	}
}

// produceOnePerBatch produces n records to each partition, one batch
// each, valued "<partition>-<i>".
func produceOnePerBatch(t *testing.T, tb *testBroker, topic string, partitions int32, n int) {
	t.Helper()
	cl := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	ctx := testContext(t)
	for i := 0; i < n; i++ {
		for p := int32(0); p < partitions; p++ {
			r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// shareClient is a franz-go share consumer of topic in group whose ack
// errors are recorded.
func shareClient(tb *testBroker, group, topic string, ackErrs *ackErrors, opts ...kgo.Opt) *kgo.Client {
	base := []kgo.Opt{
		kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
			for _, r := range rs {
				if r.Err != nil {
					ackErrs.add(r.Err)
				}
			}
		}),
	}
	return tb.client(append(base, opts...)...)
}

type ackErrors struct {
	mu   sync.Mutex
	errs []error
}

func (a *ackErrors) add(err error) { a.mu.Lock(); a.errs = append(a.errs, err); a.mu.Unlock() }
func (a *ackErrors) check(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.errs) > 0 {
		t.Fatalf("acknowledgement errors: %v", a.errs)
	}
}

// sharePartitionState returns the broker's share-partition of group on
// topic's partition: start offset, end offset, lag against the high
// watermark.
func sharePartitionState(tb *testBroker, group, topic string, partition int32) (start, end, lag int64, ok bool) {
	ts := tb.srv.topics.get(topic)
	if ts == nil {
		return 0, 0, 0, false
	}
	c := tb.srv.shares
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := c.mu.partitions[sharePartitionKey{group: group, topic: ts.id, partition: partition}]
	if sp == nil {
		return 0, 0, 0, false
	}
	p := tb.srv.topics.partition(topic, partition)
	return sp.Start(), sp.End(), sp.Lag(p.HighWatermark()), true
}

// TestShareGroupTenConsumersTwoPartitions: 10 share consumers on a
// 2-partition topic all receive records; every record is processed at
// least once and acknowledged exactly once (no ack error, nothing left in
// flight, lag 0).
func TestShareGroupTenConsumersTwoPartitions(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group, perPartition, consumers = "queue-10", "workers-10", 100, 10
	tb.createTopic(topic, 2, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	produceOnePerBatch(t, tb, topic, 2, perPartition)

	var (
		mu        sync.Mutex
		seen      = map[string]int{}
		byClient  = map[int]int{}
		allGot    = make(chan struct{})
		gotAny    = map[int]bool{}
		ackErrs   ackErrors
		wg        sync.WaitGroup
		ctx, stop = context.WithCancel(testContext(t))
	)
	defer stop()
	for i := 0; i < consumers; i++ {
		cl := shareClient(tb, group, topic, &ackErrs, kgo.ShareMaxRecords(5))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				var n int
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)]++
					byClient[i]++
					n++
					if !gotAny[i] {
						gotAny[i] = true
						if len(gotAny) == consumers {
							close(allGot)
						}
					}
					mu.Unlock()
					r.Ack(kgo.AckAccept)
				})
				if n > 0 {
					// Hold the records (locked to this member) until
					// every consumer got some, so the others find records.
					select {
					case <-allGot:
					case <-ctx.Done():
					}
				}
				_ = cl.FlushAcks(ctx)
			}
		}()
	}
	waitFor(t, 30*time.Second, "every record processed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2*perPartition
	})
	waitFor(t, 15*time.Second, "every record acknowledged", func() bool {
		for p := int32(0); p < 2; p++ {
			start, end, lag, ok := sharePartitionState(tb, group, topic, p)
			if !ok || start != perPartition || end != perPartition || lag != 0 {
				return false
			}
		}
		return true
	})
	stop()
	wg.Wait()
	ackErrs.check(t)
	mu.Lock()
	defer mu.Unlock()
	if len(byClient) != consumers {
		t.Fatalf("%d of %d consumers received records: %v", len(byClient), consumers, byClient)
	}
	for p := 0; p < 2; p++ {
		for i := 0; i < perPartition; i++ {
			if seen[fmt.Sprintf("%d-%d", p, i)] == 0 {
				t.Fatalf("record %d-%d never processed", p, i)
			}
		}
	}
}

// TestShareGroupReleaseRejectAndLockExpiry: a released record comes back
// with delivery count 2 (to the other member), a rejected one never; a
// member that stops polling without acknowledging has its records
// delivered again once the lock ends, delivery count 2; records that keep
// coming back are archived at the delivery limit.
func TestShareGroupReleaseRejectAndLockExpiry(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-ack", "workers-ack"
	tb.createTopic(topic, 1, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{
		"share.auto.offset.reset":       "earliest",
		"share.record.lock.duration.ms": "1000",
		"share.delivery.count.limit":    "3",
	})
	produceOnePerBatch(t, tb, topic, 1, 6) // values 0-0 … 0-5
	ctx := testContext(t)
	var ackErrs ackErrors

	// The first member: releases 0-0, rejects 0-1, accepts 0-2, and holds
	// 0-3 … 0-5 without acknowledging (then stops polling).
	// The first member plays a consumer that stops mid-batch: its own
	// late acknowledgements (renewals of locks that ended, acks its
	// client drops when its session resets) may fail; not checked.
	var abandoned ackErrors
	first := shareClient(tb, group, topic, &abandoned, kgo.ShareMaxRecords(100))
	got := map[string]int32{}
	for len(got) < 6 {
		fs := first.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Value)] = r.DeliveryCount()
			switch string(r.Value) {
			case "0-0":
				r.Ack(kgo.AckRelease)
			case "0-1":
				r.Ack(kgo.AckReject)
			case "0-2":
				r.Ack(kgo.AckAccept)
			default:
				r.Ack(kgo.AckRenew) // not terminal: the lock is left to end
			}
		})
	}
	for v, dc := range got {
		if dc != 1 {
			t.Fatalf("first delivery of %s has delivery count %d", v, dc)
		}
	}
	if err := first.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	lockedAt := time.Now()

	// The second member gets 0-0 (released) at once and 0-3 … 0-5 once
	// the first member's locks end, each with delivery count 2; never 0-1
	// or 0-2.
	second := shareClient(tb, group, topic, &ackErrs, kgo.ShareMaxRecords(100))
	redelivered := map[string]int32{}
	var lateAt time.Time
	for len(redelivered) < 4 {
		fs := second.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("redelivered so far: %v: %v", redelivered, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if v == "0-1" || v == "0-2" {
				t.Errorf("%s delivered again (rejected/accepted)", v)
			}
			if v != "0-0" && lateAt.IsZero() {
				lateAt = time.Now()
			}
			redelivered[v] = r.DeliveryCount()
			r.Ack(kgo.AckAccept)
		})
	}
	for v, dc := range redelivered {
		// The first member's client keeps fetching in the background, so a
		// record may go to its buffer once more first (released, or its
		// lock ended there too): delivery count 2, or 3 after that detour.
		if dc != 2 && dc != 3 {
			t.Errorf("redelivery of %s has delivery count %d, want 2 (3 after the first member's prefetch)", v, dc)
		}
	}
	if d := lateAt.Sub(lockedAt); d < 900*time.Millisecond {
		t.Errorf("held records redelivered after %v, before their 1 s lock ended", d)
	}
	if err := second.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "all acknowledged", func() bool {
		start, _, lag, ok := sharePartitionState(tb, group, topic, 0)
		return ok && start == 6 && lag == 0
	})
	ackErrs.check(t)
	// The first member's client keeps fetching in the background; were it
	// left open, it could take a poison delivery below into its buffer
	// (and let the lock end) without the loop below seeing it.
	first.Close()

	// A poison record: released on every delivery, archived after 3.
	produceOnePerBatch(t, tb, topic, 1, 1) // offset 6, value 0-0 again
	deliveries := 0
	for {
		start, _, _, _ := sharePartitionState(tb, group, topic, 0)
		if start == 7 {
			break
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := second.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			deliveries++
			if int(r.DeliveryCount()) != deliveries {
				t.Errorf("poison delivery %d has delivery count %d", deliveries, r.DeliveryCount())
			}
			r.Ack(kgo.AckRelease)
		})
		if err := second.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
		if deliveries > 3 || ctx.Err() != nil {
			t.Fatalf("poison record delivered %d times (limit 3)", deliveries)
		}
	}
	if deliveries != 3 {
		t.Fatalf("poison record delivered %d times, want 3", deliveries)
	}
	ts := tb.srv.topics.get(topic)
	tb.srv.shares.mu.Lock()
	archived := tb.srv.shares.mu.partitions[sharePartitionKey{group: group, topic: ts.id, partition: 0}].ArchivedOverLimit()
	tb.srv.shares.mu.Unlock()
	if archived != 1 {
		t.Fatalf("archived over the limit: %d, want 1", archived)
	}
}

// TestShareGroupRestartKeepsAcknowledgements: acknowledged records stay
// acknowledged across a broker restart (the share-partition's state is
// replayed from __share_group_state); the records in flight then are
// delivered again, none lost.
func TestShareGroupRestartKeepsAcknowledgements(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-restart", "workers-restart"
	tb.createTopic(topic, 1, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	produceOnePerBatch(t, tb, topic, 1, 20) // offsets 0-19
	ctx := testContext(t)
	var ackErrs ackErrors

	first := shareClient(tb, group, topic, &ackErrs, kgo.ShareMaxRecords(12))
	accepted := map[int64]bool{}
	for len(accepted) < 10 {
		fs := first.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < 10 {
				r.Ack(kgo.AckAccept)
				accepted[r.Offset] = true
			} // the rest stay in flight: never polled again
		})
	}
	if err := first.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "offsets 0-9 acknowledged", func() bool {
		start, _, _, ok := sharePartitionState(tb, group, topic, 0)
		return ok && start == 10
	})
	ackErrs.check(t)

	// The first member goes away while the broker is down, so offsets 10
	// and 11 stay in flight in the persisted state (a member that
	// reconnected would take them again, for a lock duration).
	tb.stop()
	first.Close()
	tb.start()

	second := shareClient(tb, group, topic, &ackErrs, kgo.ShareMaxRecords(100))
	got := map[int64]int32{}
	for len(got) < 10 {
		fs := second.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("after the restart got %v: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < 10 {
				t.Errorf("offset %d, acknowledged before the restart, delivered again", r.Offset)
			}
			got[r.Offset] = r.DeliveryCount()
			r.Ack(kgo.AckAccept)
		})
	}
	if err := second.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	for o := int64(10); o < 20; o++ {
		if _, ok := got[o]; !ok {
			t.Fatalf("offset %d lost across the restart (got %v)", o, got)
		}
	}
	// Offsets 10 and 11 were in flight (acquired, in the persisted
	// snapshot as available) when the broker stopped: their second
	// delivery.
	if got[10] != 2 || got[11] != 2 {
		t.Errorf("delivery counts of the records in flight at the restart: 10:%d 11:%d, want 2", got[10], got[11])
	}
	waitFor(t, 10*time.Second, "offsets 10-19 acknowledged", func() bool {
		start, _, lag, ok := sharePartitionState(tb, group, topic, 0)
		return ok && start == 20 && lag == 0
	})
}

// TestShareGroupAdminOffsets: describe, alter and delete share-group
// offsets through kadm, and list and delete the group.
func TestShareGroupAdminOffsets(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-admin", "workers-admin"
	tb.createTopic(topic, 2, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	produceOnePerBatch(t, tb, topic, 2, 10)
	ctx := testContext(t)
	adm := tb.admin()
	var ackErrs ackErrors

	cl := shareClient(tb, group, topic, &ackErrs)
	consumed := 0
	for consumed < 20 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Partition == 0 && r.Offset >= 5 {
				r.Ack(kgo.AckRelease) // partition 0: 5 records not acknowledged
			} else {
				r.Ack(kgo.AckAccept)
			}
			consumed++
		})
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	listed, err := adm.ListGroupsByType(ctx, []string{"share"})
	if err != nil || len(listed.Groups()) != 1 || listed.Groups()[0] != group {
		t.Fatalf("share groups listed: %v %v", listed.Groups(), err)
	}
	described, err := adm.DescribeShareGroups(ctx, group)
	if err != nil || len(described[group].Members) != 1 {
		t.Fatalf("describe: %+v %v", described, err)
	}
	// Partition 1: all accepted; partition 0: start 5, 5 to go.
	waitFor(t, 10*time.Second, "share offsets", func() bool {
		offs, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		o0, o1 := offs[group].Offsets[topic][0], offs[group].Offsets[topic][1]
		return o0.StartOffset == 5 && o1.StartOffset == 10 && o1.Lag == 0 && o0.Lag == 5
	})

	// Altering needs an empty group.
	if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {1: {Topic: topic, Partition: 1, At: 2}}}); err == nil {
		t.Fatal("altered the offsets of a group with members")
	}
	if resp, err := adm.DeleteGroups(ctx, group); err != nil || resp[group].Err == nil {
		t.Fatalf("deleted a share group with members: %+v %v", resp, err)
	}
	cl.Close() // leaves the group
	resp, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {1: {Topic: topic, Partition: 1, At: 2}}})
	if err != nil {
		t.Fatalf("alter: %v", err)
	}
	for _, ps := range resp {
		for p, err := range ps {
			if err != nil {
				t.Fatalf("alter partition %d: %v", p, err)
			}
		}
	}
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o1 := offs[group].Offsets[topic][1]; o1.StartOffset != 2 || o1.Lag != 8 {
		t.Fatalf("after the alter: %+v", o1)
	}
	// A new member reads partition 1 again from offset 2.
	again := shareClient(tb, group, topic, &ackErrs)
	seen := map[int64]bool{}
	for len(seen) < 8 {
		fs := again.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("partition 1 again: %v (%v)", seen, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Partition == 1 {
				if r.Offset < 2 {
					t.Errorf("offset %d before the altered start", r.Offset)
				}
				seen[r.Offset] = true
			}
		})
	}
	again.Close()
	if dresp, err := adm.DeleteShareGroupOffsets(ctx, group, topic); err != nil || dresp.Error() != nil {
		t.Fatalf("delete offsets: %v %v", err, dresp.Error())
	}
	offs, err = adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(offs[group].Offsets[topic]); n != 0 {
		t.Fatalf("share-partitions after the delete: %+v", offs[group].Offsets)
	}
	if dresp, err := adm.DeleteGroups(ctx, group); err != nil || dresp[group].Err != nil {
		t.Fatalf("delete the empty group: %+v %v", dresp, err)
	}
	if listed, _ := adm.ListGroupsByType(ctx, []string{"share"}); len(listed.Groups()) != 0 {
		t.Fatalf("share groups after the delete: %v", listed.Groups())
	}
	ackErrs.check(t)
}

// TestShareGroupLagMetrics: the leader of a share-partition exports its
// lag (records up to the high watermark not acknowledged) and start
// offset on /metrics.
func TestShareGroupLagMetrics(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-lag", "workers-lag"
	tb.createTopic(topic, 1, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	produceOnePerBatch(t, tb, topic, 1, 10)
	ctx := testContext(t)
	var ackErrs ackErrors
	cl := shareClient(tb, group, topic, &ackErrs, kgo.ShareMaxRecords(10))
	polled := 0
	for polled < 10 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			polled++
			if r.Offset < 6 {
				r.Ack(kgo.AckAccept)
			} else {
				r.Ack(kgo.AckRelease)
			}
		})
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	ackErrs.check(t)
	labels := `{group="` + group + `",partition="0",topic="` + topic + `"}`
	waitFor(t, 10*time.Second, "share lag series", func() bool {
		got := scrapeSeries(t, tb, "strata_share_group_")
		return got["strata_share_group_lag_records"+labels] == 4 && got["strata_share_group_start_offset"+labels] == 6
	})

	// The lag API answers the same from the admin listener.
	var one struct {
		Group      string `json:"group"`
		State      string `json:"state"`
		Members    int    `json:"members"`
		TotalLag   int64  `json:"total_lag"`
		Partitions []struct {
			Topic        string `json:"topic"`
			Partition    int32  `json:"partition"`
			StartOffset  *int64 `json:"start_offset"`
			LogEndOffset *int64 `json:"log_end_offset"`
			LagRecords   *int64 `json:"lag_records"`
		} `json:"partitions"`
	}
	if code := getAdminJSON(t, tb, "/v1/share-groups/"+group+"/lag", &one); code != http.StatusOK {
		t.Fatalf("GET share lag = %d", code)
	}
	if one.Group != group || one.Members != 1 || one.TotalLag != 4 || len(one.Partitions) != 1 {
		t.Fatalf("share lag = %+v", one)
	}
	if p := one.Partitions[0]; p.Topic != topic || p.Partition != 0 || p.StartOffset == nil || *p.StartOffset != 6 ||
		p.LogEndOffset == nil || *p.LogEndOffset != 10 || p.LagRecords == nil || *p.LagRecords != 4 {
		t.Errorf("share partition lag = %+v", p)
	}
	var list struct {
		Groups []struct {
			Group      string `json:"group"`
			Partitions int    `json:"partitions"`
			TotalLag   int64  `json:"total_lag"`
		} `json:"groups"`
	}
	if code := getAdminJSON(t, tb, "/v1/share-groups", &list); code != http.StatusOK || len(list.Groups) != 1 ||
		list.Groups[0].Group != group || list.Groups[0].Partitions != 1 || list.Groups[0].TotalLag != 4 {
		t.Errorf("GET /v1/share-groups = %d %+v", code, list)
	}
	var notFound struct {
		Error string `json:"error"`
	}
	if code := getAdminJSON(t, tb, "/v1/share-groups/nobody/lag", &notFound); code != http.StatusNotFound || !strings.Contains(notFound.Error, `"nobody"`) {
		t.Errorf("unknown share group = %d %+v", code, notFound)
	}
}

// getAdminJSON GETs path from the admin listener into v; the status code.
func getAdminJSON(t *testing.T, tb *testBroker, path string, v any) int {
	t.Helper()
	resp, err := http.Get("http://" + tb.srv.HTTPAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode
}
