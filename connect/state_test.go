package connect

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestConfigTopicReplay applies a Kafka-Connect-format config topic and
// checks the state after each step.
func TestConfigTopicReplay(t *testing.T) {
	st := newClusterState()
	steps := []struct {
		key, value string // value "" = tombstone
		check      func(t *testing.T)
	}{
		{"connector-orders", `{"properties":{"connector.class":"file-source","tasks.max":"2"}}`, func(t *testing.T) {
			if st.targetStates["orders"] != TargetStarted || len(st.tasks["orders"]) != 0 {
				t.Fatalf("new connector: %v %v", st.targetStates, st.tasks)
			}
		}},
		{"task-orders-0", `{"properties":{"file":"a"}}`, nil},
		{"task-orders-1", `{"properties":{"file":"b"}}`, func(t *testing.T) {
			if len(st.tasks["orders"]) != 0 {
				t.Fatal("tasks live before their commit record")
			}
		}},
		{"commit-orders", `{"tasks":2}`, func(t *testing.T) {
			if !reflect.DeepEqual(st.tasks["orders"], []Config{{"file": "a"}, {"file": "b"}}) {
				t.Fatalf("tasks %v", st.tasks["orders"])
			}
		}},
		{"target-state-orders", `{"state":"PAUSED","state.v2":"STOPPED"}`, func(t *testing.T) {
			if st.targetStates["orders"] != TargetStopped {
				t.Fatalf("state.v2 ignored: %v", st.targetStates)
			}
		}},
		{"target-state-orders", `{"state":"PAUSED"}`, func(t *testing.T) {
			if st.targetStates["orders"] != TargetPaused {
				t.Fatalf("pre-3.5 record: %v", st.targetStates)
			}
		}},
		{"restart-connector-orders", `{"include-tasks":true,"only-failed":false}`, func(t *testing.T) {
			want := []restartRequest{{Offset: 6, Connector: "orders", Task: -1, IncludeTasks: true}}
			if !reflect.DeepEqual(st.restarts, want) {
				t.Fatalf("restarts %+v", st.restarts)
			}
		}},
		{"commit-orders", `{"tasks":0}`, func(t *testing.T) {
			if len(st.tasks["orders"]) != 0 {
				t.Fatal("empty commit kept tasks")
			}
		}},
		{"session-key", `{"key":"x"}`, nil},
		{"connector-orders", "", func(t *testing.T) {
			if _, ok := st.connectors["orders"]; ok || len(st.connectorNames()) != 0 {
				t.Fatal("tombstone kept the connector")
			}
			if st.configEnd != 10 {
				t.Fatalf("configEnd %d", st.configEnd)
			}
		}},
	}
	for i, s := range steps {
		var v []byte
		if s.value != "" {
			v = []byte(s.value)
		}
		if err := st.applyConfig(int64(i), s.key, v); err != nil {
			t.Fatalf("step %d %s: %v", i, s.key, err)
		}
		if s.check != nil {
			s.check(t)
		}
	}
	if err := st.applyConfig(20, "connector-x", []byte("{")); err == nil {
		t.Fatal("bad JSON accepted")
	}
	if err := st.applyConfig(21, "commit-y", []byte(`{"tasks":3}`)); err == nil {
		t.Fatal("commit of missing tasks accepted")
	}
}

