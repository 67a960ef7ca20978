package lag

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// t0 is the test clock's epoch; at(s) is s seconds after it. Every time in
// these tests comes from this clock: nothing reads the wall clock.
var t0 = time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)

func at(seconds float64) time.Time { return t0.Add(time.Duration(seconds * float64(time.Second))) }

// commit is a test commit: offset, log end offset at commit, seconds after t0.
type commit struct {
	offset, logEnd int64
	sec            float64
}

// sample is an ObserveLogEnd call: log end offset, seconds after t0.
type sample struct {
	logEnd int64
	sec    float64
}

// regular makes n commits 10 s apart starting at t0, the i-th at
// offsets[i] with log end logEnds[i].
func regular(offsets, logEnds []int64) []commit {
	out := make([]commit, len(offsets))
	for i := range offsets {
		out[i] = commit{offsets[i], logEnds[i], float64(10 * i)}
	}
	return out
}

// tenCommits are 10 s apart (spanning 90 s) and shrink the lag.
var tenCommits = regular([]int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, []int64{200, 200, 200, 200, 200, 200, 200, 200, 200, 200})

// TestRules is the specification of the evaluation rules (see doc.go): each
// case is a commit history, the log end offsets seen, the current log end
// offset and the time of evaluation.
func TestRules(t *testing.T) {
	cases := []struct {
		name    string
		commits []commit
		samples []sample
		logEnd  int64   // current log end offset
		now     float64 // seconds after t0
		want    Status
	}{
		// Rule 1: no lag now, no problem.
		{"caught up", regular([]int64{10, 20, 30}, []int64{30, 40, 50}), nil, 30, 25, StatusOK},
		{"caught up long after the last commit", regular([]int64{10, 20, 30}, []int64{30, 40, 30}), nil, 30, 3600, StatusOK},
		{"committed past the log end (truncated log)", regular([]int64{10, 20}, []int64{20, 20}), nil, 15, 12, StatusOK},

		// Healthy consumers with lag.
		{"offsets move and lag shrinks", regular([]int64{10, 30, 60, 90}, []int64{100, 110, 120, 130}), nil, 140, 35, StatusOK},
		{"lag went down once in the window", regular([]int64{10, 20, 40, 50}, []int64{100, 110, 120, 140}), nil, 150, 35, StatusOK},
		{"lag was zero within the window", regular([]int64{10, 20, 30, 40}, []int64{10, 30, 50, 70}), nil, 80, 35, StatusOK},
		{"one commit with lag, moments later", []commit{{10, 100, 0}}, nil, 100, 5, StatusOK},

		// Rule 6: WARN when offsets move but lag never shrinks.
		{"lag grows while offsets move", regular([]int64{10, 20, 30, 40}, []int64{100, 120, 140, 160}), nil, 170, 35, StatusWarn},
		{"lag fixed while offsets move", regular([]int64{10, 20, 30, 40}, []int64{60, 70, 80, 90}), nil, 90, 35, StatusWarn},

		// Rule 5: STALL when commits keep the same offset with lag.
		{"same offset committed with lag", regular([]int64{50, 50, 50, 50}, []int64{100, 100, 110, 120}), nil, 120, 35, StatusStall},
		{"two commits, same offset", regular([]int64{50, 50}, []int64{100, 100}), nil, 100, 15, StatusStall},
		{"same offset but lag was zero in the window", regular([]int64{50, 50, 50}, []int64{50, 60, 70}), nil, 70, 25, StatusOK},

		// Rule 2: STOP when commits stop for longer than the window spans.
		// Ten commits 10 s apart span 90 s.
		{"silent just within the span", tenCommits, nil, 200, 90 + 89, StatusOK},
		{"silent longer than the span", tenCommits, nil, 200, 90 + 91, StatusStop},
		{"a short window counts as MinSpan (60 s): 59 s", []commit{{10, 100, 0}}, nil, 100, 59, StatusOK},
		{"a short window counts as MinSpan (60 s): 61 s", []commit{{10, 100, 0}}, nil, 100, 61, StatusStop},
		{"stopped but caught up is not stopped", []commit{{100, 100, 0}}, nil, 100, 3600, StatusOK},
		{"STOP wins over STALL", regular([]int64{50, 50, 50}, []int64{100, 100, 100}), nil, 100, 20 + 61, StatusStop},
		// The consumer was idle at offset 100 with nothing to read; data
		// arrived after t=100. It has had work only since then.
		{"work arrived recently", []commit{{100, 100, 0}}, []sample{{100, 50}, {100, 100}, {150, 105}}, 150, 130, StatusOK},
		{"work arrived and still no commit", []commit{{100, 100, 0}}, []sample{{100, 50}, {100, 100}, {150, 105}}, 150, 161, StatusStop},
		// A sample older than the last commit says nothing about now.
		{"caught-up sample before the commit", []commit{{100, 150, 30}}, []sample{{90, 10}, {100, 20}, {150, 40}}, 150, 30 + 61, StatusStop},

		// Rule 3: REWIND when offsets go backwards and have not recovered.
		{"offsets went backwards", regular([]int64{100, 200, 50, 60}, []int64{300, 300, 300, 300}), nil, 300, 35, StatusRewind},
		{"rewound even though the lag was zero before", regular([]int64{100, 200, 50}, []int64{200, 200, 200}), nil, 200, 25, StatusRewind},
		{"rewind recovered", regular([]int64{100, 200, 50, 250}, []int64{300, 300, 300, 400}), nil, 300, 35, StatusOK},
		{"STOP wins over REWIND", regular([]int64{100, 200, 50}, []int64{300, 300, 300}), nil, 300, 20 + 61, StatusStop},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := New(Config{MinDistance: -1})
			for _, c := range tc.commits {
				e.Observe("g", "t", 0, Commit{Offset: c.offset, LogEndOffset: c.logEnd, Time: at(c.sec)})
			}
			for _, s := range tc.samples {
				e.ObserveLogEnd("t", 0, s.logEnd, at(s.sec))
			}
			current := func(topic string, partition int32) (int64, bool) { return tc.logEnd, true }
			gs, ok := e.Evaluate("g", at(tc.now), current)
			if !ok || len(gs.Partitions) != 1 {
				t.Fatalf("Evaluate = %+v, %v", gs, ok)
			}
			if got := gs.Partitions[0].Status; got != tc.want {
				t.Errorf("status = %v, want %v (window %+v)", got, tc.want, gs.Partitions[0].Window)
			}
			if gs.Status != tc.want {
				t.Errorf("group status = %v, want %v", gs.Status, tc.want)
			}
		})
	}
}

