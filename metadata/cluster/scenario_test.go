package cluster

// Scenario tests: testdata/scenarios/*.txt are scripts of metadata records
// and controller decisions (github.com/cockroachdb/datadriven) with the
// output each must give. A record is applied to the state and the command
// prints what changed (brokers, partitions, topics, features), "no
// change", or the rejection. The plan-* commands print the records the
// controller would propose and apply them. Regenerate with
// `go test ./metadata/cluster -run TestScenarios -rewrite` and review the
// diff.
//
// Commands (node ids, partition numbers and times are integers; a replica
// list is written "(1 2 3, 2 3 1)", one entry per partition):
//
//	init-cluster id=
//	register node= inc= [addr=hN:9092] [rack=] [time=0]
//	heartbeat node= inc= time=
//	fence node= | unfence node=
//	shutdown node= inc=                        ControlledShutdown
//	offline node= inc= topic= p=(…)            OfflineReplicas (a failed log dir)
//	create-topic name= [id=] replicas=(…)|partitions= rf= [configs=(k=v,…)]
//	create-partitions topic= replicas=(…)|count=
//	delete-topic name= [id=]
//	alter-configs topic= [configs=(k=v,…)]
//	alter-partition topic= p= pe= [le=-1] isr=(…) [leader=]
//	elect topic= p= [preferred] [unclean]
//	reassign topic= p= [target=(…)]           no target: cancel
//	update-features NAME=LEVEL… [downgrade=(NAME,…)]
//	allocate-pids n=
//	plan-fencing now= [session=9000] | plan-elections | plan-preferred
//	state                                      the whole state
//	snapshot                                   encode the state here
//	check-replay                               replay the log (from empty
//	                                           and from the snapshot)
//
// Every record goes through EncodeRecord and DecodeRecord before it is
// applied, and into the log, rejected ones too (they are in a real raft
// log as well); check-replay asserts that replaying the log rejects the
// same records and reaches the same state.

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/strata-streaming/strata/internal/scenariotest"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		d := &clusterDriver{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return d.run(t, td)
		})
	})
}

// logEntry is one record of the metadata log and whether Apply took it.
type logEntry struct {
	encoded  []byte
	rejected bool
}

type clusterDriver struct {
	s   State
	log []logEntry
	// snap is the encoded state after the first snapAt records.
	snap   []byte
	snapAt int
	out    strings.Builder
}

func (d *clusterDriver) printf(format string, args ...any) { fmt.Fprintf(&d.out, format+"\n", args...) }

