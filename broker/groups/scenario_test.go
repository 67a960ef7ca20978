package groups

// Scenario tests: testdata/scenarios/*.txt are scripts of group coordinator
// requests (github.com/cockroachdb/datadriven) with the output each must
// give. Every command prints the records the call asks to persist, then the
// replies it releases (a JoinGroup or SyncGroup may be answered by a later
// call), then its own result. Regenerate with
// `go test ./broker/groups -run TestScenarios -rewrite` and review the diff.
//
// Commands (group= defaults to g; times are in ms; members get ids
// "<client or instance id>-<n>"):
//
//	config [initial-delay=] [min-session=] [max-session=] [max-size=]
//	       [consumer-session=]              before the first group exists
//	topics NAME=PARTITIONS...               the cluster's topics (KIP-848)
//	join [member=|client=] [instance=] [protocols=(range,…)] [topics=(t,…)]
//	     [type=consumer] [session=10000] [rebalance=30000] [v=9]
//	sync member= gen= [instance=] [assign=(member:bytes,…)] [protocol=]
//	heartbeat member= gen= [instance=]
//	leave [members=(…)] [instance=]         one LeaveGroup
//	commit [member=] [gen=-1] [instance=] offsets=(t-0:10,…)
//	txn-commit pid= epoch= [member=] [gen=-1] [instance=] offsets=(…)
//	txn-marker pid= commit|abort            a marker is durable in the partition
//	fetch [stable] [tps=(t-0,…)]            OffsetFetch
//	delete | delete-offsets tps=(…) | expire retention= | remove-topic topic=
//	consumer-heartbeat member= epoch= [topics=(…)] [regex=] [assignor=]
//	     [instance=] [rebalance=] [owned=(t-0,…)]   (KIP-848)
//	tick ms=                                advance the clock, fire timers
//	state                                   every group
//	restart                                 unload, reload from the log
//
// The driver behaves as the broker does: it creates a group on first use,
// drops one that is Dead or holds nothing after each call, and keeps the
// log of __consumer_offsets (encoded records, transactional batches,
// markers) that restart replays.

import (
	"fmt"
	"slices"
	"sort"
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
		d := newGroupsDriver()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return d.run(t, td)
		})
	})
}

// request is the Caller of one JoinGroup or SyncGroup ("join#3").
type request struct {
	kind string
	seq  int
}

func (r *request) String() string { return fmt.Sprintf("%s#%d", r.kind, r.seq) }

// logEntry is one entry of the __consumer_offsets partition: a record
// outside a transaction (producerID -1), one of a transactional batch, or
// a transaction marker.
type logEntry struct {
	producerID int64
	key, value []byte
	marker     bool
	commit     bool
}

type groupsDriver struct {
	cfg     Config
	start   time.Time
	now     time.Time
	groups  map[string]*Group
	ids     map[string]int // member ids handed out per prefix
	seq     int
	topics  TopicCatalog
	log     []logEntry
	out     strings.Builder
	created bool
}

func newGroupsDriver() *groupsDriver {
	d := &groupsDriver{
		start:  time.UnixMilli(1_700_000_000_000),
		groups: map[string]*Group{},
		ids:    map[string]int{},
		topics: NewTopicCatalog(nil),
	}
	d.now = d.start
	d.cfg = DefaultConfig()
	d.cfg.NewMemberID = func(prefix string) string {
		d.ids[prefix]++
		return fmt.Sprintf("%s-%d", prefix, d.ids[prefix])
	}
	return d
}

func (d *groupsDriver) printf(format string, args ...any) { fmt.Fprintf(&d.out, format+"\n", args...) }

// group returns the named group, creating it as the broker does.
func (d *groupsDriver) group(t *testing.T, td *datadriven.TestData) *Group {
	id := scenariotest.String(t, td, "group", "g")
	g := d.groups[id]
	if g == nil {
		g = New(id, &d.cfg, d.now)
		d.groups[id] = g
		d.created = true
	}
	return g
}

