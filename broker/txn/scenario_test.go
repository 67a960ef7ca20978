package txn

// Scenario tests: testdata/scenarios/*.txt are scripts of transaction
// coordinator requests (github.com/cockroachdb/datadriven) with the output
// each must give: the __transaction_state records the call asks to persist,
// the markers it asks to write, then its result. Regenerate with
// `go test ./broker/txn -run TestScenarios -rewrite` and review the diff.
//
// Commands (times in ms; timestamps print relative to the scenario's start;
// producer ids are allocated from 1001 on):
//
//	config [max-timeout=] [expiration=] [value-version=]   before any call
//	init id= [timeout=60000] [pid= epoch=] [v=4] [alloc=fail]   InitProducerId
//	add id= pid= epoch= parts=(t-0,…) [v=3]          AddPartitionsToTxn
//	verify id= pid= epoch= parts=(t-0,…)             a KIP-890 verify-only add
//	add-offsets id= pid= epoch= [group=g] [partition=0] [v=3]   AddOffsetsToTxn
//	end id= pid= epoch= commit|abort [v=3]           EndTxn
//	complete [id=] [again]     the requested markers are durable: CompleteTxn
//	                           (again: report the last completion once more)
//	tick ms=                   advance the clock and Tick
//	state | describe id= | list [states=(…)] [pids=(…)] [min-duration=]
//	load id= pid= epoch= state= [timeout=] [parts=(…)] [start=] [updated=]
//	                           a record already in the log (as if loaded)
//	restart [epoch=]           a new coordinator loads the log
//
// The log holds every record returned (encoded), so restart replays what a
// new coordinator would read.

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/strata-streaming/strata/internal/scenariotest"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		d := newTxnDriver()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return d.run(t, td)
		})
	})
}

type txnDriver struct {
	cfg     Config
	c       *Coordinator
	start   time.Time
	now     time.Time
	nextPID int64
	log     [][2][]byte // encoded key and value of every record, in order
	// markers are requested and not yet completed; completed are the last
	// completion of each id.
	markers   []Markers
	completed map[string]Markers
	out       strings.Builder
	called    bool
}

func newTxnDriver() *txnDriver {
	d := &txnDriver{cfg: DefaultConfig(), start: time.UnixMilli(1_700_000_000_000), nextPID: 1000, completed: map[string]Markers{}}
	d.now = d.start
	d.c = New(&d.cfg, 3)
	return d
}

func (d *txnDriver) printf(format string, args ...any) { fmt.Fprintf(&d.out, format+"\n", args...) }

