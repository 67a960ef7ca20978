package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Version is reported by GET / and the connector plugins.
const Version = "strata-0.1"

// The REST API keeps Kafka Connect's paths, payloads and status codes. Any
// worker serves every request: reads come from the state it rebuilt from
// the internal topics, writes are records it produces to the config topic
// (then it reads the topic up to its write before answering), so nothing is
// forwarded between workers.

// restError is Kafka Connect's error body.
type restError struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *restError) Error() string { return e.Message }

func httpErr(code int, format string, args ...any) *restError {
	return &restError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Handler returns the REST API's handler.
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	log := w.loggers.logger(restLogger)
	h := func(pattern string, f func(*http.Request) (int, any, error)) {
		mux.HandleFunc(pattern, func(rw http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
			defer cancel()
			start := time.Now()
			status, body, err := f(r.WithContext(ctx))
			if err != nil {
				var re *restError
				if !errors.As(err, &re) {
					re = &restError{Code: http.StatusInternalServerError, Message: err.Error()}
				}
				log.Debug("connect: REST request", "method", r.Method, "path", r.URL.Path, "status", re.Code, "elapsed", time.Since(start), "err", re.Message)
				writeJSON(rw, re.Code, re)
				return
			}
			log.Debug("connect: REST request", "method", r.Method, "path", r.URL.Path, "status", status, "elapsed", time.Since(start))
			if body == nil {
				rw.WriteHeader(status)
				return
			}
			writeJSON(rw, status, body)
		})
	}
	h("GET /{$}", w.restRoot)
	h("GET /connectors", w.restListConnectors)
	h("POST /connectors", w.restCreateConnector)
	h("GET /connectors/{name}", w.restGetConnector)
	h("DELETE /connectors/{name}", w.restDeleteConnector)
	h("GET /connectors/{name}/config", w.restGetConfig)
	h("PUT /connectors/{name}/config", w.restPutConfig)
	h("GET /connectors/{name}/status", w.restStatus)
	h("GET /connectors/{name}/tasks", w.restTasks)
	h("GET /connectors/{name}/tasks/{task}/status", w.restTaskStatus)
	h("POST /connectors/{name}/tasks/{task}/restart", w.restRestartTask)
	h("PUT /connectors/{name}/pause", w.restTarget(TargetPaused, http.StatusAccepted))
	h("PUT /connectors/{name}/resume", w.restTarget(TargetStarted, http.StatusAccepted))
	h("PUT /connectors/{name}/stop", w.restTarget(TargetStopped, http.StatusNoContent))
	h("POST /connectors/{name}/restart", w.restRestart)
	h("GET /connectors/{name}/topics", w.restTopics)
	h("PUT /connectors/{name}/topics/reset", w.restResetTopics)
	h("GET /connectors/{name}/offsets", w.restGetOffsets)
	h("PATCH /connectors/{name}/offsets", w.restAlterOffsets)
	h("DELETE /connectors/{name}/offsets", w.restResetOffsets)
	h("GET /connector-plugins", w.restPlugins)
	h("GET /connector-plugins/{type}/config", w.restPluginConfig)
	h("PUT /connector-plugins/{type}/config/validate", w.restValidate)
	h("GET /admin/loggers", w.restLoggers)
	h("GET /admin/loggers/{name}", w.restLogger)
	h("PUT /admin/loggers/{name}", w.restSetLogger)
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
				writeJSON(rw, http.StatusMethodNotAllowed, httpErr(http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed"))
				return
			}
		}
		writeJSON(rw, http.StatusNotFound, httpErr(http.StatusNotFound, "HTTP 404 Not Found"))
	})
	return mux
}

func writeJSON(rw http.ResponseWriter, status int, body any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(body)
}

func decodeBody(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return httpErr(http.StatusBadRequest, "reading request body: %v", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return httpErr(http.StatusBadRequest, "Request body is empty")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return httpErr(http.StatusBadRequest, "Invalid JSON in request body: %v", err)
	}
	return nil
}

func (w *Worker) restRoot(r *http.Request) (int, any, error) {
	id := ""
	if md, err := w.store.admin.BrokerMetadata(r.Context()); err == nil {
		id = md.Cluster
	}
	return http.StatusOK, map[string]string{"version": Version, "commit": "", "kafka_cluster_id": id}, nil
}