func (d *groupsDriver) run(t *testing.T, td *datadriven.TestData) string {
	d.out.Reset()
	switch td.Cmd {
	case "config":
		if d.created {
			t.Fatalf("%s: config after the first group", td.Pos)
		}
		ms := func(key string, dst *time.Duration) {
			if td.HasArg(key) {
				var v int64
				td.ScanArgs(t, key, &v)
				*dst = time.Duration(v) * time.Millisecond
			}
		}
		ms("initial-delay", &d.cfg.InitialRebalanceDelay)
		ms("min-session", &d.cfg.MinSessionTimeout)
		ms("max-session", &d.cfg.MaxSessionTimeout)
		ms("consumer-session", &d.cfg.ConsumerSessionTimeout)
		td.MaybeScanArgs(t, "max-size", &d.cfg.MaxSize)
		return "ok"

	case "topics":
		var infos []TopicInfo
		for i, arg := range td.CmdArgs {
			n, err := strconv.Atoi(arg.SingleVal(t))
			if err != nil {
				t.Fatalf("%s: %v", td.Pos, err)
			}
			infos = append(infos, TopicInfo{ID: [16]byte{byte(i + 1)}, Name: arg.Key, Partitions: int32(n)})
		}
		d.topics = NewTopicCatalog(infos)
		return "ok"

	case "join":
		g := d.group(t, td)
		req := JoinRequest{
			MemberID:       scenariotest.String(t, td, "member", ""),
			InstanceID:     optStringArg(t, td, "instance"),
			ClientID:       scenariotest.String(t, td, "client", "c"),
			ClientHost:     "/10.0.0.1",
			SessionTimeout: msArg(t, td, "session", 10_000),
			ProtocolType:   scenariotest.String(t, td, "type", ConsumerProtocolType),
		}
		req.RebalanceTimeout = msArg(t, td, "rebalance", 30_000)
		version := scenariotest.Int(t, td, "v", 9)
		req.RequireKnownMemberID = version >= 4
		req.SupportsSkipAssignment = version >= 9
		meta := consumerMeta(listArg(t, td, "topics", []string{"t"})...)
		for _, name := range listArg(t, td, "protocols", []string{"range"}) {
			req.Protocols = append(req.Protocols, Protocol{Name: name, Metadata: meta})
		}
		caller := d.newRequest("join")
		d.pending(caller, d.effects(g.Join(d.now, req, caller)))

	case "sync":
		g := d.group(t, td)
		req := SyncRequest{
			MemberID:   scenariotest.String(t, td, "member", ""),
			InstanceID: optStringArg(t, td, "instance"),
			Generation: int32(scenariotest.Int(t, td, "gen", -1)),
			Protocol:   optStringArg(t, td, "protocol"),
		}
		for _, a := range listArg(t, td, "assign", nil) {
			member, bytes, ok := strings.Cut(a, ":")
			if !ok {
				t.Fatalf("%s: assignment %q is not member:bytes", td.Pos, a)
			}
			req.Assignments = append(req.Assignments, Assignment{MemberID: member, Assignment: []byte(bytes)})
		}
		caller := d.newRequest("sync")
		d.pending(caller, d.effects(g.Sync(d.now, req, caller)))

	case "heartbeat":
		g := d.group(t, td)
		err, eff := g.Heartbeat(d.now, scenariotest.String(t, td, "member", ""), optStringArg(t, td, "instance"), int32(scenariotest.Int(t, td, "gen", -1)))
		d.effects(eff)
		d.printf("heartbeat: %s", errName(err))

	case "leave":
		g := d.group(t, td)
		var leaving []LeaveMember
		for _, id := range listArg(t, td, "members", nil) {
			leaving = append(leaving, LeaveMember{MemberID: id})
		}
		if inst := optStringArg(t, td, "instance"); inst != nil {
			leaving = append(leaving, LeaveMember{InstanceID: inst})
		}
		errs, eff := g.Leave(d.now, leaving)
		d.effects(eff)
		for i, lm := range leaving {
			who := lm.MemberID
			if lm.InstanceID != nil {
				who = "instance " + *lm.InstanceID
			}
			d.printf("leave %s: %s", who, errName(errs[i]))
		}

	case "commit":
		g := d.group(t, td)
		req := CommitRequest{
			MemberID:   scenariotest.String(t, td, "member", ""),
			InstanceID: optStringArg(t, td, "instance"),
			Generation: int32(scenariotest.Int(t, td, "gen", -1)),
			Offsets:    d.offsetsArg(t, td),
		}
		err, eff := g.Commit(d.now, req)
		d.effects(eff)
		d.printf("commit: %s", errName(err))

	case "txn-commit":
		g := d.group(t, td)
		req := TxnCommitRequest{
			ProducerID:      int64(scenariotest.Int(t, td, "pid", -1)),
			ProducerEpoch:   int16(scenariotest.Int(t, td, "epoch", 0)),
			GenerationID:    int32(scenariotest.Int(t, td, "gen", -1)),
			MemberID:        scenariotest.String(t, td, "member", ""),
			GroupInstanceID: optStringArg(t, td, "instance"),
			Offsets:         d.offsetsArg(t, td),
		}
		errs, txnRecords, eff := g.TxnCommit(d.now, req)
		d.effects(eff)
		for _, r := range txnRecords {
			d.append(req.ProducerID, r)
			d.printf("txn record (pid %d): %s", req.ProducerID, describeRecord(r))
		}
		for i := 1; i < len(errs); i++ {
			if errs[i] != errs[0] {
				t.Fatalf("%s: partitions answered differently: %v", td.Pos, errs)
			}
		}
		d.printf("txn-commit: %s", errName(errs[0]))

	case "txn-marker":
		pid := int64(scenariotest.Int(t, td, "pid", -1))
		commit := td.HasArg("commit")
		if commit == td.HasArg("abort") {
			t.Fatalf("%s: txn-marker needs commit or abort", td.Pos)
		}
		d.log = append(d.log, logEntry{producerID: pid, marker: true, commit: commit})
		for _, id := range d.groupIDs() {
			if g := d.groups[id]; g.HasPendingTxnOffsetsFrom(pid) {
				d.printf("completing pid %d in %s", pid, id)
				d.effects(g.CompleteTxnOffsets(d.now, pid, commit))
			}
		}

	case "fetch":
		g := d.group(t, td)
		var tps []TopicPartition
		for _, s := range listArg(t, td, "tps", nil) {
			tps = append(tps, parseTP(t, s))
		}
		for _, f := range g.FetchOffsets(tps, td.HasArg("stable")) {
			if f.Err != nil {
				d.printf("%s: %s", tpString(f.TopicPartition), f.Err.Message)
				continue
			}
			d.printf("%s: %d", tpString(f.TopicPartition), f.Offset)
		}

	case "delete":
		g := d.group(t, td)
		err, eff := g.Delete(d.now)
		d.effects(eff)
		d.printf("delete: %s", errName(err))

	case "delete-offsets":
		g := d.group(t, td)
		var tps []TopicPartition
		for _, s := range listArg(t, td, "tps", nil) {
			tps = append(tps, parseTP(t, s))
		}
		err, errs, eff := g.DeleteOffsets(d.now, tps)
		d.effects(eff)
		d.printf("delete-offsets: %s", errName(err))
		for i, e := range errs {
			d.printf("  %s: %s", tpString(tps[i]), errName(e))
		}

	case "expire":
		g := d.group(t, td)
		d.effects(g.ExpireOffsets(d.now, msArg(t, td, "retention", 0)))

	case "remove-topic":
		g := d.group(t, td)
		d.effects(g.RemoveTopicOffsets(d.now, scenariotest.String(t, td, "topic", "")))

	case "consumer-heartbeat":
		g := d.group(t, td)
		req := ConsumerHeartbeatRequest{
			MemberID:             scenariotest.String(t, td, "member", ""),
			MemberEpoch:          int32(scenariotest.Int(t, td, "epoch", 0)),
			InstanceID:           optStringArg(t, td, "instance"),
			RebalanceTimeout:     -1,
			SubscribedTopicRegex: optStringArg(t, td, "regex"),
			ServerAssignor:       optStringArg(t, td, "assignor"),
			ClientID:             "c",
			ClientHost:           "/10.0.0.1",
		}
		if td.HasArg("rebalance") {
			req.RebalanceTimeout = msArg(t, td, "rebalance", 0)
		}
		if td.HasArg("topics") {
			req.SubscribedTopicNames = listArg(t, td, "topics", nil)
			if req.SubscribedTopicNames == nil {
				req.SubscribedTopicNames = []string{}
			}
		}
		if td.HasArg("owned") {
			req.Owned = d.ownedArg(t, listArg(t, td, "owned", nil))
		}
		res, eff := g.ConsumerHeartbeat(d.now, req, d.topics)
		d.effects(eff)
		line := fmt.Sprintf("consumer-heartbeat: %s member=%s epoch=%d", errName(res.Err), res.MemberID, res.MemberEpoch)
		if res.Err == nil && res.Assignment != nil {
			line += " assignment=" + flatTopicPartitions(res.Assignment)
		}
		d.printf("%s", line)

	case "tick":
		d.now = d.now.Add(msArg(t, td, "ms", 0))
		for _, id := range d.groupIDs() {
			d.effects(d.groups[id].Tick(d.now))
		}

	case "state":
		ids := d.groupIDs()
		if len(ids) == 0 {
			d.printf("no groups")
		}
		for _, id := range ids {
			d.printState(d.groups[id])
		}
		return d.result()

	case "restart":
		for _, id := range d.groupIDs() {
			d.effects(d.groups[id].Unload())
		}
		d.groups = d.load(t)
		d.printf("loaded %d records", len(d.log))
		for _, id := range d.groupIDs() {
			d.printState(d.groups[id])
		}
		return d.result()

	default:
		t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	}
	d.dropGone()
	return d.result()
}

