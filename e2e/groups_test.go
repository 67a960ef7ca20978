package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// Consumer groups end to end: several members of one group (kcat -G, i.e.
// librdkafka's KafkaConsumer, and kafkajs) share a topic, commit as they go
// and when they close, and a later member of the same group resumes exactly
// at the committed offsets.

const (
	groupWait    = 30 * time.Second // bound for a group to settle or a read to finish
	procStopWait = 15 * time.Second // from a stop signal to the process's exit
)

// groupServer starts a broker that forms groups at once instead of waiting
// Kafka's default 3 s for more members.
func groupServer(t *testing.T) *server {
	t.Helper()
	return startServer(t, "--set", "group.initial.rebalance.delay.ms=0")
}

// lockedBuffer is an io.Writer that can be read while a process writes it.
type lockedBuffer = brokertest.SyncBuffer

// bgProcess is an external command running alongside the test, its output
// readable while it runs. The test's cleanup kills it (by PID) if it is
// still running.
type bgProcess struct {
	t              testing.TB
	name           string // for messages
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan struct{} // closed when the process has exited
	waitErr        error
}

func startBackground(t testing.TB, name, path string, args ...string) *bgProcess {
	t.Helper()
	return startBackgroundEnv(t, name, nil, path, args...)
}

// startBackgroundEnv is startBackground with env (KEY=value) added to the
// inherited environment.
func startBackgroundEnv(t testing.TB, name string, env []string, path string, args ...string) *bgProcess {
	t.Helper()
	p := &bgProcess{t: t, name: name, done: make(chan struct{})}
	p.cmd = exec.Command(path, args...)
	if len(env) > 0 {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s (%s): %v", name, path, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s (pid %d) stderr:\n%s", p.name, p.cmd.Process.Pid, clip(p.stderr.String(), 3000))
		}
	})
	return p
}

func (p *bgProcess) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// lines returns the complete lines the process has printed so far.
func (p *bgProcess) lines() []string {
	out := p.stdout.String()
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		return strings.Split(out[:i], "\n")
	}
	return nil
}

// wait waits up to timeout for the process to exit by itself and returns
// its exit code; the test fails if it does not exit in time.
func (p *bgProcess) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		p.t.Fatalf("%s (pid %d) did not exit within %s; killed it\nstderr:\n%s", p.name, p.cmd.Process.Pid, timeout, clip(p.stderr.String(), 3000))
	}
	var exitErr *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exitErr) {
		p.t.Fatalf("%s (pid %d): %v", p.name, p.cmd.Process.Pid, p.waitErr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// stop sends sig and waits for the process to exit, failing the test unless
// it exits 0 within procStopWait.
func (p *bgProcess) stop(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.t.Fatalf("%v to %s (pid %d): %v", sig, p.name, p.cmd.Process.Pid, err)
	}
	if code := p.wait(procStopWait); code != 0 {
		p.t.Fatalf("%s (pid %d) exited %d after %v, want 0\nstderr:\n%s", p.name, p.cmd.Process.Pid, code, sig, clip(p.stderr.String(), 3000))
	}
}

// waitFor polls cond every 50 ms until it returns true, failing the test
// with the last status cond gave if that takes longer than timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, status := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %s", what, timeout, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGroupBalanced waits until group is Stable with members members that
// split topic's partitions between them, every member owning some.
func waitGroupBalanced(t testing.TB, addr, group, topic string, members, partitions int) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, addr))
	waitFor(t, groupWait, fmt.Sprintf("group %s stable with %d members sharing %d partitions", group, members, partitions), func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false, fmt.Sprintf("DescribeGroups: %v", err)
		}
		d, ok := described[group]
		if !ok || d.Err != nil {
			return false, fmt.Sprintf("DescribeGroups: %v", d.Err)
		}
		owned := map[int32]int{}
		var status []string
		for _, m := range d.Members {
			a, ok := m.Assigned.AsConsumer()
			if !ok {
				return false, fmt.Sprintf("state %s, member %s has no consumer assignment", d.State, m.MemberID)
			}
			var mine []int32
			for _, at := range a.Topics {
				if at.Topic == topic {
					mine = append(mine, at.Partitions...)
				}
			}
			if len(mine) == 0 {
				return false, fmt.Sprintf("state %s, member %s owns no partition", d.State, m.MemberID)
			}
			for _, p := range mine {
				owned[p]++
			}
			status = append(status, fmt.Sprintf("%s:%v", m.MemberID, mine))
		}
		desc := fmt.Sprintf("state %s, %d members %v", d.State, len(d.Members), status)
		if d.State != "Stable" || len(d.Members) != members || len(owned) != partitions {
			return false, desc
		}
		for p, n := range owned {
			if n != 1 || p < 0 || int(p) >= partitions {
				return false, desc + fmt.Sprintf(": partition %d owned by %d members", p, n)
			}
		}
		return true, desc
	})
}