func (d *clusterDriver) run(t *testing.T, td *datadriven.TestData) string {
	d.out.Reset()
	switch td.Cmd {
	case "init-cluster":
		d.apply(t, InitCluster{ClusterID: scenariotest.String(t, td, "id", "")})
	case "register":
		node := scenariotest.Int(t, td, "node", -1)
		d.apply(t, RegisterBroker{
			NodeID:        int32(node),
			IncarnationID: scenariotest.String(t, td, "inc", ""),
			Addr:          scenariotest.String(t, td, "addr", fmt.Sprintf("h%d:9092", node)),
			Rack:          scenariotest.String(t, td, "rack", ""),
			TimeMs:        int64(scenariotest.Int(t, td, "time", 0)),
		})
	case "heartbeat":
		d.apply(t, BrokerHeartbeat{NodeID: int32(scenariotest.Int(t, td, "node", -1)), IncarnationID: scenariotest.String(t, td, "inc", ""), TimeMs: int64(scenariotest.Int(t, td, "time", 0))})
	case "fence":
		d.apply(t, FenceBroker{NodeID: int32(scenariotest.Int(t, td, "node", -1))})
	case "unfence":
		d.apply(t, UnfenceBroker{NodeID: int32(scenariotest.Int(t, td, "node", -1))})
	case "shutdown":
		d.apply(t, ControlledShutdown{NodeID: int32(scenariotest.Int(t, td, "node", -1)), IncarnationID: scenariotest.String(t, td, "inc", "")})

	case "offline":
		r := OfflineReplicas{NodeID: int32(scenariotest.Int(t, td, "node", -1)), IncarnationID: scenariotest.String(t, td, "inc", "")}
		topic, _ := d.s.Topic(scenariotest.String(t, td, "topic", ""))
		for _, p := range idsArg(t, td, "p") {
			r.Partitions = append(r.Partitions, ReplicaRef{TopicID: topic.ID, Partition: p})
		}
		d.apply(t, r)

	case "create-topic":
		name := scenariotest.String(t, td, "name", "")
		parts, ok := d.assignments(t, td, "replicas", scenariotest.Int(t, td, "partitions", 0), scenariotest.Int(t, td, "rf", 0))
		if !ok {
			break
		}
		d.apply(t, CreateTopic{Name: name, ID: TopicID{byte(scenariotest.Int(t, td, "id", 1))}, Partitions: parts, Configs: configsArg(t, td)})
	case "create-partitions":
		topic := scenariotest.String(t, td, "topic", "")
		rf := 0
		if tp, ok := d.s.Topic(topic); ok && len(tp.Partitions) > 0 {
			rf = len(tp.Partitions[0].TargetReplicas())
		}
		parts, ok := d.assignments(t, td, "replicas", scenariotest.Int(t, td, "count", 0), rf)
		if !ok {
			break
		}
		d.apply(t, CreatePartitions{Topic: topic, Partitions: parts})
	case "delete-topic":
		r := DeleteTopic{Name: scenariotest.String(t, td, "name", "")}
		if td.HasArg("id") {
			r.ID = TopicID{byte(scenariotest.Int(t, td, "id", 0))}
		}
		d.apply(t, r)
	case "alter-configs":
		d.apply(t, AlterConfigs{Topic: scenariotest.String(t, td, "topic", ""), Configs: configsArg(t, td)})
	case "alter-partition":
		r := AlterPartition{
			Topic:          scenariotest.String(t, td, "topic", ""),
			Partition:      int32(scenariotest.Int(t, td, "p", 0)),
			PartitionEpoch: int32(scenariotest.Int(t, td, "pe", 0)),
			LeaderEpoch:    int32(scenariotest.Int(t, td, "le", -1)),
			NewISR:         idsArg(t, td, "isr"),
		}
		if td.HasArg("leader") {
			l := int32(scenariotest.Int(t, td, "leader", 0))
			r.Leader = &l
		}
		d.apply(t, r)
	case "elect":
		d.apply(t, ElectLeader{Topic: scenariotest.String(t, td, "topic", ""), Partition: int32(scenariotest.Int(t, td, "p", 0)), Preferred: td.HasArg("preferred"), Unclean: td.HasArg("unclean")})
	case "reassign":
		d.apply(t, ReassignPartition{Topic: scenariotest.String(t, td, "topic", ""), Partition: int32(scenariotest.Int(t, td, "p", 0)), Target: idsArg(t, td, "target")})
	case "update-features":
		var r UpdateFeatures
		downgrade := scenariotest.List(td, "downgrade")
		for _, arg := range td.CmdArgs {
			if arg.Key == "downgrade" {
				continue
			}
			level, err := strconv.Atoi(arg.SingleVal(t))
			if err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
			r.Updates = append(r.Updates, FeatureUpdate{Feature: arg.Key, Level: int16(level), Downgrade: slices.Contains(downgrade, arg.Key)})
		}
		d.apply(t, r)
	case "allocate-pids":
		d.apply(t, AllocateProducerIDs{N: int64(scenariotest.Int(t, td, "n", 0))})

	case "plan-fencing":
		d.applyPlan(t, PlanFencing(d.s, int64(scenariotest.Int(t, td, "now", 0)), int64(scenariotest.Int(t, td, "session", 9000))))
	case "plan-elections":
		d.applyPlan(t, PlanElections(d.s))
	case "plan-preferred":
		d.applyPlan(t, PlanPreferredElections(d.s))

	case "state":
		d.printState()
	case "snapshot":
		b, err := d.s.Encode()
		if err != nil {
			t.Fatalf("%s: %v", td.Pos, err)
		}
		d.snap, d.snapAt = b, len(d.log)
		d.printf("snapshot after %d records", d.snapAt)
	case "check-replay":
		d.checkReplay(t, State{}, 0, "from empty")
		if d.snap != nil {
			s, err := DecodeState(d.snap)
			if err != nil {
				t.Fatalf("%s: snapshot: %v", td.Pos, err)
			}
			d.checkReplay(t, s, d.snapAt, fmt.Sprintf("from the snapshot after %d", d.snapAt))
		}
	default:
		t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	}
	if d.out.Len() == 0 {
		return "ok"
	}
	return strings.TrimRight(d.out.String(), "\n")
}

