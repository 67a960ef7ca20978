package connect

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type errorBody struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

// wantError checks Kafka Connect's error shape and status.
func wantError(t *testing.T, method, url string, body any, status int, msgPart string) {
	t.Helper()
	var e errorBody
	restJSON(t, method, url, body, status, &e)
	if e.Code != status || !strings.Contains(e.Message, msgPart) {
		t.Fatalf("%s %s: error %+v, want code %d and message containing %q", method, url, e, status, msgPart)
	}
}

// TestRESTContract drives every endpoint of the REST API against a real
// broker and checks paths, payloads and status codes as Kafka Connect
// defines them.
func TestRESTContract(t *testing.T) {
	b := startBroker(t)
	w := startWorker(t, testWorkerProps(b.Addr))
	base := "http://" + w.Addr()
	dir := t.TempDir()
	input := filepath.Join(dir, "in.txt")
	appendLines(t, input, 1, 3)

	var root map[string]string
	restJSON(t, "GET", base+"/", nil, 200, &root)
	if root["version"] == "" || root["kafka_cluster_id"] == "" {
		t.Fatalf("GET /: %v", root)
	}
	var names []string
	restJSON(t, "GET", base+"/connectors", nil, 200, &names)
	if len(names) != 0 {
		t.Fatalf("connectors at start: %v", names)
	}
	var plugins []pluginInfo
	restJSON(t, "GET", base+"/connector-plugins", nil, 200, &plugins)
	found := map[string]string{}
	for _, p := range plugins {
		found[p.Class] = p.Type
	}
	if found["file-source"] != "source" || found["org.apache.kafka.connect.file.FileStreamSinkConnector"] != "sink" || found["FileStreamSource"] != "source" {
		t.Fatalf("plugins: %v", plugins)
	}
	var keys []configKeyInfo
	restJSON(t, "GET", base+"/connector-plugins/FileStreamSource/config", nil, 200, &keys)
	if len(keys) != 3 || keys[0].Name != "file" || !keys[0].Required {
		t.Fatalf("plugin config: %+v", keys)
	}
	wantError(t, "GET", base+"/connector-plugins/nope/config", nil, 404, "nope")

	// Validation.
	var v validateResponse
	restJSON(t, "PUT", base+"/connector-plugins/file-source/config/validate", map[string]string{"connector.class": "file-source", "name": "x"}, 200, &v)
	errs := map[string][]string{}
	for _, c := range v.Configs {
		errs[c.Value.Name] = c.Value.Errors
	}
	if v.ErrorCount != 2 || len(errs["file"]) != 1 || len(errs["topic"]) != 1 || len(errs["tasks.max"]) != 0 || v.Groups[0] != "Common" {
		t.Fatalf("validate: %+v", v)
	}
	wantError(t, "PUT", base+"/connector-plugins/file-source/config/validate", map[string]string{"connector.class": "file-sink"}, 400, "does not match")

	// Create.
	srcCfg := map[string]string{"connector.class": "FileStreamSource", "file": input, "topic": "lines", "tasks.max": "1"}
	wantError(t, "POST", base+"/connectors", map[string]any{"name": "src", "config": map[string]string{"connector.class": "FileStreamSource", "tasks.max": "0"}}, 400, "contains the following 3 error(s)")
	wantError(t, "POST", base+"/connectors", map[string]any{"config": srcCfg}, 400, "name is required")
	wantError(t, "POST", base+"/connectors", `{"name":`, 400, "Invalid JSON")
	wantError(t, "POST", base+"/connectors", map[string]any{"name": "src", "config": map[string]string{"connector.class": "com.example.Nope"}}, 400, "Failed to find any class")
	var info connectorInfo
	restJSON(t, "POST", base+"/connectors", map[string]any{"name": "src", "config": srcCfg}, 201, &info)
	if info.Name != "src" || info.Type != "source" || info.Config["name"] != "src" || info.Config["file"] != input || info.Tasks == nil {
		t.Fatalf("created: %+v", info)
	}
	wantError(t, "POST", base+"/connectors", map[string]any{"name": "src", "config": srcCfg}, 409, "Connector src already exists")

	// Unknown connectors are 404 everywhere.
	for _, p := range []struct{ method, path string }{
		{"GET", "/connectors/nope"}, {"GET", "/connectors/nope/config"}, {"GET", "/connectors/nope/status"},
		{"GET", "/connectors/nope/tasks"}, {"PUT", "/connectors/nope/pause"}, {"PUT", "/connectors/nope/resume"},
		{"PUT", "/connectors/nope/stop"}, {"POST", "/connectors/nope/restart"}, {"DELETE", "/connectors/nope"},
		{"GET", "/connectors/nope/offsets"}, {"GET", "/connectors/nope/topics"}, {"GET", "/connectors/nope/tasks/0/status"},
	} {
		wantError(t, p.method, base+p.path, nil, 404, "Connector nope not found")
	}
	wantError(t, "GET", base+"/no/such/path", nil, 404, "Not Found")
	wantError(t, "DELETE", base+"/connector-plugins", nil, 405, "Method Not Allowed")

	// Running: status, tasks, records.
	s := waitState(t, base, "src", StateRunning, 1)
	if s.Type != "source" || s.Connector.WorkerID != w.ID() || s.Tasks[0].WorkerID != w.ID() || s.Tasks[0].ID != 0 {
		t.Fatalf("status: %+v", s)
	}
	restJSON(t, "GET", base+"/connectors/src", nil, 200, &info)
	if len(info.Tasks) != 1 || info.Tasks[0] != (TaskID{"src", 0}) {
		t.Fatalf("info: %+v", info)
	}
	var tasks []taskInfo
	restJSON(t, "GET", base+"/connectors/src/tasks", nil, 200, &tasks)
	if len(tasks) != 1 || tasks[0].ID.Task != 0 || tasks[0].Config["file"] != input {
		t.Fatalf("tasks: %+v", tasks)
	}
	var ts taskState
	restJSON(t, "GET", base+"/connectors/src/tasks/0/status", nil, 200, &ts)
	if ts.State != StateRunning || ts.WorkerID != w.ID() {
		t.Fatalf("task status: %+v", ts)
	}
	wantError(t, "GET", base+"/connectors/src/tasks/7/status", nil, 404, "src-7")
	var cfg map[string]string
	restJSON(t, "GET", base+"/connectors/src/config", nil, 200, &cfg)
	if cfg["topic"] != "lines" || cfg["name"] != "src" {
		t.Fatalf("config: %v", cfg)
	}
	recs := readTopic(t, b.Addr, "lines", 3)
	for i, r := range recs {
		want := `{"schema":{"type":"string","optional":false},"payload":"line-` + string(rune('1'+i)) + `"}`
		if string(r.Value) != want || r.Key != nil {
			t.Fatalf("record %d: key %q value %s, want %s", i, r.Key, r.Value, want)
		}
	}
	var expanded map[string]struct {
		Status *connectorStatus `json:"status"`
		Info   *connectorInfo   `json:"info"`
	}
	restJSON(t, "GET", base+"/connectors?expand=status&expand=info", nil, 200, &expanded)
	if e := expanded["src"]; e.Status == nil || e.Info == nil || e.Status.Connector.State != StateRunning || e.Info.Config["file"] != input {
		t.Fatalf("expand: %+v", expanded)
	}
	var topics map[string]map[string][]string
	restJSON(t, "GET", base+"/connectors/src/topics", nil, 200, &topics)
	if got := topics["src"]["topics"]; len(got) != 1 || got[0] != "lines" {
		t.Fatalf("topics: %v", topics)
	}
	if code, _ := rest(t, "PUT", base+"/connectors/src/topics/reset", nil); code != 202 {
		t.Fatalf("topics reset: %d", code)
	}
	restJSON(t, "GET", base+"/connectors/src/topics", nil, 200, &topics)
	if got := topics["src"]["topics"]; len(got) != 0 {
		t.Fatalf("topics after reset: %v", topics)
	}
	var offs offsetsBody
	waitFor(t, 20*time.Second, "source offsets", func() (bool, string) {
		restJSON(t, "GET", base+"/connectors/src/offsets", nil, 200, &offs)
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["position"] == float64(21), string(mustJSON(offs))
	})
	if offs.Offsets[0].Partition["filename"] != input {
		t.Fatalf("offset partition: %+v", offs)
	}
	wantError(t, "PATCH", base+"/connectors/src/offsets", offsetsBody{Offsets: []offsetEntry{{Partition: map[string]any{"filename": input}, Offset: map[string]any{"position": 0}}}}, 400, "STOPPED")
	wantError(t, "DELETE", base+"/connectors/src/offsets", nil, 400, "STOPPED")

	// Pause and resume.
	if code, body := rest(t, "PUT", base+"/connectors/src/pause", nil); code != 202 || len(body) != 0 {
		t.Fatalf("pause: %d %s", code, body)
	}
	waitState(t, base, "src", StatePaused, 1)
	if code, _ := rest(t, "PUT", base+"/connectors/src/resume", nil); code != 202 {
		t.Fatalf("resume: %d", code)
	}
	waitState(t, base, "src", StateRunning, 1)

	// Restarts.
	if code, body := rest(t, "POST", base+"/connectors/src/restart", nil); code != 204 || len(body) != 0 {
		t.Fatalf("restart: %d %s", code, body)
	}
	var rs connectorStatus
	restJSON(t, "POST", base+"/connectors/src/restart?includeTasks=true&onlyFailed=false", nil, 202, &rs)
	if rs.Connector.State != StateRestarting || len(rs.Tasks) != 1 || rs.Tasks[0].State != StateRestarting {
		t.Fatalf("restart with tasks: %+v", rs)
	}
	restJSON(t, "POST", base+"/connectors/src/restart?includeTasks=true&onlyFailed=true", nil, 202, &rs)
	if rs.Tasks[0].State == StateRestarting {
		t.Fatalf("onlyFailed restarts a running task: %+v", rs)
	}
	wantError(t, "POST", base+"/connectors/src/restart?includeTasks=maybe", nil, 400, "includeTasks")
	if code, _ := rest(t, "POST", base+"/connectors/src/tasks/0/restart", nil); code != 204 {
		t.Fatalf("task restart: %d", code)
	}
	wantError(t, "POST", base+"/connectors/src/tasks/3/restart", nil, 404, "src-3")
	waitState(t, base, "src", StateRunning, 1)

	// Config updates: 200 for an existing connector, 201 for a new one.
	srcCfg["batch.size"] = "10"
	restJSON(t, "PUT", base+"/connectors/src/config", srcCfg, 200, &info)
	if info.Config["batch.size"] != "10" {
		t.Fatalf("updated: %+v", info)
	}
	wantError(t, "PUT", base+"/connectors/src/config", map[string]string{"name": "other", "connector.class": "file-source"}, 400, "doesn't match")
	sinkCfg := map[string]string{"connector.class": "file-sink", "file": filepath.Join(dir, "out.txt"), "topics": "lines"}
	restJSON(t, "PUT", base+"/connectors/sink/config", sinkCfg, 201, &info)
	if info.Type != "sink" || info.Name != "sink" {
		t.Fatalf("created by PUT: %+v", info)
	}
	waitFor(t, 30*time.Second, "sink output", func() (bool, string) {
		lines := fileLines(t, sinkCfg["file"])
		return len(lines) == 3 && lines[2] == "line-3", strings.Join(lines, ",")
	})
	restJSON(t, "GET", base+"/connectors", nil, 200, &names)
	if strings.Join(names, ",") != "sink,src" {
		t.Fatalf("names: %v", names)
	}

	// Stop, then change offsets (KIP-875).
	if code, _ := rest(t, "PUT", base+"/connectors/src/stop", nil); code != 204 {
		t.Fatalf("stop: %d", code)
	}
	waitFor(t, 30*time.Second, "src STOPPED without tasks", func() (bool, string) {
		var s connectorStatus
		restJSON(t, "GET", base+"/connectors/src/status", nil, 200, &s)
		return s.Connector.State == StateStopped && len(s.Tasks) == 0, string(mustJSON(s))
	})
	var msg map[string]string
	// Rewind to the start of line-2: it is produced again on resume.
	restJSON(t, "PATCH", base+"/connectors/src/offsets", offsetsBody{Offsets: []offsetEntry{{Partition: map[string]any{"filename": input}, Offset: map[string]any{"position": 7}}}}, 200, &msg)
	if !strings.Contains(msg["message"], "altered successfully") {
		t.Fatalf("patch: %v", msg)
	}
	restJSON(t, "GET", base+"/connectors/src/offsets", nil, 200, &offs)
	if len(offs.Offsets) != 1 || offs.Offsets[0].Offset["position"] != float64(7) {
		t.Fatalf("after patch: %+v", offs)
	}
	if code, _ := rest(t, "PUT", base+"/connectors/src/resume", nil); code != 202 {
		t.Fatalf("resume after stop: %d", code)
	}
	waitState(t, base, "src", StateRunning, 1)
	recs = readTopic(t, b.Addr, "lines", 5)
	if len(recs) != 5 || !strings.Contains(string(recs[3].Value), `"line-2"`) || !strings.Contains(string(recs[4].Value), `"line-3"`) {
		t.Fatalf("after rewind: %d records, 4th %s", len(recs), recs[len(recs)-1].Value)
	}

	// Sink offsets are the consumer group's.
	waitFor(t, 30*time.Second, "sink offsets", func() (bool, string) {
		restJSON(t, "GET", base+"/connectors/sink/offsets", nil, 200, &offs)
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["kafka_offset"] == float64(5) && offs.Offsets[0].Partition["kafka_topic"] == "lines", string(mustJSON(offs))
	})
	if code, _ := rest(t, "PUT", base+"/connectors/sink/stop", nil); code != 204 {
		t.Fatal("stop sink")
	}
	waitState(t, base, "sink", StateStopped, 0)
	restJSON(t, "PATCH", base+"/connectors/sink/offsets", offsetsBody{Offsets: []offsetEntry{{Partition: map[string]any{"kafka_topic": "lines", "kafka_partition": 0}, Offset: map[string]any{"kafka_offset": 1}}}}, 200, &msg)
	waitFor(t, 10*time.Second, "sink offsets patched", func() (bool, string) {
		restJSON(t, "GET", base+"/connectors/sink/offsets", nil, 200, &offs)
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["kafka_offset"] == float64(1), string(mustJSON(offs))
	})

	// KIP-980: a connector created PAUSED starts paused.
	wantError(t, "POST", base+"/connectors", map[string]any{"name": "p", "config": srcCfg, "initial_state": "SLEEPING"}, 400, "initial_state")
	pausedCfg := map[string]string{"connector.class": "file-source", "file": input, "topic": "paused-lines"}
	restJSON(t, "POST", base+"/connectors", map[string]any{"name": "p", "config": pausedCfg, "initial_state": "PAUSED"}, 201, nil)
	waitState(t, base, "p", StatePaused, 1)
	if code, _ := rest(t, "DELETE", base+"/connectors/p", nil); code != 204 {
		t.Fatal("delete p")
	}

	// Delete.
	if code, body := rest(t, "DELETE", base+"/connectors/src/offsets", nil); code != 400 {
		t.Fatalf("reset offsets of a running connector: %d %s", code, body)
	}
	if code, _ := rest(t, "DELETE", base+"/connectors/src", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	wantError(t, "GET", base+"/connectors/src", nil, 404, "Connector src not found")
	wantError(t, "DELETE", base+"/connectors/src", nil, 404, "not found")
	restJSON(t, "DELETE", base+"/connectors/sink/offsets", nil, 200, &msg)
	if !strings.Contains(msg["message"], "reset successfully") {
		t.Fatalf("reset: %v", msg)
	}
	restJSON(t, "GET", base+"/connectors/sink/offsets", nil, 200, &offs)
	if len(offs.Offsets) != 0 {
		t.Fatalf("after reset: %+v", offs)
	}
	restJSON(t, "GET", base+"/connectors", nil, 200, &names)
	if strings.Join(names, ",") != "sink" {
		t.Fatalf("names after delete: %v", names)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