func TestWindowKeepsLastCommits(t *testing.T) {
	e := New(Config{Window: 3, MinDistance: -1})
	for i := range 5 {
		e.Observe("g", "t", 0, Commit{Offset: int64(10 * i), LogEndOffset: 100, Time: at(float64(i))})
	}
	gs, _ := e.Evaluate("g", at(5), nil)
	p := gs.Partitions[0]
	if len(p.Window) != 3 || p.Window[0].Offset != 20 || p.Window[2].Offset != 40 {
		t.Errorf("window = %+v, want offsets 20, 30, 40", p.Window)
	}
	if p.Complete != 1 || p.CommittedOffset != 40 || !p.LastCommit.Equal(at(4)) {
		t.Errorf("partition = %+v", p)
	}
}

func TestWindowMinDistanceReplacesLastCommit(t *testing.T) {
	e := New(Config{Window: 10, MinDistance: 5 * time.Second})
	e.Observe("g", "t", 0, Commit{Offset: 1, LogEndOffset: 10, Time: at(0)})
	e.Observe("g", "t", 0, Commit{Offset: 2, LogEndOffset: 10, Time: at(1)})   // replaces
	e.Observe("g", "t", 0, Commit{Offset: 3, LogEndOffset: 10, Time: at(4)})   // 3 s after the replaced one: replaces
	e.Observe("g", "t", 0, Commit{Offset: 4, LogEndOffset: 10, Time: at(9.5)}) // new slot
	e.Observe("g", "t", 0, Commit{Offset: 9, LogEndOffset: 10, Time: at(2)})   // stale: ignored
	e.Observe("g", "t", 0, Commit{Offset: -1, LogEndOffset: 10, Time: at(20)}) // no offset: ignored
	gs, _ := e.Evaluate("g", at(10), nil)
	p := gs.Partitions[0]
	if len(p.Window) != 2 || p.Window[0].Offset != 3 || p.Window[1].Offset != 4 {
		t.Errorf("window = %+v, want offsets 3, 4", p.Window)
	}
	if p.Complete != 0.2 {
		t.Errorf("complete = %v, want 0.2", p.Complete)
	}
}