// apply encodes, decodes and applies one record, printing what changed.
func (d *clusterDriver) apply(t *testing.T, rec Record) {
	b, err := EncodeRecord(rec)
	if err != nil {
		t.Fatalf("encode %T: %v", rec, err)
	}
	decoded, err := DecodeRecord(b)
	if err != nil {
		// The record cannot enter the log: the proposer's Validate fails.
		d.printf("invalid: %v", err)
		return
	}
	next, err := Apply(d.s, decoded)
	d.log = append(d.log, logEntry{encoded: b, rejected: err != nil})
	if err != nil {
		if !reflect.DeepEqual(next, d.s) {
			t.Fatalf("rejected %T changed the state", rec)
		}
		d.printf("rejected: %v", err)
		return
	}
	d.printChanges(d.s, next)
	d.s = next
}

func (d *clusterDriver) applyPlan(t *testing.T, recs []Record) {
	if len(recs) == 0 {
		d.printf("nothing to do")
	}
	for _, r := range recs {
		d.printf("propose %s", describeRecord(r))
		d.apply(t, r)
	}
}

func describeRecord(r Record) string {
	switch r := r.(type) {
	case FenceBroker:
		return fmt.Sprintf("fence node=%d", r.NodeID)
	case UnfenceBroker:
		return fmt.Sprintf("unfence node=%d", r.NodeID)
	case ElectLeader:
		s := fmt.Sprintf("elect %s-%d", r.Topic, r.Partition)
		if r.Preferred {
			s += " preferred"
		}
		if r.Unclean {
			s += " unclean"
		}
		return s
	}
	return fmt.Sprintf("%T %+v", r, r)
}

func (d *clusterDriver) checkReplay(t *testing.T, s State, from int, what string) {
	for i, e := range d.log[from:] {
		rec, err := DecodeRecord(e.encoded)
		if err != nil {
			t.Fatalf("record %d does not decode: %v", from+i, err)
		}
		var applyErr error
		s, applyErr = Apply(s, rec)
		if (applyErr != nil) != e.rejected {
			d.printf("replay %s: record %d (%T) rejected=%v, was %v", what, from+i, rec, applyErr != nil, e.rejected)
		}
	}
	// Compare as a snapshot would store them: nil and empty maps alike.
	got, err1 := s.Encode()
	want, err2 := d.s.Encode()
	switch {
	case err1 != nil || err2 != nil:
		t.Fatalf("encode: %v %v", err1, err2)
	case string(got) != string(want):
		d.printf("replay %s: different state\n  got  %s\n  want %s", what, got, want)
	default:
		d.printf("replay %s (%d records): same state", what, len(d.log)-from)
	}
	if !reflect.DeepEqual(s.TopicIDs, d.s.TopicIDs) && (len(s.TopicIDs) > 0 || len(d.s.TopicIDs) > 0) {
		d.printf("replay %s: different topic id index", what)
	}
}

// assignments reads explicit replica lists, or plans count partitions of
// rf replicas when there are none; ok is false when planning failed.
func (d *clusterDriver) assignments(t *testing.T, td *datadriven.TestData, key string, count, rf int) ([]PartitionAssignment, bool) {
	if td.HasArg(key) {
		var out []PartitionAssignment
		for _, v := range scenariotest.List(td, key) {
			var ids []int32
			for _, f := range strings.Fields(v) {
				id, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%s: replica %q: %v", td.Pos, f, err)
				}
				ids = append(ids, int32(id))
			}
			out = append(out, PartitionAssignment{Replicas: ids})
		}
		return out, true
	}
	parts, err := PlanAssignment(d.s, count, rf)
	if err != nil {
		d.printf("plan: %v", err)
		return nil, false
	}
	var desc []string
	for _, p := range parts {
		desc = append(desc, fmt.Sprint(p.Replicas))
	}
	d.printf("planned %s", strings.Join(desc, " "))
	return parts, true
}

