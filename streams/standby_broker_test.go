package streams_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// countingTopology counts <app>-in's records per key into <app>-out (store
// per-key).
func countingTopology(app string) *streams.Topology {
	top := streams.NewTopology()
	streams.From(top, streams.String, streams.String, []string{app + "-in"}).
		GroupByKey(streams.String, streams.String).Count(streams.Named("per-key")).
		ToStream().To(app+"-out", streams.String, streams.Int64)
	return top
}

// failover is what one run of the scaling scenario measured on the two
// surviving instances when the third was killed.
type failover struct {
	changelog       int64 // changelog records of the killed instance's tasks
	restored        uint64
	restores        uint64
	restoreTime     time.Duration
	recovered       time.Duration // from the kill to every count exact
	standbyRecords  uint64
	killedPartition []int32
}

// TestStandbysMakeFailoverRestoreOnlyTheTail: two exactly-once instances
// of a counting App share six partitions; a third (a child process) joins
// and the group leader gives each instance two tasks; most of the input
// arrives then; the third is killed with SIGKILL and the survivors take its
// tasks over. The final counts equal a reference computation (in sequence,
// nothing counted twice), and with NumStandbyReplicas(1) the survivors
// restore a small fraction of the killed tasks' changelogs (the standbys
// had the rest), where the same run without standbys restores most of it.
func TestStandbysMakeFailoverRestoreOnlyTheTail(t *testing.T) {
	b := startBroker(t)
	with := runFailover(t, b.Addr, 1)
	without := runFailover(t, b.Addr, 0)
	for _, r := range []struct {
		name string
		f    failover
	}{{"with 1 standby", with}, {"without standbys", without}} {
		t.Logf("%s: killed tasks %v with %d changelog records; takeover restored %d records in %d restores taking %v; counts exact %v after the kill; standby records applied by the survivors %d",
			r.name, r.f.killedPartition, r.f.changelog, r.f.restored, r.f.restores, r.f.restoreTime, r.f.recovered, r.f.standbyRecords)
	}
	if with.restored*10 > uint64(with.changelog) {
		t.Errorf("with standbys the takeover restored %d of the killed tasks' %d changelog records, want at most a tenth", with.restored, with.changelog)
	}
	if without.restored*2 < uint64(without.changelog) {
		t.Errorf("without standbys the takeover restored %d of the killed tasks' %d changelog records, want at least half", without.restored, without.changelog)
	}
	if with.standbyRecords == 0 || without.standbyRecords != 0 {
		t.Errorf("standby records applied: %d with standbys, %d without", with.standbyRecords, without.standbyRecords)
	}
}