func TestStatusTopicKeepsNewestGeneration(t *testing.T) {
	st := newClusterState()
	apply := func(key, value string) {
		t.Helper()
		if err := st.applyStatus(key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	apply("status-task-my-conn-3", `{"state":"RUNNING","worker_id":"b:8083","generation":5}`)
	apply("status-task-my-conn-3", `{"state":"UNASSIGNED","worker_id":"a:8083","generation":4}`) // late, from the old owner
	if got := st.taskStatus[TaskID{"my-conn", 3}]; got.State != StateRunning || got.WorkerID != "b:8083" {
		t.Fatalf("stale status won: %+v", got)
	}
	apply("status-task-my-conn-3", `{"state":"FAILED","trace":"boom","worker_id":"b:8083","generation":5}`)
	if got := st.taskStatus[TaskID{"my-conn", 3}]; got.State != StateFailed || got.Trace != "boom" {
		t.Fatalf("%+v", got)
	}
	apply("topic-orders-connector-my-conn", `{"topic":{"name":"orders","connector":"my-conn","task":0,"discoverTimestamp":1}}`)
	if !st.topics["my-conn"]["orders"] {
		t.Fatalf("topics %v", st.topics)
	}
}

func TestOffsetTopicKeys(t *testing.T) {
	st := newClusterState()
	key, err := offsetKey("src", map[string]any{"filename": "/tmp/a"})
	if err != nil || string(key) != `["src",{"filename":"/tmp/a"}]` {
		t.Fatalf("key %s %v", key, err)
	}
	if err := st.applyOffset(key, []byte(`{"position":42}`)); err != nil {
		t.Fatal(err)
	}
	o := st.offsets["src"][canonicalPartition(map[string]any{"filename": "/tmp/a"})]
	if o.Offset["position"] != int64(42) {
		t.Fatalf("offset %#v", o.Offset)
	}
	if err := st.applyOffset(key, nil); err != nil || len(st.offsets["src"]) != 0 {
		t.Fatalf("tombstone: %v %v", err, st.offsets)
	}
	for _, bad := range []string{`{}`, `["x"]`, `[1,{}]`, `nope`} {
		if err := st.applyOffset([]byte(bad), []byte(`{}`)); err == nil {
			t.Errorf("key %s accepted", bad)
		}
	}
}

func TestAssignUnitsBalancedAndSticky(t *testing.T) {
	u := func(c string, task int) unit { return unit{c, task} }
	units := []unit{u("a", -1), u("a", 0), u("a", 1), u("b", -1), u("b", 0)}
	first := assignUnits([]string{"w1"}, nil, units)
	if len(first["w1"]) != 5 {
		t.Fatalf("one member gets everything: %v", first)
	}
	// A second member joins: it takes two units, w1 keeps three of its own.
	second := assignUnits([]string{"w1", "w2"}, first, units)
	if len(second["w1"]) != 3 || len(second["w2"]) != 2 {
		t.Fatalf("unbalanced: %v", second)
	}
	for _, x := range second["w1"] {
		if !containsUnit(first["w1"], x) {
			t.Fatalf("w1 got a unit it did not run: %v", second)
		}
	}
	// w1 dies: w2 keeps its units and takes the rest.
	third := assignUnits([]string{"w2"}, map[string][]unit{"w2": second["w2"]}, units)
	if len(third["w2"]) != 5 {
		t.Fatalf("survivor: %v", third)
	}
	// Every unit is assigned exactly once, with three members and a
	// previous plan naming a deleted unit and a unit twice.
	prev := map[string][]unit{"x": {u("gone", -1), u("a", 0)}, "y": {u("a", 0)}}
	plan := assignUnits([]string{"x", "y", "z"}, prev, units)
	seen := map[unit]int{}
	for _, us := range plan {
		if len(us) < 1 || len(us) > 2 {
			t.Fatalf("unbalanced: %v", plan)
		}
		for _, x := range us {
			seen[x]++
		}
	}
	if len(seen) != len(units) {
		t.Fatalf("assigned %v", seen)
	}
	for x, n := range seen {
		if n != 1 {
			t.Fatalf("%v assigned %d times", x, n)
		}
	}
	if !containsUnit(plan["x"], u("a", 0)) {
		t.Fatalf("not sticky: %v", plan)
	}
}

func containsUnit(us []unit, x unit) bool {
	for _, u := range us {
		if u == x {
			return true
		}
	}
	return false
}

func TestWorkerConfigDefaultsAndErrors(t *testing.T) {
	cfg, err := NewWorkerConfig(map[string]string{"bootstrap.servers": "h:9092", "listeners": "http://127.0.0.1:9999"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GroupID != "connect-cluster" || cfg.ConfigTopic != "connect-configs" || cfg.OffsetTopic != "connect-offsets" ||
		cfg.StatusTopic != "connect-status" || cfg.OffsetPartitions != 25 || cfg.RESTListen != "127.0.0.1:9999" {
		t.Fatalf("defaults: %+v", cfg)
	}
	for _, bad := range []map[string]string{
		{},
		{"bootstrap.servers": "h:1", "session.timeout.ms": "x"},
		{"bootstrap.servers": "h:1", "heartbeat.interval.ms": "20000"},
		{"bootstrap.servers": "h:1", "config.storage.topic": "connect-offsets"},
		{"bootstrap.servers": "h:1", "exactly.once.source.support": "maybe"},
		{"bootstrap.servers": "h:1", "rest.listen": "nohostport"},
	} {
		if _, err := NewWorkerConfig(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestLoadProperties(t *testing.T) {
	path := t.TempDir() + "/worker.properties"
	text := "# comment\n! also\nbootstrap.servers=h:9092\ngroup.id : g1\n\nkey.converter=org.apache.kafka.connect.storage.StringConverter\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	props, err := LoadProperties(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bootstrap.servers": "h:9092", "group.id": "g1", "key.converter": StringConverterClass}
	if !reflect.DeepEqual(props, want) {
		t.Fatalf("got %v", props)
	}
	if err := os.WriteFile(path, []byte("novalue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProperties(path); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("bad line: %v", err)
	}
}