func (d *clusterDriver) printChanges(old, next State) {
	changed := false
	if old.ClusterID != next.ClusterID {
		d.printf("cluster id %s", next.ClusterID)
		changed = true
	}
	if old.NextProducerID != next.NextProducerID {
		d.printf("producer ids %d to %d allocated; next %d", old.NextProducerID, next.NextProducerID-1, next.NextProducerID)
		changed = true
	}
	for _, id := range sortedKeys(old.Brokers, next.Brokers) {
		if ob, nb := old.Brokers[id], next.Brokers[id]; !reflect.DeepEqual(ob, nb) {
			d.printf("%s", brokerLine(nb))
			changed = true
		}
	}
	for _, name := range sortedKeys(old.Topics, next.Topics) {
		ot, inOld := old.Topics[name]
		nt, inNew := next.Topics[name]
		switch {
		case !inNew:
			d.printf("topic %s deleted", name)
			changed = true
			continue
		case !inOld:
			d.printf("topic %s created%s", name, configsString(nt.Configs))
			changed = true
		case !maps.Equal(ot.Configs, nt.Configs):
			d.printf("topic %s configs%s", name, configsString(nt.Configs))
			changed = true
		}
		for i, p := range nt.Partitions {
			if i >= len(ot.Partitions) || !reflect.DeepEqual(ot.Partitions[i], p) {
				d.printf("%s", partitionLine(name, i, p))
				changed = true
			}
		}
	}
	if old.FeaturesEpoch != next.FeaturesEpoch {
		d.printf("features epoch %d: %s", next.FeaturesEpoch, featuresString(next.FinalizedFeatures()))
		changed = true
	}
	if !changed {
		d.printf("no change")
	}
}

func (d *clusterDriver) printState() {
	if d.s.ClusterID != "" {
		d.printf("cluster %s", d.s.ClusterID)
	}
	d.printf("next producer id %d", d.s.NextProducerID)
	for _, id := range d.s.BrokerIDs() {
		d.printf("%s", brokerLine(d.s.Brokers[id]))
	}
	for _, name := range d.s.TopicNames() {
		tp := d.s.Topics[name]
		d.printf("topic %s%s", name, configsString(tp.Configs))
		for i, p := range tp.Partitions {
			d.printf("%s", partitionLine(name, i, p))
		}
	}
	d.printf("features epoch %d: %s", d.s.FeaturesEpoch, featuresString(d.s.FinalizedFeatures()))
}

func brokerLine(b Broker) string {
	s := fmt.Sprintf("broker %d: inc=%s addr=%s", b.NodeID, b.IncarnationID, b.Addr)
	if b.Rack != "" {
		s += " rack=" + b.Rack
	}
	s += fmt.Sprintf(" heartbeat=%d", b.LastHeartbeatMs)
	if b.Fenced {
		s += " fenced"
	}
	if b.ShuttingDown {
		s += " shutting-down"
	}
	return s
}

func partitionLine(topic string, i int, p Partition) string {
	s := fmt.Sprintf("%s-%d: replicas=%v isr=%v leader=%d leader-epoch=%d partition-epoch=%d", topic, i, p.Replicas, p.ISR, p.Leader, p.LeaderEpoch, p.PartitionEpoch)
	if len(p.AddingReplicas) > 0 {
		s += fmt.Sprintf(" adding=%v", p.AddingReplicas)
	}
	if len(p.RemovingReplicas) > 0 {
		s += fmt.Sprintf(" removing=%v", p.RemovingReplicas)
	}
	if len(p.OfflineReplicas) > 0 {
		s += fmt.Sprintf(" offline=%v", p.OfflineReplicas)
	}
	return s
}

func configsString(c map[string]string) string {
	if len(c) == 0 {
		return ""
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		kv = append(kv, k+"="+c[k])
	}
	return " (" + strings.Join(kv, ",") + ")"
}

func featuresString(f map[string]int16) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		kv = append(kv, fmt.Sprintf("%s=%d", k, f[k]))
	}
	return strings.Join(kv, " ")
}

func sortedKeys[K int32 | string, V any](a, b map[K]V) []K {
	keys := map[K]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}

func idsArg(t *testing.T, td *datadriven.TestData, key string) []int32 {
	var out []int32
	for _, v := range scenariotest.List(td, key) {
		id, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: %s: %v", td.Pos, key, err)
		}
		out = append(out, int32(id))
	}
	return out
}

func configsArg(t *testing.T, td *datadriven.TestData) map[string]string {
	items := scenariotest.List(td, "configs")
	if items == nil {
		return nil
	}
	out := map[string]string{}
	for _, kv := range items {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("%s: config %q is not key=value", td.Pos, kv)
		}
		out[k] = v
	}
	return out
}