// groupRow is one partition row of `strata group describe`.
type groupRow struct {
	current, logEnd, lag string
}

// describeGroupCLI runs `strata group describe group` and returns the
// state line and topic's partition rows.
func describeGroupCLI(t testing.TB, addr, group, topic string) (header string, rows map[int]groupRow, res cmdResult) {
	t.Helper()
	res = runCmd(t, 30*time.Second, "", strataBin, "group", "describe", group, "-b", addr)
	if res.err != nil || res.exitCode != 0 {
		return "", nil, res
	}
	lines := strings.Split(res.stdout, "\n")
	header = lines[0]
	rows = map[int]groupRow{}
	inTable := false
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && f[0] == "GROUP" && f[3] == "CURRENT-OFFSET" && f[4] == "LOG-END-OFFSET" && f[5] == "LAG":
			inTable = true
		case inTable && len(f) == 0:
			inTable = false
		case inTable && len(f) >= 6 && f[0] == group && f[1] == topic:
			p, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatalf("strata group describe: bad partition in %q", line)
			}
			rows[p] = groupRow{current: f[3], logEnd: f[4], lag: f[5]}
		}
	}
	return header, rows, res
}

// waitCommittedAtEnd polls `strata group describe` until the group has no
// members and, on each of topic's partitions, a committed offset equal to
// the log end offset with lag 0, the log end offsets adding up to total. It
// returns the committed offset of every partition.
func waitCommittedAtEnd(t testing.TB, addr, group, topic string, partitions, total int) map[int]int64 {
	t.Helper()
	var committed map[int]int64
	waitFor(t, groupWait, fmt.Sprintf("group %s committed at the log end of %s", group, topic), func() (bool, string) {
		header, rows, res := describeGroupCLI(t, addr, group, topic)
		if rows == nil {
			return false, res.String()
		}
		if !strings.Contains(header, "Members: 0") {
			return false, "still has members: " + res.stdout
		}
		committed = map[int]int64{}
		sum := 0
		for p := range partitions {
			r, ok := rows[p]
			if !ok {
				return false, fmt.Sprintf("no row for partition %d:\n%s", p, res.stdout)
			}
			cur, err1 := strconv.ParseInt(r.current, 10, 64)
			end, err2 := strconv.ParseInt(r.logEnd, 10, 64)
			if err1 != nil || err2 != nil || cur != end || r.lag != "0" {
				return false, fmt.Sprintf("partition %d: committed %s, log end %s, lag %s:\n%s", p, r.current, r.logEnd, r.lag, res.stdout)
			}
			committed[p] = cur
			sum += int(end)
		}
		if len(rows) != partitions || sum != total {
			return false, fmt.Sprintf("%d rows, log end offsets add up to %d, want %d rows and %d:\n%s", len(rows), sum, partitions, total, res.stdout)
		}
		return true, ""
	})
	return committed
}

// consumed is one record as a group member printed it.
type consumed struct {
	partition int
	offset    int64
	value     string
}

