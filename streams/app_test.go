package streams_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
)

// Helper-process mode: the kill test runs App instances as child processes
// of this test binary, so that killing one is a real SIGKILL.
const (
	envHelperBrokers   = "STREAMS_TEST_HELPER_BROKERS"
	envHelperGuarantee = "STREAMS_TEST_HELPER_GUARANTEE"
	envHelperInstance  = "STREAMS_TEST_HELPER_INSTANCE"
	envHelperApp       = "STREAMS_TEST_HELPER_APP"
	// envHelperStateDir selects the windowed topology (stateful) with its
	// stores in that directory.
	envHelperStateDir = "STREAMS_TEST_HELPER_STATE_DIR"
	// envHelperStandbys selects the counting topology of the standby
	// test (<app>-in counted into <app>-out) with that many standby
	// replicas.
	envHelperStandbys = "STREAMS_TEST_HELPER_STANDBYS"
)

func TestMain(m *testing.M) {
	if brokers := os.Getenv(envHelperBrokers); brokers != "" {
		os.Exit(runHelperInstance(brokers))
	}
	os.Exit(m.Run())
}

// evenTopology keeps the records whose value "n" is not a multiple of 5
// and writes "n-out" to out.
func evenTopology(in, out string) *streams.Topology {
	t := streams.NewTopology()
	s := streams.From(t, streams.String, streams.String, []string{in})
	kept := s.FilterNot(func(_ string, v string) (bool, error) {
		n, err := strconv.Atoi(v)
		return n%5 == 0, err
	})
	streams.MapValues(kept, func(_ string, v string) (string, error) { return v + "-out", nil }).
		To(out, streams.String, streams.String)
	return t
}

func runHelperInstance(brokers string) int {
	g, err := streams.ParseGuarantee(os.Getenv(envHelperGuarantee))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	top := evenTopology("kill-in", "kill-out")
	var (
		static []kgo.Opt
		extra  []streams.Opt
	)
	if n, err := strconv.Atoi(os.Getenv(envHelperStandbys)); err == nil {
		top = countingTopology(os.Getenv(envHelperApp))
		extra = append(extra, streams.NumStandbyReplicas(n))
	} else if dir := os.Getenv(envHelperStateDir); dir != "" {
		top = windowedTopology("win-in", "win-count", "win-sum")
		// A static member: a restarted instance takes its killed
		// predecessor's place without waiting for its session to expire.
		static = append(static, kgo.InstanceID("static-"+os.Getenv(envHelperInstance)))
	}
	app, err := streams.NewApp(top, append(extra,
		streams.StateDir(os.Getenv(envHelperStateDir)),
		streams.Brokers(brokers),
		streams.ApplicationID(os.Getenv(envHelperApp)),
		streams.InstanceID(os.Getenv(envHelperInstance)),
		streams.WithGuarantee(g),
		streams.CommitInterval(200*time.Millisecond),
		streams.TransactionTimeout(4*time.Second),
		streams.Logger(logger),
		streams.ClientOpts(kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond),
			kgo.RebalanceTimeout(10*time.Second)),
		streams.ClientOpts(static...),
	)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := app.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

func startBroker(t *testing.T) *brokertest.Broker {
	return brokertest.Start(t,
		"--set", "group.initial.rebalance.delay.ms=0",
		"--set", "group.min.session.timeout.ms=1000",
	)
}

func createTopic(t testing.TB, addr, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// produceNumbers writes values from..to-1 (as decimal strings, keyed by the
// value) to topic.
func produceNumbers(t *testing.T, addr, topic string, from, to int) {
	t.Helper()
	if err := produceRange(addr, topic, from, to); err != nil {
		t.Fatal(err)
	}
}

func produceRange(addr, topic string, from, to int) error {
	return produceEach(addr, from, to, func(i int) *kgo.Record {
		v := []byte(strconv.Itoa(i))
		return &kgo.Record{Topic: topic, Key: v, Value: v}
	})
}

// produceEach produces record(i) for every i in [from, to) asynchronously
// and waits for all of them.
func produceEach(addr string, from, to int, record func(i int) *kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
	)
	for i := from; i < to; i++ {
		cl.Produce(ctx, record(i), func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if firstErr != nil {
		return fmt.Errorf("produce: %w", firstErr)
	}
	return nil
}

// readAll consumes topic with read_committed until done(values) holds;
// with settle it then waits until no transaction is open on the topic (last
// stable offset = high watermark on every partition) and reads on until a
// second passes without new records, so late duplicates would be counted.
// It returns how often each value was seen.
func readAll(t *testing.T, addr, topic string, timeout time.Duration, settle bool, done func(map[string]int) bool) map[string]int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	seen := map[string]int{}
	poll := func(d time.Duration) int {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		fs := cl.PollFetches(ctx)
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			n++
		})
		return n
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		poll(500 * time.Millisecond)
		if !done(seen) {
			continue
		}
		if !settle {
			return seen
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stable, err1 := adm.ListCommittedOffsets(ctx, topic)
		ends, err2 := adm.ListEndOffsets(ctx, topic)
		cancel()
		if err1 != nil || err2 != nil {
			continue
		}
		open := false
		ends.Each(func(o kadm.ListedOffset) {
			if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
				open = true
			}
		})
		if open {
			continue
		}
		for poll(time.Second) > 0 {
		}
		return seen
	}
	t.Fatalf("reading %s: not complete after %s (%d distinct values)", topic, timeout, len(seen))
	return nil
}