func (d *groupsDriver) result() string {
	if d.out.Len() == 0 {
		return "ok"
	}
	return strings.TrimRight(d.out.String(), "\n")
}

func (d *groupsDriver) newRequest(kind string) *request {
	d.seq++
	return &request{kind: kind, seq: d.seq}
}

// pending notes a request that was not answered by its own call.
func (d *groupsDriver) pending(caller *request, answered []Caller) {
	if !slices.Contains(answered, Caller(caller)) {
		d.printf("%s: waiting", caller)
	}
}

// effects persists the records (printing them), then prints the replies
// and returns whom they answer.
func (d *groupsDriver) effects(e Effects) (answered []Caller) {
	for _, r := range e.Records {
		d.append(-1, r)
		d.printf("record: %s", describeRecord(r))
	}
	for _, r := range e.Replies {
		switch {
		case r.Join != nil:
			d.printf("%s: %s", r.To, describeJoin(*r.Join))
		case r.Sync != nil:
			d.printf("%s: %s", r.To, describeSync(*r.Sync))
		}
		answered = append(answered, r.To)
	}
	return answered
}

func (d *groupsDriver) append(producerID int64, r Record) {
	key, value := EncodeRecord(r)
	d.log = append(d.log, logEntry{producerID: producerID, key: key, value: value})
}