func TestLogEndFallbacks(t *testing.T) {
	e := New(Config{})
	e.Observe("g", "t", 0, Commit{Offset: 5, LogEndOffset: 8, Time: at(0)})
	gs, _ := e.Evaluate("g", at(1), nil)
	if p := gs.Partitions[0]; p.LogEndOffset != 8 || p.Lag != 3 {
		t.Errorf("from the commit: %+v", p)
	}
	e.ObserveLogEnd("t", 0, 12, at(1))
	gs, _ = e.Evaluate("g", at(1), nil)
	if p := gs.Partitions[0]; p.LogEndOffset != 12 || p.Lag != 7 {
		t.Errorf("from the sample: %+v", p)
	}
	unknown := func(string, int32) (int64, bool) { return 0, false }
	gs, _ = e.Evaluate("g", at(1), unknown)
	if p := gs.Partitions[0]; p.LogEndOffset != 12 {
		t.Errorf("unknown current log end: %+v", p)
	}
}

func TestGroupIsItsWorstPartition(t *testing.T) {
	e := New(Config{MinDistance: -1})
	logEnds := map[TopicPartition]int64{{"a", 0}: 100, {"a", 1}: 200, {"b", 0}: 10}
	for i := range 4 {
		now := at(float64(10 * i))
		// a/0 keeps up, a/1 stalls, b/0 falls behind.
		e.Observe("g", "a", 0, Commit{Offset: int64(25 * (i + 1)), LogEndOffset: 100, Time: now})
		e.Observe("g", "a", 1, Commit{Offset: 7, LogEndOffset: 200, Time: now})
		e.Observe("g", "b", 0, Commit{Offset: int64(i + 1), LogEndOffset: int64(5 * (i + 2)), Time: now})
	}
	current := func(topic string, partition int32) (int64, bool) {
		v, ok := logEnds[TopicPartition{topic, partition}]
		return v, ok
	}
	gs, ok := e.Evaluate("g", at(35), current)
	if !ok {
		t.Fatal("group unknown")
	}
	want := []struct {
		tp     TopicPartition
		status Status
		lag    int64
	}{{TopicPartition{"a", 0}, StatusOK, 0}, {TopicPartition{"a", 1}, StatusStall, 193}, {TopicPartition{"b", 0}, StatusWarn, 6}}
	if len(gs.Partitions) != len(want) {
		t.Fatalf("partitions = %+v", gs.Partitions)
	}
	for i, w := range want {
		p := gs.Partitions[i]
		if (TopicPartition{p.Topic, p.Partition}) != w.tp || p.Status != w.status || p.Lag != w.lag {
			t.Errorf("partition %d = %s/%d %v lag %d, want %v %v lag %d", i, p.Topic, p.Partition, p.Status, p.Lag, w.tp, w.status, w.lag)
		}
	}
	if gs.Status != StatusStall || gs.Severity() != SeverityErr || gs.TotalLag != 199 {
		t.Errorf("group = %v/%v total lag %d, want STALL/ERR 199", gs.Status, gs.Severity(), gs.TotalLag)
	}
	if m, ok := gs.MaxLag(); !ok || m.Topic != "a" || m.Partition != 1 {
		t.Errorf("max lag = %+v", m)
	}
}