// connectorInfo is Kafka Connect's ConnectorInfo.
type connectorInfo struct {
	Name   string   `json:"name"`
	Config Config   `json:"config"`
	Tasks  []TaskID `json:"tasks"`
	Type   string   `json:"type"`
}

type connectorState struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

type taskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// connectorStatus is Kafka Connect's ConnectorStateInfo.
type connectorStatus struct {
	Name      string         `json:"name"`
	Connector connectorState `json:"connector"`
	Tasks     []taskState    `json:"tasks"`
	Type      string         `json:"type"`
}

func connectorType(cfg Config) string {
	if p, ok := LookupPlugin(cfg["connector.class"]); ok {
		return p.Type
	}
	return "unknown"
}

// infoLocked builds a connector's info from the state.
func infoOf(st *clusterState, name string) (connectorInfo, bool) {
	cfg, ok := st.connectors[name]
	if !ok {
		return connectorInfo{}, false
	}
	info := connectorInfo{Name: name, Config: cfg, Tasks: []TaskID{}, Type: connectorType(cfg)}
	for i := range st.tasks[name] {
		info.Tasks = append(info.Tasks, TaskID{name, i})
	}
	return info, true
}

func statusOf(st *clusterState, name string) (connectorStatus, bool) {
	cfg, ok := st.connectors[name]
	if !ok {
		return connectorStatus{}, false
	}
	out := connectorStatus{Name: name, Type: connectorType(cfg), Tasks: []taskState{}}
	cs, ok := st.connStatus[name]
	if !ok {
		cs = Status{State: StateUnassigned}
	}
	out.Connector = connectorState{State: cs.State, WorkerID: cs.WorkerID, Trace: cs.Trace}
	for i := range st.tasks[name] {
		ts, ok := st.taskStatus[TaskID{name, i}]
		if !ok {
			ts = Status{State: StateUnassigned}
		}
		out.Tasks = append(out.Tasks, taskState{ID: i, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace})
	}
	return out, true
}

func notFound(name string) error {
	return httpErr(http.StatusNotFound, "Connector %s not found", name)
}

func (w *Worker) restListConnectors(r *http.Request) (int, any, error) {
	expand := map[string]bool{}
	for _, v := range r.URL.Query()["expand"] {
		for _, e := range strings.Split(v, ",") {
			expand[strings.TrimSpace(e)] = true
		}
	}
	var names []string
	out := map[string]map[string]any{}
	w.store.view(func(st *clusterState) {
		names = st.connectorNames()
		for _, n := range names {
			entry := map[string]any{}
			if expand["status"] {
				s, _ := statusOf(st, n)
				entry["status"] = s
			}
			if expand["info"] {
				i, _ := infoOf(st, n)
				entry["info"] = i
			}
			out[n] = entry
		}
	})
	if !expand["status"] && !expand["info"] {
		if names == nil {
			names = []string{}
		}
		return http.StatusOK, names, nil
	}
	return http.StatusOK, out, nil
}

type createRequest struct {
	Name         string `json:"name"`
	Config       Config `json:"config"`
	InitialState string `json:"initial_state"`
}

func (w *Worker) restCreateConnector(r *http.Request) (int, any, error) {
	var req createRequest
	if err := decodeBody(r, &req); err != nil {
		return 0, nil, err
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = strings.TrimSpace(req.Config["name"])
	}
	if name == "" {
		return 0, nil, httpErr(http.StatusBadRequest, "Connector name is required")
	}
	if err := checkName(name); err != nil {
		return 0, nil, err
	}
	if req.Config == nil {
		return 0, nil, httpErr(http.StatusBadRequest, "Connector config is required")
	}
	if n, ok := req.Config["name"]; ok && n != name {
		return 0, nil, httpErr(http.StatusBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", n, name)
	}
	target := ""
	switch strings.ToUpper(req.InitialState) {
	case "", "RUNNING":
	case "PAUSED":
		target = TargetPaused
	case "STOPPED":
		target = TargetStopped
	default:
		return 0, nil, httpErr(http.StatusBadRequest, "Invalid initial_state %q: want RUNNING, PAUSED or STOPPED", req.InitialState)
	}
	status, info, err := w.putConnector(r.Context(), name, req.Config, false, target)
	return status, info, err
}

func checkName(name string) error {
	if strings.ContainsAny(name, "/\\") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
		return httpErr(http.StatusBadRequest, "Connector name %q must not contain slashes or control characters", name)
	}
	return nil
}