// dropGone forgets groups that are Dead or hold nothing, as the broker does.
func (d *groupsDriver) dropGone() {
	for _, id := range d.groupIDs() {
		g := d.groups[id]
		switch {
		case g.State() == Dead:
			d.printf("group %s dropped: Dead", id)
		case g.IsPristine():
		default:
			continue
		}
		delete(d.groups, id)
	}
}

// load replays the log into fresh groups, as a new coordinator does.
func (d *groupsDriver) load(t *testing.T) map[string]*Group {
	gs := map[string]*Group{}
	get := func(id string) *Group {
		if gs[id] == nil {
			gs[id] = New(id, &d.cfg, d.now)
		}
		return gs[id]
	}
	for _, e := range d.log {
		if e.marker {
			for _, g := range gs {
				g.ReplayTxnMarker(e.producerID, e.commit)
			}
			continue
		}
		r, known, err := DecodeRecord(e.key, e.value)
		if err != nil || !known {
			t.Fatalf("record in the log does not decode: known %v, %v", known, err)
		}
		if e.producerID >= 0 && r.IsOffset {
			get(r.Group).ReplayTxnOffset(e.producerID, r.TopicPartition, r.Offset)
			continue
		}
		get(r.Group).Replay(d.now, r)
	}
	for id, g := range gs {
		if g.State() == Dead || g.IsPristine() {
			delete(gs, id)
		}
	}
	return gs
}

