package connect

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// This file is the cluster state every worker rebuilds from the three
// internal topics, and the codecs of their records. The formats are Kafka
// Connect's, so a Connect operator finds familiar data:
//
//	connect-configs (1 partition, compacted)
//	  connector-<name>          {"properties":{…}}             null = deleted
//	  task-<name>-<n>           {"properties":{…}}
//	  commit-<name>             {"tasks":<count>}               makes task-<name>-* live
//	  target-state-<name>       {"state":"STARTED|PAUSED","state.v2":"STARTED|PAUSED|STOPPED"}
//	  restart-connector-<name>  {"include-tasks":bool,"only-failed":bool}
//	  restart-task-<name>-<n>   {}                              (Strata's; Kafka ignores it)
//
//	connect-offsets (25 partitions, compacted)
//	  ["<connector>",{<source partition>}]  {<source offset>}   null = reset
//
//	connect-status (5 partitions, compacted)
//	  status-connector-<name>   {"state":…,"trace":…,"worker_id":"host:port","generation":g}
//	  status-task-<name>-<n>    the same
//	  topic-<topic>-connector-<name>  {"topic":{"name","connector","task","discoverTimestamp"}}

// Target states a connector can be asked to be in.
const (
	TargetStarted = "STARTED"
	TargetPaused  = "PAUSED"
	TargetStopped = "STOPPED"
)

// Runtime states reported in the status topic and the REST API.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// TaskID names one task of a connector.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (id TaskID) String() string { return id.Connector + "-" + strconv.Itoa(id.Task) }

// Status is one status-topic record.
type Status struct {
	State      string `json:"state"`
	Trace      string `json:"trace,omitempty"`
	WorkerID   string `json:"worker_id"`
	Generation int32  `json:"generation"`
}

// restartRequest is a restart-connector or restart-task record with its
// config-topic offset, so a unit started after it is not restarted again.
type restartRequest struct {
	Offset       int64
	Connector    string
	Task         int // -1: the connector (and maybe its tasks)
	IncludeTasks bool
	OnlyFailed   bool
}

// sourceOffset is one committed source offset.
type sourceOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// clusterState is what the three topics say. Methods are pure.
type clusterState struct {
	connectors   map[string]Config
	targetStates map[string]string
	pendingTasks map[string]map[int]Config
	tasks        map[string][]Config
	restarts     []restartRequest
	configEnd    int64 // next config-topic offset

	connStatus map[string]Status
	taskStatus map[TaskID]Status
	topics     map[string]map[string]bool

	offsets map[string]map[string]sourceOffset // connector → canonical partition → offset
}

func newClusterState() *clusterState {
	return &clusterState{
		connectors:   map[string]Config{},
		targetStates: map[string]string{},
		pendingTasks: map[string]map[int]Config{},
		tasks:        map[string][]Config{},
		connStatus:   map[string]Status{},
		taskStatus:   map[TaskID]Status{},
		topics:       map[string]map[string]bool{},
		offsets:      map[string]map[string]sourceOffset{},
	}
}

type propertiesValue struct {
	Properties map[string]string `json:"properties"`
}

type commitValue struct {
	Tasks int `json:"tasks"`
}

type targetStateValue struct {
	State   string `json:"state"`
	StateV2 string `json:"state.v2,omitempty"`
}

type restartValue struct {
	IncludeTasks bool `json:"include-tasks"`
	OnlyFailed   bool `json:"only-failed"`
}

type topicStatusValue struct {
	Topic struct {
		Name      string `json:"name"`
		Connector string `json:"connector"`
		Task      int    `json:"task"`
		Discover  int64  `json:"discoverTimestamp"`
	} `json:"topic"`
}

// splitTaskKey splits "<name>-<n>".
func splitTaskKey(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return s[:i], n, true
}

// applyConfig applies one config-topic record. It returns an error for a
// record it cannot read (the caller logs and goes on, as Kafka does).
func (s *clusterState) applyConfig(offset int64, key string, value []byte) error {
	s.configEnd = offset + 1
	switch {
	case strings.HasPrefix(key, "connector-"):
		name := strings.TrimPrefix(key, "connector-")
		if value == nil {
			delete(s.connectors, name)
			delete(s.targetStates, name)
			delete(s.tasks, name)
			delete(s.pendingTasks, name)
			return nil
		}
		var v propertiesValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		s.connectors[name] = Config(v.Properties)
		if _, ok := s.targetStates[name]; !ok {
			s.targetStates[name] = TargetStarted
		}
	case strings.HasPrefix(key, "task-"):
		name, n, ok := splitTaskKey(strings.TrimPrefix(key, "task-"))
		if !ok {
			return fmt.Errorf("bad key %q", key)
		}
		if value == nil {
			return nil
		}
		var v propertiesValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if s.pendingTasks[name] == nil {
			s.pendingTasks[name] = map[int]Config{}
		}
		s.pendingTasks[name][n] = Config(v.Properties)
	case strings.HasPrefix(key, "commit-"):
		name := strings.TrimPrefix(key, "commit-")
		if value == nil {
			return nil
		}
		var v commitValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		tasks := make([]Config, 0, v.Tasks)
		for i := 0; i < v.Tasks; i++ {
			cfg, ok := s.pendingTasks[name][i]
			if !ok {
				if i < len(s.tasks[name]) {
					cfg = s.tasks[name][i]
				} else {
					return fmt.Errorf("%s: task %d of %d missing", key, i, v.Tasks)
				}
			}
			tasks = append(tasks, cfg)
		}
		s.tasks[name] = tasks
		delete(s.pendingTasks, name)
	case strings.HasPrefix(key, "target-state-"):
		name := strings.TrimPrefix(key, "target-state-")
		if value == nil {
			delete(s.targetStates, name)
			return nil
		}
		var v targetStateValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		state := v.StateV2
		if state == "" {
			state = v.State
		}
		switch state {
		case TargetStarted, TargetPaused, TargetStopped:
			s.targetStates[name] = state
		default:
			return fmt.Errorf("%s: unknown state %q", key, state)
		}
	case strings.HasPrefix(key, "restart-connector-"):
		if value == nil {
			return nil
		}
		var v restartValue
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		s.restarts = append(s.restarts, restartRequest{Offset: offset, Connector: strings.TrimPrefix(key, "restart-connector-"),
			Task: -1, IncludeTasks: v.IncludeTasks, OnlyFailed: v.OnlyFailed})
	case strings.HasPrefix(key, "restart-task-"):
		name, n, ok := splitTaskKey(strings.TrimPrefix(key, "restart-task-"))
		if !ok || value == nil {
			return nil
		}
		s.restarts = append(s.restarts, restartRequest{Offset: offset, Connector: name, Task: n})
	}
	if len(s.restarts) > 1000 {
		s.restarts = s.restarts[len(s.restarts)-1000:]
	}
	return nil
}