// recordLedger checks what group members printed: each value produced
// (index i named by valueIndex) must have one partition and offset whoever
// printed it, and each member must see every partition's offsets strictly
// increasing.
type recordLedger struct {
	t          *testing.T
	valueIndex func(value string) (int, bool)
	at         map[int]consumed // index -> where it was first seen
	dups       int
}

func newRecordLedger(t *testing.T, valueIndex func(string) (int, bool)) *recordLedger {
	return &recordLedger{t: t, valueIndex: valueIndex, at: map[int]consumed{}}
}

// add checks one member's records and adds them to the ledger.
func (l *recordLedger) add(member string, records []consumed) {
	l.t.Helper()
	last := map[int]int64{}
	for _, r := range records {
		i, ok := l.valueIndex(r.value)
		if !ok {
			l.t.Fatalf("%s printed %d@%d with unexpected value %q", member, r.partition, r.offset, r.value)
		}
		if prev, ok := last[r.partition]; ok && r.offset <= prev {
			l.t.Fatalf("%s printed partition %d offset %d after offset %d", member, r.partition, r.offset, prev)
		}
		last[r.partition] = r.offset
		if seen, ok := l.at[i]; ok {
			if seen.partition != r.partition || seen.offset != r.offset {
				l.t.Fatalf("value %q printed at %d@%d by %s and at %d@%d before", r.value, r.partition, r.offset, member, seen.partition, seen.offset)
			}
			l.dups++
			continue
		}
		l.at[i] = r
	}
}

// complete reports whether every index in [from, to) was seen, and if not
// how many are missing.
func (l *recordLedger) complete(from, to int) (bool, string) {
	missing := 0
	first := -1
	for i := from; i < to; i++ {
		if _, ok := l.at[i]; !ok {
			if first < 0 {
				first = i
			}
			missing++
		}
	}
	return missing == 0, fmt.Sprintf("%d of %d records not consumed yet (first missing: %d)", missing, to-from, first)
}

// checkContiguous checks that the ledger's records fill offsets [0, end[p])
// of every partition exactly once.
func (l *recordLedger) checkContiguous(ends map[int]int64) {
	l.t.Helper()
	perPartition := map[int][]int64{}
	for _, r := range l.at {
		perPartition[r.partition] = append(perPartition[r.partition], r.offset)
	}
	for p, end := range ends {
		offs := perPartition[p]
		slices.Sort(offs)
		if int64(len(offs)) != end || (len(offs) > 0 && (offs[0] != 0 || offs[len(offs)-1] != end-1)) {
			l.t.Fatalf("partition %d: consumed %d distinct records, want offsets 0..%d", p, len(offs), end-1)
		}
	}
}

// kcatGroupMember starts `kcat -G group topic`: librdkafka's KafkaConsumer
// with auto commit (every 5 s, on rebalance and on close), starting
// partitions without a committed offset at the earliest offset. kcat's -o
// is not used: in -G mode it would override the committed offsets.
func kcatGroupMember(t *testing.T, kcat, addr, group, topic, name string) *bgProcess {
	t.Helper()
	return startBackground(t, name, kcat,
		"-b", addr, "-G", group, "-u",
		"-f", `%p %o %s\n`,
		"-X", "auto.offset.reset=earliest",
		"-X", "client.id="+name,
		topic)
}

// kcatConsumed parses the "%p %o %s" lines a kcat member printed.
func kcatConsumed(t *testing.T, p *bgProcess) []consumed {
	t.Helper()
	var out []consumed
	for _, line := range p.lines() {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("%s printed %q, want \"partition offset value\"", p.name, line)
		}
		part, err1 := strconv.Atoi(f[0])
		off, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s printed %q, want \"partition offset value\"", p.name, line)
		}
		out = append(out, consumed{partition: part, offset: off, value: f[2]})
	}
	return out
}

// groupValues returns kcat -P -K: input for records [from, to): key
// gk-<i>, value gv-<i>.
func groupValues(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "gk-%05d:gv-%05d\n", i, i)
	}
	return b.String()
}