func (d *txnDriver) run(t *testing.T, td *datadriven.TestData) string {
	d.out.Reset()
	if td.Cmd != "config" {
		d.called = true
	}
	switch td.Cmd {
	case "config":
		if d.called {
			t.Fatalf("%s: config after the first call", td.Pos)
		}
		if td.HasArg("max-timeout") {
			d.cfg.MaxTimeout = time.Duration(scenariotest.Int(t, td, "max-timeout", 0)) * time.Millisecond
		}
		if td.HasArg("expiration") {
			d.cfg.IDExpiration = time.Duration(scenariotest.Int(t, td, "expiration", 0)) * time.Millisecond
		}
		d.cfg.LogValueVersion = int16(scenariotest.Int(t, td, "value-version", int(d.cfg.LogValueVersion)))
		if err := d.cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", td.Pos, err)
		}
		return "ok"

	case "init":
		req := InitRequest{
			TransactionalID: scenariotest.String(t, td, "id", ""),
			TimeoutMs:       int32(scenariotest.Int(t, td, "timeout", 60_000)),
			ProducerID:      int64(scenariotest.Int(t, td, "pid", -1)),
			ProducerEpoch:   int16(scenariotest.Int(t, td, "epoch", -1)),
			Version:         int16(scenariotest.Int(t, td, "v", 4)),
		}
		alloc := func() (int64, error) {
			d.nextPID++
			return d.nextPID, nil
		}
		if scenariotest.String(t, td, "alloc", "") == "fail" {
			alloc = func() (int64, error) { return 0, fmt.Errorf("no producer id block") }
		}
		res, eff := d.c.InitProducerID(d.now, req, alloc)
		d.effects(eff)
		if res.Err != nil {
			d.printf("init: %s", res.Err.Message)
		} else {
			d.printf("init: pid=%d epoch=%d", res.ProducerID, res.ProducerEpoch)
		}

	case "add", "verify":
		req := AddPartitionsRequest{
			TransactionalID: scenariotest.String(t, td, "id", ""),
			ProducerID:      int64(scenariotest.Int(t, td, "pid", -1)),
			ProducerEpoch:   int16(scenariotest.Int(t, td, "epoch", -1)),
			Version:         int16(scenariotest.Int(t, td, "v", 3)),
		}
		for _, s := range scenariotest.List(td, "parts") {
			req.Partitions = append(req.Partitions, parseTP(t, s))
		}
		var res []PartitionResult
		if td.Cmd == "add" {
			var eff Effects
			res, eff = d.c.AddPartitions(d.now, req)
			d.effects(eff)
		} else {
			res = d.c.VerifyPartitions(req)
		}
		for _, r := range res {
			d.printf("%s %s: %s", td.Cmd, tpString(r.TopicPartition), errName(r.Err))
		}

	case "add-offsets":
		err, eff := d.c.AddOffsets(d.now, AddOffsetsRequest{
			TransactionalID:  scenariotest.String(t, td, "id", ""),
			ProducerID:       int64(scenariotest.Int(t, td, "pid", -1)),
			ProducerEpoch:    int16(scenariotest.Int(t, td, "epoch", -1)),
			GroupID:          scenariotest.String(t, td, "group", "g"),
			OffsetsPartition: int32(scenariotest.Int(t, td, "partition", 0)),
			Version:          int16(scenariotest.Int(t, td, "v", 3)),
		})
		d.effects(eff)
		d.printf("add-offsets: %s", errName(err))

	case "end":
		commit := td.HasArg("commit")
		if commit == td.HasArg("abort") {
			t.Fatalf("%s: end needs commit or abort", td.Pos)
		}
		err, eff := d.c.EndTxn(d.now, EndTxnRequest{
			TransactionalID: scenariotest.String(t, td, "id", ""),
			ProducerID:      int64(scenariotest.Int(t, td, "pid", -1)),
			ProducerEpoch:   int16(scenariotest.Int(t, td, "epoch", -1)),
			Commit:          commit,
			Version:         int16(scenariotest.Int(t, td, "v", 3)),
		})
		d.effects(eff)
		d.printf("end: %s", errName(err))

	case "complete":
		id := scenariotest.String(t, td, "id", "")
		if td.HasArg("again") {
			m, ok := d.completed[id]
			if !ok {
				t.Fatalf("%s: nothing completed for %q", td.Pos, id)
			}
			d.complete(m)
			break
		}
		var keep []Markers
		for _, m := range d.markers {
			if id != "" && m.TransactionalID != id {
				keep = append(keep, m)
				continue
			}
			d.complete(m)
		}
		d.markers = keep

	case "tick":
		d.now = d.now.Add(time.Duration(scenariotest.Int(t, td, "ms", 0)) * time.Millisecond)
		d.effects(d.c.Tick(d.now))
		if next := d.c.NextDeadline(); !next.IsZero() {
			d.printf("next deadline in %dms", next.Sub(d.now).Milliseconds())
		}

	case "state":
		ids := d.c.IDs()
		if len(ids) == 0 {
			d.printf("no transactional ids")
		}
		for _, id := range ids {
			snap, _ := d.c.State(id)
			d.printSnapshot(snap)
		}

	case "describe":
		r := d.c.Describe(scenariotest.String(t, td, "id", ""))
		if r.Err != nil {
			d.printf("describe %s: %s", r.TransactionalID, r.Err.Message)
			break
		}
		d.printf("describe %s: %s pid=%d epoch=%d timeout=%d start=%s partitions=%s",
			r.TransactionalID, r.State, r.ProducerID, r.ProducerEpoch, r.TimeoutMs, d.ts(r.StartTimestamp), tpList(r.Partitions))

	case "list":
		f := ListFilter{States: scenariotest.List(td, "states"), MinDurationMs: int64(scenariotest.Int(t, td, "min-duration", -1))}
		for _, s := range scenariotest.List(td, "pids") {
			pid, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
			f.ProducerIDs = append(f.ProducerIDs, pid)
		}
		res := d.c.List(d.now, f)
		for _, l := range res.Transactions {
			d.printf("%s: %s pid=%d", l.TransactionalID, l.State, l.ProducerID)
		}
		if len(res.UnknownStateFilters) > 0 {
			d.printf("unknown state filters: %s", strings.Join(res.UnknownStateFilters, ","))
		}

	case "load":
		state, ok := ParseState(scenariotest.String(t, td, "state", "Empty"))
		if !ok {
			t.Fatalf("%s: unknown state", td.Pos)
		}
		v := &Value{
			Version:             d.cfg.LogValueVersion,
			ProducerID:          int64(scenariotest.Int(t, td, "pid", -1)),
			ProducerEpoch:       int16(scenariotest.Int(t, td, "epoch", -1)),
			TimeoutMs:           int32(scenariotest.Int(t, td, "timeout", 60_000)),
			State:               state,
			LastUpdateTimestamp: d.now.UnixMilli(),
			StartTimestamp:      -1,
			PreviousProducerID:  NoProducerID, NextProducerID: NoProducerID, NextProducerEpoch: NoProducerEpoch,
		}
		if td.HasArg("start") {
			v.StartTimestamp = d.start.UnixMilli() + int64(scenariotest.Int(t, td, "start", 0))
		}
		if td.HasArg("updated") {
			v.LastUpdateTimestamp = d.start.UnixMilli() + int64(scenariotest.Int(t, td, "updated", 0))
		}
		if parts := scenariotest.List(td, "parts"); parts != nil {
			byTopic := map[string]int{}
			for _, s := range parts {
				tp := parseTP(t, s)
				i, ok := byTopic[tp.Topic]
				if !ok {
					i = len(v.Topics)
					byTopic[tp.Topic] = i
					v.Topics = append(v.Topics, TopicPartitions{Topic: tp.Topic})
				}
				v.Topics[i].Partitions = append(v.Topics[i].Partitions, tp.Partition)
			}
		}
		r := Record{TransactionalID: scenariotest.String(t, td, "id", ""), Value: v}
		d.append(r)
		if err := d.c.Replay(r); err != nil {
			d.printf("load: %v", err)
		}
		return "ok"

	case "restart":
		before := map[string]Snapshot{}
		for _, id := range d.c.IDs() {
			before[id], _ = d.c.State(id)
		}
		d.c = New(&d.cfg, int32(scenariotest.Int(t, td, "epoch", int(d.c.CoordinatorEpoch()+1))))
		for _, kv := range d.log {
			r, err := DecodeRecord(kv[0], kv[1])
			if err != nil {
				t.Fatalf("%s: record in the log does not decode: %v", td.Pos, err)
			}
			if err := d.c.Replay(r); err != nil {
				t.Fatalf("%s: replay: %v", td.Pos, err)
			}
		}
		d.printf("loaded %d records at coordinator epoch %d", len(d.log), d.c.CoordinatorEpoch())
		d.compare(before)
		d.markers = nil
		d.effects(Effects{Markers: d.c.PendingMarkers()})
		for _, id := range d.c.IDs() {
			snap, _ := d.c.State(id)
			d.printSnapshot(snap)
		}

	default:
		t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	}
	if d.out.Len() == 0 {
		return "ok"
	}
	return strings.TrimRight(d.out.String(), "\n")
}