func runFailover(t *testing.T, addr string, standbys int) failover {
	app := fmt.Sprintf("failover-%d", standbys)
	in, out := app+"-in", app+"-out"
	createTopic(t, addr, in, 6)
	const keys, first, second, third = 3000, 3000, 24000, 3000
	record := func(i int) *kgo.Record {
		return &kgo.Record{Topic: in, Key: fmt.Appendf(nil, "k%04d", i%keys), Value: []byte("x")}
	}
	expected := func(n int) map[string]int64 {
		counts := map[string]int64{}
		for i := range n {
			counts[fmt.Sprintf("k%04d", i%keys)]++
		}
		return counts
	}
	produce := func(from, to int) {
		t.Helper()
		if err := produceEach(addr, from, to, record); err != nil {
			t.Fatal(err)
		}
	}
	newApp := func(instance string) *streams.App {
		a, err := streams.NewApp(countingTopology(app), streams.Brokers(addr), streams.ApplicationID(app),
			streams.InstanceID(instance), streams.StateDir(t.TempDir()), streams.WithGuarantee(streams.ExactlyOnceV2),
			streams.NumStandbyReplicas(standbys), streams.CommitInterval(200*time.Millisecond),
			streams.TransactionTimeout(4*time.Second),
			streams.ClientOpts(kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond),
				kgo.RebalanceTimeout(10*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		runApp(t, a)
		return a
	}
	results := newWindowResults(t, addr, out, out)
	survivors := []*streams.App{newApp("a"), newApp("b")}
	before := groupAssignment(t, addr, app, in, []int{3, 3})
	produce(0, first)
	results.until(t, expected(first), map[string]int64{}, 60*time.Second)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelperBrokers+"="+addr, envHelperGuarantee+"=exactly_once",
		envHelperInstance+"=c", envHelperApp+"="+app, envHelperStateDir+"="+t.TempDir(),
		envHelperStandbys+"="+strconv.Itoa(standbys))
	logFile, err := os.Create(filepath.Join(t.TempDir(), "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	spread := groupAssignment(t, addr, app, in, []int{2, 2, 2})
	var victim []int32
	for member, ps := range spread {
		if _, old := before[member]; !old {
			victim = ps
		}
	}
	if len(victim) != 2 {
		t.Fatalf("the third instance holds %v; assignment before %v, after %v", victim, before, spread)
	}
	produce(first, first+second)
	results.until(t, expected(first+second), map[string]int64{}, 90*time.Second)
	if standbys > 0 {
		waitStandbysCaughtUp(t, survivors)
	}

	ends := changelogEnds(t, addr, app+"-per-key-changelog")
	f := failover{killedPartition: victim}
	for _, p := range victim {
		f.changelog += ends[p]
	}
	var restored, restores uint64
	var restoreTime time.Duration
	for _, s := range survivors {
		st := s.Stats()
		restored, restores, restoreTime = restored+st.RestoredRecords, restores+st.Restores, restoreTime+st.RestoreTime
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	killedAt := time.Now()
	groupAssignment(t, addr, app, in, []int{3, 3})
	produce(first+second, first+second+third)
	results.until(t, expected(first+second+third), map[string]int64{}, 90*time.Second)
	f.recovered = time.Since(killedAt)
	if results.outOfSequence != 0 {
		t.Errorf("%s: %d count updates out of sequence (counted twice or lost)", app, results.outOfSequence)
	}
	for _, s := range survivors {
		st := s.Stats()
		if st.RestoreRemaining != 0 {
			t.Errorf("%s: a survivor shows %d offsets left to restore after the takeover, want 0", app, st.RestoreRemaining)
		}
		f.restored += st.RestoredRecords
		f.restores += st.Restores
		f.restoreTime += st.RestoreTime
		f.standbyRecords += st.StandbyRecords
	}
	f.restored -= restored
	f.restores -= restores
	f.restoreTime -= restoreTime
	return f
}

// groupAssignment waits until the group is stable with one member per
// entry of want, the members holding want's partition counts of topic (in
// any order), and returns each member's partitions.
func groupAssignment(t *testing.T, addr, group, topic string, want []int) map[string][]int32 {
	t.Helper()
	wantCounts := map[int]int{}
	for _, n := range want {
		wantCounts[n]++
	}
	var got map[string][]int32
	describeUntil(t, addr, group, fmt.Sprintf("%d members holding %v partitions of %s", len(want), want, topic), func(g kadm.DescribedGroup) bool {
		got = map[string][]int32{}
		counts := map[int]int{}
		for _, m := range g.Members {
			if c, ok := m.Assigned.AsConsumer(); ok {
				for _, tp := range c.Topics {
					if tp.Topic == topic {
						got[m.MemberID] = append(got[m.MemberID], tp.Partitions...)
					}
				}
			}
			counts[len(got[m.MemberID])]++
		}
		return len(g.Members) == len(want) && fmt.Sprint(counts) == fmt.Sprint(wantCounts)
	})
	return got
}

// describeUntil describes group until it is stable and ok holds, for at
// most a minute.
func describeUntil(t *testing.T, addr, group, what string, ok func(kadm.DescribedGroup) bool) {
	t.Helper()
	adm := adminClient(t, addr)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		groups, err := adm.DescribeGroups(ctx, group)
		cancel()
		g := groups[group]
		if err == nil && g.Err == nil && g.State == "Stable" && ok(g) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: state %q, %d members, err %v %v; want %s", group, g.State, len(g.Members), err, g.Err, what)
		}
		time.Sleep(50 * time.Millisecond) // no notification of group changes
	}
}

// adminClient is an admin client of the broker at addr, closed with the
// test.
func adminClient(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// waitStandbysCaughtUp waits until every survivor keeps a standby, their
// standby lag is zero and their standby records applied stay unchanged for
// a second (the standbys read the changelogs' ends).
func waitStandbysCaughtUp(t *testing.T, apps []*streams.App) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last uint64
	stableSince := time.Now()
	for time.Now().Before(deadline) {
		var applied uint64
		all := true
		for _, a := range apps {
			s := a.Stats()
			applied += s.StandbyRecords
			all = all && s.StandbyTasks > 0 && s.StandbyLag == 0
		}
		if applied != last || !all {
			last, stableSince = applied, time.Now()
		} else if time.Since(stableSince) >= time.Second {
			return
		}
		time.Sleep(50 * time.Millisecond) // counters have no notification
	}
	t.Fatalf("standbys did not settle: %d records applied", last)
}

// changelogEnds returns the end offsets of a changelog's partitions.
func changelogEnds(t *testing.T, addr, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adminClient(t, addr).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}