// putConnector validates and writes a connector's configuration. It
// returns 201 when the connector is new, 200 when it was updated; with
// mustBeNew an existing name is 409.
func (w *Worker) putConnector(ctx context.Context, name string, cfg Config, allowUpdate bool, target string) (int, any, error) {
	cfg = copyConfig(cfg)
	cfg["name"] = name
	v := validateConnectorConfig(cfg)
	if n := v.errorCount(); n > 0 {
		class := cfg["connector.class"]
		return 0, nil, httpErr(http.StatusBadRequest,
			"Connector configuration is invalid and contains the following %d error(s):\n%s\nYou can also find the above list of errors at the endpoint `/connector-plugins/%s/config/validate`",
			n, strings.Join(v.messages(), "\n"), class)
	}
	if err := w.store.sync(ctx); err != nil {
		return 0, nil, err
	}
	exists := false
	w.store.view(func(st *clusterState) { _, exists = st.connectors[name] })
	if exists && !allowUpdate {
		return 0, nil, httpErr(http.StatusConflict, "Connector %s already exists", name)
	}
	if target != "" {
		if err := w.writeTarget(ctx, name, target); err != nil {
			return 0, nil, err
		}
	}
	if err := w.store.writeConfig(ctx, "connector-"+name, propertiesValue{Properties: cfg}); err != nil {
		return 0, nil, err
	}
	if err := w.store.sync(ctx); err != nil {
		return 0, nil, err
	}
	var info connectorInfo
	w.store.view(func(st *clusterState) { info, _ = infoOf(st, name) })
	if exists {
		return http.StatusOK, info, nil
	}
	return http.StatusCreated, info, nil
}

func copyConfig(cfg Config) Config {
	out := make(Config, len(cfg)+1)
	for k, v := range cfg {
		out[k] = v
	}
	return out
}

func (w *Worker) writeTarget(ctx context.Context, name, target string) error {
	v := targetStateValue{State: target, StateV2: target}
	if target == TargetStopped {
		v.State = TargetPaused // what Kafka writes for workers that predate STOPPED
	}
	return w.store.writeConfig(ctx, "target-state-"+name, v)
}

// lookup syncs with the topics and runs f on the state if the connector
// exists, else returns 404.
func (w *Worker) lookup(r *http.Request, f func(st *clusterState, name string)) error {
	name := r.PathValue("name")
	if err := w.store.sync(r.Context()); err != nil {
		return err
	}
	found := false
	w.store.view(func(st *clusterState) {
		if _, found = st.connectors[name]; found {
			f(st, name)
		}
	})
	if !found {
		return notFound(name)
	}
	return nil
}

func (w *Worker) restGetConnector(r *http.Request) (int, any, error) {
	var info connectorInfo
	err := w.lookup(r, func(st *clusterState, name string) { info, _ = infoOf(st, name) })
	return http.StatusOK, info, err
}

func (w *Worker) restGetConfig(r *http.Request) (int, any, error) {
	var cfg Config
	err := w.lookup(r, func(st *clusterState, name string) { cfg = copyConfig(st.connectors[name]) })
	return http.StatusOK, cfg, err
}