// compare reports where the loaded state differs from the state before
// the restart, but for what the log does not keep (the previous producer
// id and epoch, as in Kafka).
func (d *txnDriver) compare(before map[string]Snapshot) {
	for _, id := range d.c.IDs() {
		snap, _ := d.c.State(id)
		old, ok := before[id]
		snap.LastProducerID, snap.LastProducerEpoch = old.LastProducerID, old.LastProducerEpoch
		if !ok || !reflect.DeepEqual(old, snap) {
			d.printf("loaded %s differs: %+v, was %+v", id, snap, old)
		}
		delete(before, id)
	}
	for _, id := range slices.Sorted(maps.Keys(before)) {
		d.printf("%s was not loaded", id)
	}
}

func (d *txnDriver) complete(m Markers) {
	err, eff := d.c.CompleteTxn(d.now, m)
	d.effects(eff)
	d.printf("complete %s: %s", m.TransactionalID, errName(err))
	d.completed[m.TransactionalID] = m
}

// effects persists records (printing them) and queues the markers.
func (d *txnDriver) effects(e Effects) {
	for _, r := range e.Records {
		d.append(r)
		d.printf("record %s", d.describeRecord(r))
	}
	for _, m := range e.Markers {
		decision := "abort"
		if m.Commit {
			decision = "commit"
		}
		d.printf("markers %s: %s pid=%d epoch=%d coordinator-epoch=%d partitions=%s",
			m.TransactionalID, decision, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, tpList(m.Partitions))
		d.markers = append(d.markers, m)
	}
}