func (d *groupsDriver) groupIDs() []string {
	ids := make([]string, 0, len(d.groups))
	for id := range d.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (d *groupsDriver) printState(g *Group) {
	s := g.Snapshot()
	if cg, ok := g.DescribeConsumer(); ok {
		d.printf("%s: consumer group %s epoch=%d assignment-epoch=%d assignor=%s", g.ID(), cg.State, cg.GroupEpoch, cg.AssignmentEpoch, cg.Assignor)
		for _, m := range cg.Members {
			cm := g.consumer.members[m.MemberID]
			line := fmt.Sprintf("  member %s epoch=%d", m.MemberID, m.MemberEpoch)
			if m.InstanceID != nil {
				line += " instance=" + *m.InstanceID
			}
			line += fmt.Sprintf(" %s assigned=%s", [...]string{"stable", "unrevoked", "unreleased"}[cm.state], tpList(m.Assignment))
			if len(cm.revoking) > 0 {
				line += " revoking=" + tpList(sortedSet(cm.revoking))
			}
			line += " target=" + tpList(m.TargetAssignment)
			d.printf("%s", line)
		}
	} else {
		line := fmt.Sprintf("%s: %s gen=%d", g.ID(), s.StateName, s.Generation)
		if s.ProtocolType != "" {
			line += " type=" + s.ProtocolType
		}
		if s.Protocol != "" {
			line += " protocol=" + s.Protocol
		}
		if s.Leader != "" {
			line += " leader=" + s.Leader
		}
		d.printf("%s", line)
		for _, m := range s.Members {
			line := "  member " + m.MemberID
			if m.InstanceID != nil {
				line += " instance=" + *m.InstanceID
			}
			if len(m.Assignment) > 0 {
				line += fmt.Sprintf(" assignment=%s", m.Assignment)
			}
			mm := g.members[m.MemberID]
			if mm.awaitingJoin {
				line += " awaiting-join"
			}
			if mm.awaitingSync {
				line += " awaiting-sync"
			}
			d.printf("%s", line)
		}
		pending := slices.Sorted(func(yield func(string) bool) {
			for id := range g.pendingMembers {
				if !yield(id) {
					return
				}
			}
		})
		for _, id := range pending {
			d.printf("  pending member %s", id)
		}
	}
	for _, o := range s.Offsets {
		d.printf("  offset %s=%d committed@%dms", tpString(o.TopicPartition), o.Offset, o.CommitTimestamp-d.start.UnixMilli())
	}
	for _, pid := range g.PendingTxnProducers() {
		pending := g.pendingTxnOffsets[pid]
		tps := make([]TopicPartition, 0, len(pending))
		for tp := range pending {
			tps = append(tps, tp)
		}
		sortTopicPartitions(tps)
		var parts []string
		for _, tp := range tps {
			parts = append(parts, fmt.Sprintf("%s=%d", tpString(tp), pending[tp].Offset))
		}
		d.printf("  pending txn offsets (pid %d): %s", pid, strings.Join(parts, " "))
	}
	if next := g.NextDeadline(); !next.IsZero() {
		d.printf("  next deadline in %dms", next.Sub(d.now).Milliseconds())
	}
}

func describeJoin(r JoinResult) string {
	if r.Err != nil {
		return fmt.Sprintf("%s member=%s", r.Err.Message, r.MemberID)
	}
	s := fmt.Sprintf("gen=%d member=%s leader=%s protocol=%s", r.Generation, r.MemberID, r.LeaderID, r.Protocol)
	if r.SkipAssignment {
		s += " skip-assignment"
	}
	if len(r.Members) > 0 {
		var ids []string
		for _, m := range r.Members {
			ids = append(ids, m.MemberID)
		}
		s += " members=(" + strings.Join(ids, ",") + ")"
	}
	return s
}

func describeSync(r SyncResult) string {
	if r.Err != nil {
		return r.Err.Message
	}
	return fmt.Sprintf("assignment=%q protocol=%s", r.Assignment, r.Protocol)
}

func describeRecord(r Record) string {
	switch {
	case r.IsOffset:
		if r.Offset == nil {
			return fmt.Sprintf("%s offset %s tombstone", r.Group, tpString(r.TopicPartition))
		}
		return fmt.Sprintf("%s offset %s=%d", r.Group, tpString(r.TopicPartition), r.Offset.Offset)
	case r.IsConsumerGroup:
		if r.ConsumerGroup == nil {
			return fmt.Sprintf("%s consumer group tombstone", r.Group)
		}
		return fmt.Sprintf("%s consumer group epoch=%d assignment-epoch=%d", r.Group, r.ConsumerGroup.GroupEpoch, r.ConsumerGroup.AssignmentEpoch)
	case r.IsConsumerMember:
		if r.ConsumerMember == nil {
			return fmt.Sprintf("%s consumer member %s tombstone", r.Group, r.MemberID)
		}
		m := r.ConsumerMember
		s := fmt.Sprintf("%s consumer member %s epoch=%d assigned=%s", r.Group, r.MemberID, m.Epoch, tpList(m.Assigned))
		if len(m.Revoking) > 0 {
			s += " revoking=" + tpList(m.Revoking)
		}
		return s + " target=" + tpList(m.Target)
	case r.Metadata == nil:
		return fmt.Sprintf("%s metadata tombstone", r.Group)
	}
	md := r.Metadata
	s := fmt.Sprintf("%s metadata gen=%d", r.Group, md.Generation)
	if md.Protocol != "" {
		s += " protocol=" + md.Protocol
	}
	if md.Leader != "" {
		s += " leader=" + md.Leader
	}
	var members []string
	for _, m := range md.Members {
		members = append(members, fmt.Sprintf("%s:%q", m.MemberID, m.Assignment))
	}
	return s + " members=(" + strings.Join(members, ",") + ")"
}

func errName(err *kerr.Error) string {
	if err == nil {
		return "OK"
	}
	return err.Message
}

func tpString(tp TopicPartition) string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

func tpList(tps []TopicPartition) string {
	var parts []string
	for _, tp := range tps {
		parts = append(parts, tpString(tp))
	}
	return "(" + strings.Join(parts, ",") + ")"
}

func flatTopicPartitions(ts []TopicPartitions) string {
	var tps []TopicPartition
	for _, t := range ts {
		for _, p := range t.Partitions {
			tps = append(tps, TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return tpList(tps)
}

func parseTP(t *testing.T, s string) TopicPartition {
	i := strings.LastIndexByte(s, '-')
	p, err := strconv.Atoi(s[i+1:])
	if i <= 0 || err != nil {
		t.Fatalf("%q is not topic-partition", s)
	}
	return TopicPartition{Topic: s[:i], Partition: int32(p)}
}

// ownedArg turns "t-0" items into the heartbeat's owned partitions, named
// by topic id as clients send them.
func (d *groupsDriver) ownedArg(t *testing.T, items []string) []TopicPartitions {
	out := []TopicPartitions{}
	for _, s := range items {
		tp := parseTP(t, s)
		if n := len(out); n > 0 && out[n-1].TopicID == d.topics.ByName[tp.Topic].ID {
			out[n-1].Partitions = append(out[n-1].Partitions, tp.Partition)
			continue
		}
		out = append(out, TopicPartitions{TopicID: d.topics.ByName[tp.Topic].ID, Partitions: []int32{tp.Partition}})
	}
	return out
}

// offsetsArg parses offsets=(t-0:10,…) into commits made now.
func (d *groupsDriver) offsetsArg(t *testing.T, td *datadriven.TestData) []CommitOffset {
	var out []CommitOffset
	for _, s := range listArg(t, td, "offsets", nil) {
		tp, off, ok := strings.Cut(s, ":")
		n, err := strconv.ParseInt(off, 10, 64)
		if !ok || err != nil {
			t.Fatalf("%s: offset %q is not topic-partition:offset", td.Pos, s)
		}
		out = append(out, CommitOffset{TopicPartition: parseTP(t, tp), OffsetAndMetadata: OffsetAndMetadata{
			Offset: n, LeaderEpoch: -1, CommitTimestamp: d.now.UnixMilli(), ExpireTimestamp: -1,
		}})
	}
	return out
}

// Argument helpers shared by the driver.

func optStringArg(t *testing.T, td *datadriven.TestData, key string) *string {
	if !td.HasArg(key) {
		return nil
	}
	s := scenariotest.String(t, td, key, "")
	return &s
}

func msArg(t *testing.T, td *datadriven.TestData, key string, def int) time.Duration {
	return time.Duration(scenariotest.Int(t, td, key, def)) * time.Millisecond
}

// listArg reads key=(a,b,…); key=() is an empty list.
func listArg(_ *testing.T, td *datadriven.TestData, key string, def []string) []string {
	if !td.HasArg(key) {
		return def
	}
	if l := scenariotest.List(td, key); len(l) > 0 {
		return l
	}
	return nil
}