func (w *Worker) restPutConfig(r *http.Request) (int, any, error) {
	name := r.PathValue("name")
	if err := checkName(name); err != nil {
		return 0, nil, err
	}
	var cfg Config
	if err := decodeBody(r, &cfg); err != nil {
		return 0, nil, err
	}
	if n, ok := cfg["name"]; ok && n != name {
		return 0, nil, httpErr(http.StatusBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", n, name)
	}
	return w.putConnector(r.Context(), name, cfg, true, "")
}

func (w *Worker) restStatus(r *http.Request) (int, any, error) {
	var s connectorStatus
	err := w.lookup(r, func(st *clusterState, name string) { s, _ = statusOf(st, name) })
	return http.StatusOK, s, err
}

type taskInfo struct {
	ID     TaskID `json:"id"`
	Config Config `json:"config"`
}

func (w *Worker) restTasks(r *http.Request) (int, any, error) {
	out := []taskInfo{}
	err := w.lookup(r, func(st *clusterState, name string) {
		for i, cfg := range st.tasks[name] {
			out = append(out, taskInfo{ID: TaskID{name, i}, Config: copyConfig(cfg)})
		}
	})
	return http.StatusOK, out, err
}

func taskParam(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("task"))
	if err != nil || n < 0 {
		return 0, httpErr(http.StatusNotFound, "Task %s not found", r.PathValue("task"))
	}
	return n, nil
}

func (w *Worker) restTaskStatus(r *http.Request) (int, any, error) {
	n, err := taskParam(r)
	if err != nil {
		return 0, nil, err
	}
	var ts *taskState
	err = w.lookup(r, func(st *clusterState, name string) {
		s, _ := statusOf(st, name)
		if n < len(s.Tasks) {
			ts = &s.Tasks[n]
		}
	})
	if err != nil {
		return 0, nil, err
	}
	if ts == nil {
		return 0, nil, httpErr(http.StatusNotFound, "No status found for task %s-%d", r.PathValue("name"), n)
	}
	return http.StatusOK, ts, nil
}