func TestSeverity(t *testing.T) {
	want := map[Status]Severity{
		StatusOK: SeverityOK, StatusWarn: SeverityWarn,
		StatusStop: SeverityErr, StatusStall: SeverityErr, StatusRewind: SeverityErr,
	}
	for s, sev := range want {
		if s.Severity() != sev {
			t.Errorf("%v.Severity() = %v, want %v", s, s.Severity(), sev)
		}
	}
	if !(StatusOK < StatusWarn && StatusWarn < StatusStop && StatusStop < StatusStall && StatusStall < StatusRewind) {
		t.Error("statuses are not ordered as Burrow orders them")
	}
	raw, err := json.Marshal(map[string]any{"status": StatusRewind, "severity": SeverityErr})
	if err != nil || string(raw) != `{"severity":"ERR","status":"REWIND"}` {
		t.Errorf("json = %s, %v", raw, err)
	}
	if Status(42).String() != "Status(42)" {
		t.Errorf("unknown status prints %q", Status(42))
	}
}

func TestForgetAndExpire(t *testing.T) {
	e := New(Config{Expire: time.Hour})
	e.Observe("old", "t", 0, Commit{Offset: 1, LogEndOffset: 1, Time: at(0)})
	e.Observe("mixed", "t", 0, Commit{Offset: 1, LogEndOffset: 1, Time: at(0)})
	e.Observe("mixed", "u", 0, Commit{Offset: 1, LogEndOffset: 1, Time: at(3000)})
	e.Observe("gone", "v", 0, Commit{Offset: 1, LogEndOffset: 1, Time: at(3000)})
	e.ObserveLogEnd("v", 0, 1, at(3000))

	e.Forget("gone")
	if _, ok := e.Evaluate("gone", at(3000), nil); ok {
		t.Error("forgotten group still evaluated")
	}
	e.mu.Lock()
	_, kept := e.mu.logEnds[TopicPartition{"v", 0}]
	e.mu.Unlock()
	if kept {
		t.Error("log end samples of a partition nobody watches are kept")
	}

	e.Expire(at(3700))
	if got := e.Groups(); len(got) != 1 || got[0] != "mixed" {
		t.Fatalf("groups after expiry = %v", got)
	}
	gs, _ := e.Evaluate("mixed", at(3700), nil)
	if len(gs.Partitions) != 1 || gs.Partitions[0].Topic != "u" {
		t.Errorf("mixed after expiry = %+v", gs.Partitions)
	}
	e.ForgetPartition("mixed", "u", 0)
	if len(e.Groups()) != 0 {
		t.Errorf("groups = %v", e.Groups())
	}
}

func TestEvaluateAllIsSorted(t *testing.T) {
	e := New(Config{})
	for _, g := range []string{"c", "a", "b"} {
		e.Observe(g, "t", 0, Commit{Offset: 1, LogEndOffset: 1, Time: at(0)})
	}
	all := e.EvaluateAll(at(1), nil)
	if len(all) != 3 || all[0].Group != "a" || all[2].Group != "c" {
		t.Errorf("EvaluateAll = %+v", all)
	}
	if _, ok := e.Evaluate("nope", at(1), nil); ok {
		t.Error("unknown group evaluated")
	}
}

func TestConfig(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.Window != DefaultWindow || c.MinDistance != DefaultMinDistance || c.MinSpan != DefaultMinSpan || c.Expire != DefaultExpire {
		t.Errorf("defaults = %+v", c)
	}
	for _, w := range []int{-1, maxWindow + 1} {
		if err := (Config{Window: w}).Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("window %d: err = %v", w, err)
		}
	}
	if New(Config{Window: 3}).Config().Window != 3 {
		t.Error("Config() lost the window")
	}
}