// applyStatus applies one status-topic record; a status from an older
// generation than the one held is ignored (a worker that lost a task may
// report it late).
func (s *clusterState) applyStatus(key string, value []byte) error {
	switch {
	case strings.HasPrefix(key, "status-connector-"):
		name := strings.TrimPrefix(key, "status-connector-")
		if value == nil {
			delete(s.connStatus, name)
			return nil
		}
		var st Status
		if err := json.Unmarshal(value, &st); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if old, ok := s.connStatus[name]; ok && st.Generation < old.Generation && old.WorkerID != st.WorkerID {
			return nil
		}
		s.connStatus[name] = st
	case strings.HasPrefix(key, "status-task-"):
		name, n, ok := splitTaskKey(strings.TrimPrefix(key, "status-task-"))
		if !ok {
			return fmt.Errorf("bad key %q", key)
		}
		id := TaskID{name, n}
		if value == nil {
			delete(s.taskStatus, id)
			return nil
		}
		var st Status
		if err := json.Unmarshal(value, &st); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if old, ok := s.taskStatus[id]; ok && st.Generation < old.Generation && old.WorkerID != st.WorkerID {
			return nil
		}
		s.taskStatus[id] = st
	case strings.HasPrefix(key, "topic-"):
		rest := strings.TrimPrefix(key, "topic-")
		i := strings.LastIndex(rest, "-connector-")
		if i < 0 {
			return nil
		}
		topic, name := rest[:i], rest[i+len("-connector-"):]
		if value == nil {
			delete(s.topics[name], topic)
			return nil
		}
		if s.topics[name] == nil {
			s.topics[name] = map[string]bool{}
		}
		s.topics[name][topic] = true
	}
	return nil
}

// offsetKey encodes a source partition as the offset topic's key.
func offsetKey(connector string, partition map[string]any) ([]byte, error) {
	return json.Marshal([]any{connector, partition})
}

// canonicalPartition is the map key for a source partition.
func canonicalPartition(partition map[string]any) string {
	b, err := json.Marshal(partition)
	if err != nil {
		return fmt.Sprint(partition)
	}
	return string(b)
}

// applyOffset applies one offset-topic record.
func (s *clusterState) applyOffset(key, value []byte) error {
	var raw []any
	if err := unmarshalNumberInto(key, &raw); err != nil || len(raw) != 2 {
		return fmt.Errorf("offset key %q: want [connector, partition]", key)
	}
	name, ok := raw[0].(string)
	partition, ok2 := schemalessFromJSON(raw[1]).(map[string]any)
	if !ok || !ok2 {
		return fmt.Errorf("offset key %q: want [connector, partition]", key)
	}
	canon := canonicalPartition(partition)
	if value == nil {
		delete(s.offsets[name], canon)
		return nil
	}
	var off any
	if err := unmarshalNumber(value, &off); err != nil {
		return fmt.Errorf("offset value for %q: %w", key, err)
	}
	offMap, ok := schemalessFromJSON(off).(map[string]any)
	if !ok {
		return fmt.Errorf("offset value for %q is not an object", key)
	}
	if s.offsets[name] == nil {
		s.offsets[name] = map[string]sourceOffset{}
	}
	s.offsets[name][canon] = sourceOffset{Partition: partition, Offset: offMap}
	return nil
}

func unmarshalNumberInto(data []byte, out *[]any) error {
	var v any
	if err := unmarshalNumber(data, &v); err != nil {
		return err
	}
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("not an array")
	}
	*out = arr
	return nil
}

// connectorNames lists the configured connectors in order.
func (s *clusterState) connectorNames() []string {
	names := make([]string, 0, len(s.connectors))
	for n := range s.connectors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// maxStatusGeneration is the highest generation any status record carries.
func (s *clusterState) maxStatusGeneration() int32 {
	var g int32
	for _, st := range s.connStatus {
		g = max(g, st.Generation)
	}
	for _, st := range s.taskStatus {
		g = max(g, st.Generation)
	}
	return g
}