func expectedOutputs(n int) map[string]bool {
	want := map[string]bool{}
	for i := 0; i < n; i++ {
		if i%5 != 0 {
			want[strconv.Itoa(i)+"-out"] = true
		}
	}
	return want
}

func hasAll(want map[string]bool) func(map[string]int) bool {
	return func(seen map[string]int) bool {
		for v := range want {
			if seen[v] == 0 {
				return false
			}
		}
		return true
	}
}

// TestThreeInstancesOneKilled runs three instances of one application over
// six partitions as child processes; one is SIGKILLed mid-stream (after
// processing part of the input, with more input arriving). With exactly_once
// a read_committed consumer sees every expected record exactly once; with
// at_least_once none is missing.
func TestThreeInstancesOneKilled(t *testing.T) {
	b := startBroker(t)
	for _, g := range []string{"exactly_once", "at_least_once"} {
		t.Run(g, func(t *testing.T) {
			// Topics are per subtest: the helpers use fixed names, so
			// each subtest gets its own broker state by app id and a
			// fresh pair of topics.
			in, out := "kill-in", "kill-out"
			app := "kill-" + g
			if g == "at_least_once" {
				// Reuse is impossible with fixed helper topic names;
				// a second broker keeps the subtests independent.
				b = startBroker(t)
			}
			createTopic(t, b.Addr, in, 6)
			createTopic(t, b.Addr, out, 6)
			const half = 10000
			produceNumbers(t, b.Addr, in, 0, half)

			var procs []*exec.Cmd
			for i := 0; i < 3; i++ {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(),
					envHelperBrokers+"="+b.Addr,
					envHelperGuarantee+"="+g,
					envHelperInstance+"="+strconv.Itoa(i),
					envHelperApp+"="+app,
				)
				logFile, err := os.Create(fmt.Sprintf("%s/instance-%d.log", t.TempDir(), i))
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdout, cmd.Stderr = logFile, logFile
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				procs = append(procs, cmd)
				t.Cleanup(func() {
					if cmd.ProcessState == nil {
						_ = cmd.Process.Signal(syscall.SIGKILL)
						_ = cmd.Wait()
					}
					logFile.Close()
					if t.Failed() {
						data, _ := os.ReadFile(logFile.Name())
						if len(data) > 4000 {
							data = data[len(data)-4000:]
						}
						t.Logf("instance %d log:\n%s", i, data)
					}
				})
			}
			// Mid-stream: once all three are members, stream the second
			// half in chunks and kill instance 1 while it is being
			// processed (output past the first half's 8000 values).
			waitMembers(t, b.Addr, app, 3)
			produced := make(chan error, 1)
			go func() {
				// Paced (load shaping, not synchronisation): the stream
				// lasts about 3s, so the kill lands in the middle of it.
				tick := time.NewTicker(150 * time.Millisecond)
				defer tick.Stop()
				for from := half; from < 2*half; from += half / 20 {
					<-tick.C
					if err := produceRange(b.Addr, in, from, from+half/20); err != nil {
						produced <- err
						return
					}
				}
				produced <- nil
			}()
			atKill := len(readAll(t, b.Addr, out, 30*time.Second, false, func(seen map[string]int) bool { return len(seen) > half*8/10+500 }))
			if atKill >= len(expectedOutputs(2*half)) {
				t.Fatalf("the stream ended before the kill (%d values out)", atKill)
			}
			if err := procs[1].Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = procs[1].Wait()
			if err := <-produced; err != nil {
				t.Fatal(err)
			}

			want := expectedOutputs(2 * half)
			seen := readAll(t, b.Addr, out, 60*time.Second, true, hasAll(want))
			var dups, extra int
			for v, n := range seen {
				if !want[v] {
					extra++
				}
				if n > 1 {
					dups++
				}
			}
			if extra > 0 {
				t.Errorf("%d unexpected values in the output", extra)
			}
			if g == "exactly_once" && dups > 0 {
				t.Errorf("exactly_once: %d values appear more than once", dups)
			}
			t.Logf("%s: %d expected values all present; %d duplicated; output while killing: %d", g, len(want), dups, atKill)
			for _, i := range []int{0, 2} {
				_ = procs[i].Process.Signal(syscall.SIGTERM)
				if err := procs[i].Wait(); err != nil {
					t.Errorf("instance %d exit: %v", i, err)
				}
			}
		})
	}
}

func waitMembers(t *testing.T, addr, group string, n int) {
	t.Helper()
	waitAssigned(t, addr, group, "", n, 0)
}