func (d *txnDriver) append(r Record) {
	key, value := EncodeRecord(r)
	d.log = append(d.log, [2][]byte{key, value})
}

// ts prints a timestamp relative to the start (-1 stays -1).
func (d *txnDriver) ts(ms int64) string {
	if ms < 0 {
		return "-1"
	}
	return fmt.Sprintf("%+dms", ms-d.start.UnixMilli())
}

func (d *txnDriver) describeRecord(r Record) string {
	if r.Value == nil {
		return r.TransactionalID + ": tombstone"
	}
	v := r.Value
	s := fmt.Sprintf("%s: %s pid=%d epoch=%d timeout=%d", r.TransactionalID, v.State, v.ProducerID, v.ProducerEpoch, v.TimeoutMs)
	if v.Topics != nil {
		s += " partitions=" + tpList(v.Partitions())
	}
	return s + fmt.Sprintf(" start=%s updated=%s", d.ts(v.StartTimestamp), d.ts(v.LastUpdateTimestamp))
}

func (d *txnDriver) printSnapshot(s Snapshot) {
	line := fmt.Sprintf("%s: %s pid=%d epoch=%d", s.TransactionalID, s.State, s.ProducerID, s.ProducerEpoch)
	// The previous id and epoch matter to KIP-360 retries only.
	if s.LastProducerID != NoProducerID && s.LastProducerID != s.ProducerID {
		line += fmt.Sprintf(" last-pid=%d", s.LastProducerID)
	}
	if s.LastProducerEpoch != NoProducerEpoch {
		line += fmt.Sprintf(" last-epoch=%d", s.LastProducerEpoch)
	}
	line += fmt.Sprintf(" timeout=%d", s.TimeoutMs)
	if len(s.Partitions) > 0 {
		line += " partitions=" + tpList(s.Partitions)
	}
	line += fmt.Sprintf(" start=%s updated=%s", d.ts(s.StartTimestamp), d.ts(s.LastUpdate))
	if s.PendingState != NoState {
		line += " pending=" + s.PendingState.String()
	}
	d.printf("%s", line)
}

func errName(err *kerr.Error) string {
	if err == nil {
		return "OK"
	}
	return err.Message
}

func tpString(tp TopicPartition) string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

func tpList(tps []TopicPartition) string {
	parts := make([]string, 0, len(tps))
	for _, tp := range tps {
		parts = append(parts, tpString(tp))
	}
	return "(" + strings.Join(parts, ",") + ")"
}

func parseTP(t *testing.T, s string) TopicPartition {
	i := strings.LastIndexByte(s, '-')
	p, err := strconv.Atoi(s[i+1:])
	if i <= 0 || err != nil {
		t.Fatalf("%q is not topic-partition", s)
	}
	return TopicPartition{Topic: s[:i], Partition: int32(p)}
}