func (w *Worker) restRestartTask(r *http.Request) (int, any, error) {
	n, err := taskParam(r)
	if err != nil {
		return 0, nil, err
	}
	exists := false
	if err := w.lookup(r, func(st *clusterState, name string) { exists = n < len(st.tasks[name]) }); err != nil {
		return 0, nil, err
	}
	if !exists {
		return 0, nil, httpErr(http.StatusNotFound, "Task %s-%d not found", r.PathValue("name"), n)
	}
	key := fmt.Sprintf("restart-task-%s-%d", r.PathValue("name"), n)
	if err := w.store.writeConfig(r.Context(), key, struct{}{}); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (w *Worker) restTarget(target string, code int) func(*http.Request) (int, any, error) {
	return func(r *http.Request) (int, any, error) {
		if err := w.lookup(r, func(*clusterState, string) {}); err != nil {
			return 0, nil, err
		}
		if err := w.writeTarget(r.Context(), r.PathValue("name"), target); err != nil {
			return 0, nil, err
		}
		return code, nil, nil
	}
}

func boolParam(r *http.Request, key string) (bool, error) {
	v := r.URL.Query().Get(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, httpErr(http.StatusBadRequest, "Invalid value %q for %s: want true or false", v, key)
	}
	return b, nil
}

func (w *Worker) restRestart(r *http.Request) (int, any, error) {
	includeTasks, err := boolParam(r, "includeTasks")
	if err != nil {
		return 0, nil, err
	}
	onlyFailed, err := boolParam(r, "onlyFailed")
	if err != nil {
		return 0, nil, err
	}
	var s connectorStatus
	if err := w.lookup(r, func(st *clusterState, name string) { s, _ = statusOf(st, name) }); err != nil {
		return 0, nil, err
	}
	name := r.PathValue("name")
	if err := w.store.writeConfig(r.Context(), "restart-connector-"+name, restartValue{IncludeTasks: includeTasks, OnlyFailed: onlyFailed}); err != nil {
		return 0, nil, err
	}
	if !includeTasks && !onlyFailed {
		return http.StatusNoContent, nil, nil
	}
	// 202 with the status as it will be: what restarts shows RESTARTING.
	if !onlyFailed || s.Connector.State == StateFailed {
		s.Connector.State = StateRestarting
	}
	if includeTasks {
		for i := range s.Tasks {
			if !onlyFailed || s.Tasks[i].State == StateFailed {
				s.Tasks[i].State = StateRestarting
			}
		}
	}
	return http.StatusAccepted, s, nil
}

func (w *Worker) restDeleteConnector(r *http.Request) (int, any, error) {
	var tasks int
	if err := w.lookup(r, func(st *clusterState, name string) { tasks = len(st.tasks[name]) }); err != nil {
		return 0, nil, err
	}
	name := r.PathValue("name")
	ctx := r.Context()
	if err := w.store.writeConfig(ctx, "connector-"+name, nil); err != nil {
		return 0, nil, err
	}
	if err := w.store.writeConfig(ctx, "target-state-"+name, nil); err != nil {
		return 0, nil, err
	}
	// Tombstones let compaction drop the deleted connector's statuses.
	_ = w.store.writeStatus(ctx, "status-connector-"+name, nil)
	for i := 0; i < tasks; i++ {
		_ = w.store.writeStatus(ctx, fmt.Sprintf("status-task-%s-%d", name, i), nil)
	}
	if err := w.store.sync(ctx); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (w *Worker) restTopics(r *http.Request) (int, any, error) {
	topics := []string{}
	err := w.lookup(r, func(st *clusterState, name string) {
		for t := range st.topics[name] {
			topics = append(topics, t)
		}
	})
	sort.Strings(topics)
	return http.StatusOK, map[string]map[string][]string{r.PathValue("name"): {"topics": topics}}, err
}

func (w *Worker) restResetTopics(r *http.Request) (int, any, error) {
	var topics []string
	if err := w.lookup(r, func(st *clusterState, name string) {
		for t := range st.topics[name] {
			topics = append(topics, t)
		}
	}); err != nil {
		return 0, nil, err
	}
	for _, t := range topics {
		if err := w.store.writeStatus(r.Context(), "topic-"+t+"-connector-"+r.PathValue("name"), nil); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusAccepted, nil, nil
}

// offsetEntry is one element of KIP-875's offsets payload.
type offsetEntry struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

type offsetsBody struct {
	Offsets []offsetEntry `json:"offsets"`
}

func (w *Worker) restGetOffsets(r *http.Request) (int, any, error) {
	var typ string
	out := offsetsBody{Offsets: []offsetEntry{}}
	if err := w.lookup(r, func(st *clusterState, name string) {
		typ = connectorType(st.connectors[name])
		for _, k := range sortedMapKeys(st.offsets[name]) {
			o := st.offsets[name][k]
			out.Offsets = append(out.Offsets, offsetEntry{Partition: o.Partition, Offset: o.Offset})
		}
	}); err != nil {
		return 0, nil, err
	}
	if typ != "sink" {
		return http.StatusOK, out, nil
	}
	group := "connect-" + r.PathValue("name")
	offsets, err := w.store.admin.FetchOffsets(r.Context(), group)
	if err != nil {
		return 0, nil, fmt.Errorf("fetching offsets of group %s: %w", group, err)
	}
	out.Offsets = []offsetEntry{}
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 {
			return
		}
		out.Offsets = append(out.Offsets, offsetEntry{
			Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": o.Partition},
			Offset:    map[string]any{"kafka_offset": o.At},
		})
	})
	sort.Slice(out.Offsets, func(i, j int) bool {
		a, b := out.Offsets[i].Partition, out.Offsets[j].Partition
		if a["kafka_topic"] != b["kafka_topic"] {
			return a["kafka_topic"].(string) < b["kafka_topic"].(string)
		}
		return a["kafka_partition"].(int32) < b["kafka_partition"].(int32)
	})
	return http.StatusOK, out, nil
}

// stoppedConnector checks KIP-875's precondition for changing offsets.
func (w *Worker) stoppedConnector(r *http.Request) (string, error) {
	var typ, target string
	var tasks int
	if err := w.lookup(r, func(st *clusterState, name string) {
		typ = connectorType(st.connectors[name])
		target = st.targetStates[name]
		tasks = len(st.tasks[name])
	}); err != nil {
		return "", err
	}
	if target != TargetStopped || tasks > 0 {
		return "", httpErr(http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", r.PathValue("name"))
	}
	return typ, nil
}

func (w *Worker) restAlterOffsets(r *http.Request) (int, any, error) {
	typ, err := w.stoppedConnector(r)
	if err != nil {
		return 0, nil, err
	}
	var body offsetsBody
	if err := decodeBody(r, &body); err != nil {
		return 0, nil, err
	}
	if len(body.Offsets) == 0 {
		return 0, nil, httpErr(http.StatusBadRequest, "The offsets to be modified must be specified")
	}
	name := r.PathValue("name")
	if typ == "sink" {
		if err := w.alterSinkOffsets(r.Context(), name, body.Offsets); err != nil {
			return 0, nil, err
		}
	} else {
		offsets := make([]sourceOffset, 0, len(body.Offsets))
		for _, e := range body.Offsets {
			if e.Partition == nil {
				return 0, nil, httpErr(http.StatusBadRequest, "Source partitions may not be null")
			}
			offsets = append(offsets, sourceOffset{Partition: e.Partition, Offset: e.Offset})
		}
		if err := w.store.writeOffsets(r.Context(), name, offsets); err != nil {
			return 0, nil, err
		}
		if err := w.store.sync(r.Context()); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, map[string]string{"message": "The offsets for this connector have been altered successfully"}, nil
}

func (w *Worker) alterSinkOffsets(ctx context.Context, name string, entries []offsetEntry) error {
	group := "connect-" + name
	commit := kadm.Offsets{}
	toDelete := kadm.TopicsSet{}
	for _, e := range entries {
		topic, _ := e.Partition["kafka_topic"].(string)
		pf, ok := e.Partition["kafka_partition"].(float64)
		if topic == "" || !ok {
			return httpErr(http.StatusBadRequest, "Sink connector offsets need partitions of the form {\"kafka_topic\": string, \"kafka_partition\": int}")
		}
		if e.Offset == nil {
			toDelete.Add(topic, int32(pf))
			continue
		}
		of, ok := e.Offset["kafka_offset"].(float64)
		if !ok || of < 0 {
			return httpErr(http.StatusBadRequest, "Sink connector offsets need offsets of the form {\"kafka_offset\": non-negative int}")
		}
		commit.Add(kadm.Offset{Topic: topic, Partition: int32(pf), At: int64(of), LeaderEpoch: -1})
	}
	if len(commit) > 0 {
		resp, err := w.store.admin.CommitOffsets(ctx, group, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return fmt.Errorf("committing offsets of group %s: %w", group, err)
		}
	}
	if len(toDelete) > 0 {
		resp, err := w.store.admin.DeleteOffsets(ctx, group, toDelete)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return fmt.Errorf("deleting offsets of group %s: %w", group, err)
		}
	}
	return nil
}

func (w *Worker) restResetOffsets(r *http.Request) (int, any, error) {
	typ, err := w.stoppedConnector(r)
	if err != nil {
		return 0, nil, err
	}
	name := r.PathValue("name")
	if typ == "sink" {
		group := "connect-" + name
		resp, err := w.store.admin.DeleteGroups(r.Context(), group)
		if err != nil {
			return 0, nil, fmt.Errorf("deleting group %s: %w", group, err)
		}
		if gerr := resp.Error(); gerr != nil && !strings.Contains(gerr.Error(), "GROUP_ID_NOT_FOUND") {
			return 0, nil, fmt.Errorf("deleting group %s: %w", group, gerr)
		}
	} else {
		var tombstones []sourceOffset
		w.store.view(func(st *clusterState) {
			for _, o := range st.offsets[name] {
				tombstones = append(tombstones, sourceOffset{Partition: o.Partition})
			}
		})
		if len(tombstones) > 0 {
			if err := w.store.writeOffsets(r.Context(), name, tombstones); err != nil {
				return 0, nil, err
			}
		}
		if err := w.store.sync(r.Context()); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, map[string]string{"message": "The offsets for this connector have been reset successfully"}, nil
}

type pluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// restPlugins lists the connector classes (each name and alias), and with
// connectorsOnly=false (KIP-769) the converters too. Strata has no header
// converters (headers travel as bytes), transformations or predicates, so
// no plugin of those types is listed.
func (w *Worker) restPlugins(r *http.Request) (int, any, error) {
	connectorsOnly := true
	if v := r.URL.Query().Get("connectorsOnly"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return 0, nil, httpErr(http.StatusBadRequest, "Invalid value %q for connectorsOnly: want true or false", v)
		}
		connectorsOnly = b
	}
	out := []pluginInfo{}
	for _, p := range Plugins() {
		for _, name := range append([]string{p.Class}, p.Aliases...) {
			out = append(out, pluginInfo{Class: name, Type: p.Type, Version: p.Version})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Type < out[j].Type || out[i].Type == out[j].Type && out[i].Class < out[j].Class // sinks, sources, each by class, as Kafka
	})
	if !connectorsOnly {
		for _, class := range []string{AvroConverterClass, ByteArrayConverterClass, JSONConverterClass, JSONSchemaConverterClass, ProtobufConverterClass, StringConverterClass} {
			out = append(out, pluginInfo{Class: class, Type: "converter", Version: Version})
		}
	}
	return http.StatusOK, out, nil
}

// configKeyInfo is Kafka Connect's ConfigKeyInfo.
type configKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         string   `json:"group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
	Order         int      `json:"order"`
}

func keyInfo(k ConfigKey, group string, order int) configKeyInfo {
	ki := configKeyInfo{Name: k.Name, Type: k.Type, Required: k.Required, Importance: k.Importance,
		Documentation: k.Documentation, Group: group, Width: "NONE", DisplayName: k.Name, Dependents: []string{}, Order: order}
	if ki.Type == "" {
		ki.Type = "STRING"
	}
	if ki.Importance == "" {
		ki.Importance = "MEDIUM"
	}
	if k.Default != "" || !k.Required {
		d := k.Default
		if d != "" {
			ki.DefaultValue = &d
		}
	}
	return ki
}

func pluginParam(r *http.Request) (*Plugin, error) {
	t := r.PathValue("type")
	p, ok := LookupPlugin(t)
	if !ok {
		return nil, httpErr(http.StatusNotFound, "Unknown plugin %s.", t)
	}
	return p, nil
}

func (w *Worker) restPluginConfig(r *http.Request) (int, any, error) {
	p, err := pluginParam(r)
	if err != nil {
		return 0, nil, err
	}
	out := []configKeyInfo{}
	for i, k := range p.New().ConfigKeys() {
		out = append(out, keyInfo(k, "", i+1))
	}
	return http.StatusOK, out, nil
}

type validateValue struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

type validateConfig struct {
	Definition configKeyInfo `json:"definition"`
	Value      validateValue `json:"value"`
}

type validateResponse struct {
	Name       string           `json:"name"`
	ErrorCount int              `json:"error_count"`
	Groups     []string         `json:"groups"`
	Configs    []validateConfig `json:"configs"`
}

func (w *Worker) restValidate(r *http.Request) (int, any, error) {
	p, err := pluginParam(r)
	if err != nil {
		return 0, nil, err
	}
	var cfg Config
	if err := decodeBody(r, &cfg); err != nil {
		return 0, nil, err
	}
	if c, ok := cfg["connector.class"]; ok {
		if q, found := LookupPlugin(c); !found || q != p {
			return 0, nil, httpErr(http.StatusBadRequest, "Included connector type %s does not match request type %s", c, r.PathValue("type"))
		}
	} else {
		// Kafka refuses a config without connector.class; the path names it.
		cfg = copyConfig(cfg)
		cfg["connector.class"] = r.PathValue("type")
	}
	v := validateConnectorConfig(cfg)
	// As Kafka: the name is the connector class the config gives (the
	// name or alias used), not the plugin's canonical name.
	resp := validateResponse{Name: cfg["connector.class"], ErrorCount: v.errorCount(), Groups: []string{}, Configs: []validateConfig{}}
	seenGroup := map[string]bool{}
	for i, k := range v.keys {
		g := v.groups[k.Name]
		if !seenGroup[g] {
			seenGroup[g] = true
			resp.Groups = append(resp.Groups, g)
		}
		val := validateValue{Name: k.Name, RecommendedValues: []string{}, Errors: v.errors[k.Name], Visible: true}
		if val.Errors == nil {
			val.Errors = []string{}
		}
		if s, ok := cfg[k.Name]; ok {
			val.Value = &s
		} else if k.Default != "" {
			d := k.Default
			val.Value = &d
		}
		resp.Configs = append(resp.Configs, validateConfig{Definition: keyInfo(k, g, i+1), Value: val})
	}
	return http.StatusOK, resp, nil
}