func groupValueIndex(value string) (int, bool) {
	s, ok := strings.CutPrefix(value, "gv-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

// TestGroupKcat: three kcat -G members share a 6-partition topic and
// together consume every record; stopped with SIGTERM, they commit on close,
// so the group's committed offsets equal the log end offsets; a fourth
// member started after more records were produced consumes exactly those.
func TestGroupKcat(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	srv := groupServer(t)
	if !supportsConsumerGroups(supportedAPIs(t, srv.addr)) {
		t.Fatal("broker lists no consumer group APIs in ApiVersions")
	}
	const (
		topic      = "groups-kcat"
		group      = "grp-kcat"
		partitions = 6
		n          = 6000 // half before the members start, half once they share the topic
		m          = 600  // for the fourth member
	)
	createTopic(t, srv.addr, topic, partitions)
	produce := func(from, to int) {
		t.Helper()
		// librdkafka's default partitioner hashes the keys across partitions.
		mustRun(t, time.Minute, groupValues(from, to), kcat, "-P", "-b", srv.addr, "-t", topic, "-K", ":", "-X", "linger.ms=5")
	}
	produce(0, n/2)

	start := time.Now()
	var members []*bgProcess
	for i := range 3 {
		members = append(members, kcatGroupMember(t, kcat, srv.addr, group, topic, fmt.Sprintf("kcat-member-%d", i+1)))
	}
	waitGroupBalanced(t, srv.addr, group, topic, 3, partitions)
	t.Logf("3 kcat members balanced after %s", time.Since(start).Round(time.Millisecond))
	produce(n/2, n)

	var ledger *recordLedger
	collect := func() {
		ledger = newRecordLedger(t, groupValueIndex)
		for _, p := range members {
			ledger.add(p.name, kcatConsumed(t, p))
		}
	}
	waitFor(t, groupWait, "3 kcat members consume all records", func() (bool, string) {
		for _, p := range members {
			if !p.running() {
				t.Fatalf("%s exited early (%v):\n%s", p.name, p.waitErr, clip(p.stderr.String(), 3000))
			}
		}
		collect()
		return ledger.complete(0, n)
	})
	t.Logf("3 kcat members consumed all %d records after %s", n, time.Since(start).Round(time.Millisecond))

	// SIGTERM: kcat closes its consumer, which commits what it printed and
	// leaves the group.
	for _, p := range members {
		p.stop(syscall.SIGTERM)
	}
	collect()
	for _, p := range members {
		if len(kcatConsumed(t, p)) == 0 {
			t.Errorf("%s consumed nothing although it owned partitions while records were produced", p.name)
		}
	}
	if ledger.dups > 0 {
		t.Logf("%d records were consumed by more than one member (rebalance overlap)", ledger.dups)
	}
	ends := waitCommittedAtEnd(t, srv.addr, group, topic, partitions, n)
	ledger.checkContiguous(ends)
	t.Logf("committed offsets at the log end after %s: %v", time.Since(start).Round(time.Millisecond), ends)

	// A new member resumes at the committed offsets: it sees the m new
	// records and none of the old ones.
	produce(n, n+m)
	fourth := kcatGroupMember(t, kcat, srv.addr, group, topic, "kcat-member-4")
	var got []consumed
	waitFor(t, groupWait, "the fourth kcat member consumes the new records", func() (bool, string) {
		if !fourth.running() {
			t.Fatalf("%s exited early (%v):\n%s", fourth.name, fourth.waitErr, clip(fourth.stderr.String(), 3000))
		}
		got = kcatConsumed(t, fourth)
		return len(got) >= m, fmt.Sprintf("%d of %d records", len(got), m)
	})
	// Until it has stopped and committed, anything extra it prints is
	// checked below too.
	fourth.stop(syscall.SIGTERM)
	got = kcatConsumed(t, fourth)
	checkResumed(t, fourth.name, got, groupValueIndex, n, m, ends)
	waitCommittedAtEnd(t, srv.addr, group, topic, partitions, n+m)
	t.Logf("fourth member resumed at the committed offsets; total %s", time.Since(start).Round(time.Millisecond))
}

// checkResumed checks that a member that joined after the group committed
// at ends printed exactly records [n, n+m), each once, all at or after the
// committed offset of its partition.
func checkResumed(t *testing.T, member string, got []consumed, valueIndex func(string) (int, bool), n, m int, ends map[int]int64) {
	t.Helper()
	seen := map[int]bool{}
	for _, r := range got {
		i, ok := valueIndex(r.value)
		switch {
		case !ok:
			t.Fatalf("%s printed %d@%d with unexpected value %q", member, r.partition, r.offset, r.value)
		case i < n:
			t.Fatalf("%s printed old record %q at %d@%d: it did not resume at the committed offset %d", member, r.value, r.partition, r.offset, ends[r.partition])
		case i >= n+m:
			t.Fatalf("%s printed record %q that was never produced", member, r.value)
		case seen[i]:
			t.Fatalf("%s printed %q twice", member, r.value)
		case r.offset < ends[r.partition]:
			t.Fatalf("%s printed %q at %d@%d, below the committed offset %d", member, r.value, r.partition, r.offset, ends[r.partition])
		}
		seen[i] = true
	}
	if len(got) != m {
		t.Fatalf("%s printed %d records, want exactly the %d new ones", member, len(got), m)
	}
}

// kafkajsLine is one line group.js prints.
type kafkajsLine struct {
	Type       string             `json:"type"`
	Partition  int                `json:"partition"`
	Offset     string             `json:"offset"`
	Value      string             `json:"value"`
	MemberID   string             `json:"memberId"`
	Assignment map[string][]int32 `json:"assignment"`
	Reason     string             `json:"reason"`
	Count      int                `json:"count"`
	Error      string             `json:"error"`
}

// kafkajsGroupLines parses what group.js printed.
func kafkajsGroupLines(t *testing.T, p *bgProcess) (records []consumed, events []kafkajsLine) {
	t.Helper()
	for _, line := range p.lines() {
		var l kafkajsLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s printed %q: %v", p.name, line, err)
		}
		if l.Type != "message" {
			events = append(events, l)
			continue
		}
		off, err := strconv.ParseInt(l.Offset, 10, 64)
		if err != nil {
			t.Fatalf("%s printed %q: bad offset", p.name, line)
		}
		records = append(records, consumed{partition: l.Partition, offset: off, value: l.Value})
	}
	return records, events
}

// kafkajsGroupMember starts e2e/kafkajs/group.js as a member of group.
func kafkajsGroupMember(t *testing.T, node, addr, topic, group, name string, extra ...string) *bgProcess {
	t.Helper()
	script := filepath.Join(moduleRoot, "e2e", "kafkajs", "group.js")
	return startBackground(t, name, node, append([]string{script, addr, topic, group}, extra...)...)
}

// checkKafkajsDone checks group.js's final line after it exited.
func checkKafkajsDone(t *testing.T, p *bgProcess, events []kafkajsLine, reason string) {
	t.Helper()
	for _, e := range events {
		if e.Type == "crash" {
			t.Logf("%s: kafkajs consumer crashed and restarted: %s", p.name, e.Error)
		}
	}
	if len(events) == 0 || events[len(events)-1].Type != "done" || events[len(events)-1].Reason != reason {
		t.Fatalf("%s: want a final done line with reason %q, got events %+v", p.name, reason, events)
	}
}

// TestGroupKafkajs: two kafkajs group members share a 4-partition topic and
// together consume every record; stopped with SIGTERM they commit and leave;
// a new member then consumes exactly the records produced since.
func TestGroupKafkajs(t *testing.T) {
	t.Parallel()
	node := requireTool(t, "node", "apt-get install -y nodejs npm")
	if _, err := os.Stat(filepath.Join(moduleRoot, "e2e", "kafkajs", "node_modules", "kafkajs", "package.json")); err != nil {
		missingTool(t, "kafkajs", "cd e2e/kafkajs && npm ci")
	}
	srv := groupServer(t)
	if !supportsConsumerGroups(supportedAPIs(t, srv.addr)) {
		t.Fatal("broker lists no consumer group APIs in ApiVersions")
	}
	const (
		topic      = "groups-kafkajs"
		group      = "grp-kafkajs"
		partitions = 4
		n          = 2000 // half before the members start, half once they share the topic
		m          = 500  // for the third member
	)
	createTopic(t, srv.addr, topic, partitions)
	// Uncompressed: franz-go's default, snappy, needs a codec kafkajs lacks.
	cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	produce := func(from, to int) {
		t.Helper()
		records := make([]*kgo.Record, 0, to-from)
		for i := from; i < to; i++ {
			records = append(records, &kgo.Record{
				Partition: int32(i % partitions),
				Key:       fmt.Appendf(nil, "gk-%05d", i),
				Value:     fmt.Appendf(nil, "gv-%05d", i),
			})
		}
		produceSync(t, cl, records...)
	}
	produce(0, n/2)

	start := time.Now()
	members := []*bgProcess{
		kafkajsGroupMember(t, node, srv.addr, topic, group, "kafkajs-member-1"),
		kafkajsGroupMember(t, node, srv.addr, topic, group, "kafkajs-member-2"),
	}
	waitGroupBalanced(t, srv.addr, group, topic, 2, partitions)
	t.Logf("2 kafkajs members balanced after %s", time.Since(start).Round(time.Millisecond))
	produce(n/2, n)

	var ledger *recordLedger
	collect := func() {
		ledger = newRecordLedger(t, groupValueIndex)
		for _, p := range members {
			records, _ := kafkajsGroupLines(t, p)
			ledger.add(p.name, records)
		}
	}
	waitFor(t, groupWait, "2 kafkajs members consume all records", func() (bool, string) {
		for _, p := range members {
			if !p.running() {
				t.Fatalf("%s exited early (%v):\nstdout:\n%s\nstderr:\n%s", p.name, p.waitErr, clip(p.stdout.String(), 2000), clip(p.stderr.String(), 3000))
			}
		}
		collect()
		return ledger.complete(0, n)
	})
	t.Logf("2 kafkajs members consumed all %d records after %s", n, time.Since(start).Round(time.Millisecond))

	for _, p := range members {
		p.stop(syscall.SIGTERM)
	}
	collect()
	for _, p := range members {
		records, events := kafkajsGroupLines(t, p)
		checkKafkajsDone(t, p, events, "signal")
		if len(records) == 0 {
			t.Errorf("%s consumed nothing although it owned partitions while records were produced", p.name)
		}
	}
	if ledger.dups > 0 {
		t.Logf("%d records were consumed by more than one member (rebalance overlap)", ledger.dups)
	}
	ends := waitCommittedAtEnd(t, srv.addr, group, topic, partitions, n)
	ledger.checkContiguous(ends)
	t.Logf("committed offsets at the log end after %s: %v", time.Since(start).Round(time.Millisecond), ends)

	// A new member resumes at the committed offsets. It exits by itself
	// after m records; had it resumed too early, old records would be among
	// them, too late and it would not get m.
	produce(n, n+m)
	third := kafkajsGroupMember(t, node, srv.addr, topic, group, "kafkajs-member-3", "--count", strconv.Itoa(m), "--timeout-ms", "20000")
	if code := third.wait(groupWait + 10*time.Second); code != 0 {
		t.Fatalf("%s exited %d:\nstdout:\n%s\nstderr:\n%s", third.name, code, clip(third.stdout.String(), 2000), clip(third.stderr.String(), 3000))
	}
	got, events := kafkajsGroupLines(t, third)
	checkKafkajsDone(t, third, events, "count")
	checkResumed(t, third.name, got, groupValueIndex, n, m, ends)
	// It committed what it consumed before leaving.
	waitCommittedAtEnd(t, srv.addr, group, topic, partitions, n+m)
	t.Logf("third member resumed at the committed offsets; total %s", time.Since(start).Round(time.Millisecond))
}
