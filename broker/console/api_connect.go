package console

// Connectors and stream jobs.
//
// Connectors: the console is an HTTP client of a Kafka-Connect-compatible
// REST API (Config.Connect: the embedded worker of `strata server`, or any
// worker named by console.connect.url); it never imports connect. Reads
// aggregate GET /connectors?expand=status&expand=info; actions are the
// REST API's own (restart, pause, resume, task restart), answered with the
// worker's status code and error message. No worker configured is not an
// error: GET /api/v1/connect answers {"configured": false}.
//
// Stream jobs: a job's consumer group is its application id. The jobs are
// the ones this node runs (Config.StreamJobs, from --jobs-dir) when known,
// else the groups whose members' client id is strata-streams-<id>. State,
// members and lag come from kadm.Lag; records in/out, errors and restarts
// from the strata_stream_* series of Config.StreamMetrics (this process's
// jobs only). A job cannot be restarted remotely: it restarts itself after
// an error (1 s to 30 s), or its process is restarted.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ConnectConfig names the Kafka Connect REST API the connectors pages
// use; a zero URL means none is configured.
type ConnectConfig struct {
	URL string // base URL, http://host:8083
	// Client sends the requests (its TLS config trusts the worker); nil:
	// a plain client.
	Client *http.Client
	// Username and Password, when Username is set, are sent as HTTP basic
	// authentication.
	Username, Password string
}

// StreamJob is a stream job the node runs.
type StreamJob struct {
	Name          string // the job's name (the metrics' job label)
	ApplicationID string // its consumer group
}

// streamsClientPrefix starts the client id of a stream job's clients
// (streams/app.go: strata-streams-<application id>, then @<query address>
// when the job serves interactive queries).
const streamsClientPrefix = "strata-streams-"

// connectTimeout bounds one round trip to the Connect REST API.
const connectTimeout = 10 * time.Second

func (c *Console) connectConfig() ConnectConfig {
	if c.cfg.Connect == nil {
		return ConnectConfig{}
	}
	return c.cfg.Connect()
}

// connectError is a Connect REST API's error answer.
type connectError struct {
	status  int
	message string
}

func (e *connectError) Error() string { return e.message }

// connectDo sends method path to the Connect REST API and decodes a JSON
// answer into out (nil: ignored).
func (c *Console) connectDo(ctx context.Context, cc ConnectConfig, method, path string, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(cc.URL, "/")+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if cc.Username != "" {
		req.SetBasicAuth(cc.Username, cc.Password)
	}
	client := cc.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &e) != nil || e.Message == "" {
			e.Message = resp.Status
		}
		return resp.StatusCode, &connectError{status: resp.StatusCode, message: e.Message}
	}
	if out != nil && len(body) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, fmt.Errorf("connect REST answer: %w", err)
		}
	}
	return resp.StatusCode, nil
}

// writeConnectError answers err: the worker's 4xx passed on, anything else
// 502 (504 on a timeout).
func (c *Console) writeConnectError(w http.ResponseWriter, doing string, err error) {
	var ce *connectError
	if errors.As(err, &ce) && ce.status >= 400 && ce.status < 500 {
		writeError(w, ce.status, "", "%s: %s", doing, ce.message)
		return
	}
	status := http.StatusBadGateway
	if errors.Is(err, context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	c.cfg.Logger.Warn("console: Connect REST request failed", "doing", doing, "err", err)
	writeError(w, status, "", "%s: %v", doing, err)
}

type connectTaskJSON struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"workerId"`
	Trace    string `json:"trace,omitempty"`
}

type connectorJSON struct {
	Name     string            `json:"name"`
	Type     string            `json:"type"`
	Class    string            `json:"class"`
	State    string            `json:"state"`
	WorkerID string            `json:"workerId"`
	Trace    string            `json:"trace,omitempty"`
	Tasks    []connectTaskJSON `json:"tasks"`
	Config   map[string]string `json:"config"`
}

// connectStatusWire is Kafka Connect's ConnectorStateInfo and ConnectorInfo.
type connectStatusWire struct {
	Status struct {
		Type      string `json:"type"`
		Connector struct {
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
			Trace    string `json:"trace"`
		} `json:"connector"`
		Tasks []struct {
			ID       int    `json:"id"`
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
			Trace    string `json:"trace"`
		} `json:"tasks"`
	} `json:"status"`
	Info struct {
		Type   string            `json:"type"`
		Config map[string]string `json:"config"`
	} `json:"info"`
}

func (s connectStatusWire) toJSON(name string) connectorJSON {
	out := connectorJSON{
		Name: name, Type: s.Status.Type, Class: s.Info.Config["connector.class"],
		State: s.Status.Connector.State, WorkerID: s.Status.Connector.WorkerID, Trace: s.Status.Connector.Trace,
		Tasks: []connectTaskJSON{}, Config: s.Info.Config,
	}
	if out.Type == "" {
		out.Type = s.Info.Type
	}
	if out.Config == nil {
		out.Config = map[string]string{}
	}
	// The worker's own secrets stay there: config values Kafka would
	// mask are not shown.
	for k := range out.Config {
		if strings.Contains(k, "password") || strings.Contains(k, "secret") {
			out.Config[k] = "(hidden)"
		}
	}
	for _, t := range s.Status.Tasks {
		out.Tasks = append(out.Tasks, connectTaskJSON{ID: t.ID, State: t.State, WorkerID: t.WorkerID, Trace: t.Trace})
	}
	return out
}

// listConnectors: GET /api/v1/connect: whether a worker is configured
// and every connector with its status, tasks (traces included) and config.
func (c *Console) listConnectors(w http.ResponseWriter, r *http.Request) {
	cc := c.connectConfig()
	out := struct {
		Configured bool            `json:"configured"`
		URL        string          `json:"url,omitempty"`
		Connectors []connectorJSON `json:"connectors"`
	}{Configured: cc.URL != "", URL: cc.URL, Connectors: []connectorJSON{}}
	if cc.URL == "" {
		writeJSON(w, http.StatusOK, out)
		return
	}
	all := map[string]connectStatusWire{}
	if _, err := c.connectDo(r.Context(), cc, "GET", "/connectors?expand=status&expand=info", &all); err != nil {
		c.writeConnectError(w, "listing connectors", err)
		return
	}
	for name, s := range all {
		out.Connectors = append(out.Connectors, s.toJSON(name))
	}
	sort.Slice(out.Connectors, func(i, j int) bool { return out.Connectors[i].Name < out.Connectors[j].Name })
	writeJSON(w, http.StatusOK, out)
}

// connectAction: POST /api/v1/connect/{name}/{action}: restart (with
// includeTasks and onlyFailed passed on), pause, resume; POST
// /api/v1/connect/{name}/tasks/{task}/restart. 204 on success; 404 when
// no worker is configured or the worker does not know the connector.
func (c *Console) connectAction(w http.ResponseWriter, r *http.Request) {
	cc := c.connectConfig()
	if cc.URL == "" {
		writeError(w, http.StatusNotFound, "", "no Kafka Connect worker is configured (console.connect.url)")
		return
	}
	name, action := r.PathValue("name"), r.PathValue("action")
	base := "/connectors/" + url.PathEscape(name)
	var method, path string
	switch action {
	case "pause", "resume":
		method, path = "PUT", base+"/"+action
	case "restart":
		q := url.Values{}
		for _, k := range []string{"includeTasks", "onlyFailed"} {
			if v := r.URL.Query().Get(k); v != "" {
				if _, err := strconv.ParseBool(v); err != nil {
					writeError(w, http.StatusBadRequest, "", "%s=%q: want true or false", k, v)
					return
				}
				q.Set(k, v)
			}
		}
		method, path = "POST", base+"/restart"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
	case "":
		task, err := strconv.Atoi(r.PathValue("task"))
		if err != nil || task < 0 {
			writeError(w, http.StatusBadRequest, "", "task %q: want a task number", r.PathValue("task"))
			return
		}
		action = "restart task " + strconv.Itoa(task)
		method, path = "POST", base+"/tasks/"+strconv.Itoa(task)+"/restart"
	default:
		writeError(w, http.StatusNotFound, "", "no such action %q: restart, pause or resume", action)
		return
	}
	if _, err := c.connectDo(r.Context(), cc, method, path, nil); err != nil {
		c.writeConnectError(w, fmt.Sprintf("%s of connector %q", action, name), err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type streamJobJSON struct {
	Name          string `json:"name"`
	ApplicationID string `json:"applicationId"`
	State         string `json:"state"`
	Members       int    `json:"members"`
	Lag           int64  `json:"lag"` // -1: unknown
	// Counters of this node's instances (null: no metrics here).
	RecordsIn  *int64 `json:"recordsIn"`
	RecordsOut *int64 `json:"recordsOut"`
	Errors     *int64 `json:"errors"`
	Restarts   *int64 `json:"restarts"`
	Error      string `json:"error,omitempty"`
}

// listStreamJobs: GET /api/v1/streams: every stream job with group state,
// members, lag and its counters.
func (c *Console) listStreamJobs(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	adm := kadm.NewClient(cl)
	var jobs []StreamJob
	source := "groups"
	if c.cfg.StreamJobs != nil {
		jobs = c.cfg.StreamJobs()
	}
	if jobs != nil {
		source = "jobs-dir"
	} else {
		found, err := discoverStreamJobs(ctx, adm)
		if err != nil {
			c.writeKafkaError(w, "listing groups", err)
			return
		}
		jobs = found
	}
	out := struct {
		Source string          `json:"source"` // jobs-dir: this node's jobs; groups: found by client id
		Jobs   []streamJobJSON `json:"jobs"`
	}{Source: source, Jobs: []streamJobJSON{}}
	if len(jobs) == 0 {
		writeJSON(w, http.StatusOK, out)
		return
	}
	groups := make([]string, len(jobs))
	for i, j := range jobs {
		groups[i] = j.ApplicationID
	}
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		c.writeKafkaError(w, "describing stream jobs' groups", err)
		return
	}
	counts := streamCounts(c.cfg.StreamMetrics)
	for _, j := range jobs {
		sj := streamJobJSON{Name: j.Name, ApplicationID: j.ApplicationID, State: "unknown", Lag: -1}
		if l, ok := lags[j.ApplicationID]; ok {
			if err := l.Error(); err != nil {
				sj.Error = err.Error()
			} else {
				sj.State, sj.Members, sj.Lag = l.State, len(l.Members), l.Lag.Total()
				if sj.State == "Dead" || sj.State == "" {
					sj.State = "not running"
				}
			}
		}
		if m, ok := counts[j.Name]; ok {
			sj.RecordsIn, sj.RecordsOut = m.count("strata_stream_records_in_total"), m.count("strata_stream_records_out_total")
			sj.Errors, sj.Restarts = m.count("strata_stream_errors_total"), m.count("strata_stream_restarts_total")
		}
		out.Jobs = append(out.Jobs, sj)
	}
	writeJSON(w, http.StatusOK, out)
}

// discoverStreamJobs finds the groups whose members are stream job
// clients; a job with no running member is not found.
func discoverStreamJobs(ctx context.Context, adm *kadm.Client) ([]StreamJob, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	described, err := adm.DescribeGroups(ctx, listed.Groups()...)
	if err != nil {
		return nil, err
	}
	jobs := []StreamJob{}
	for _, g := range described.Sorted() {
		for _, m := range g.Members {
			id, ok := strings.CutPrefix(m.ClientID, streamsClientPrefix)
			id, _, _ = strings.Cut(id, "@") // @<query address> (streams/query.go)
			if ok && id == g.Group {
				jobs = append(jobs, StreamJob{Name: g.Group, ApplicationID: g.Group})
				break
			}
		}
	}
	return jobs, nil
}

// metricCounts sums a job's series by metric name.
type metricCounts map[string]float64

func (m metricCounts) count(name string) *int64 {
	v := int64(m[name])
	return &v
}

// streamCounts reads the strata_stream_* series of g by job label.
func streamCounts(g prometheus.Gatherer) map[string]metricCounts {
	out := map[string]metricCounts{}
	if g == nil {
		return out
	}
	families, _ := g.Gather() // a partial gather still counts
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "strata_stream_") {
			continue
		}
		for _, m := range f.GetMetric() {
			job := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "job" {
					job = l.GetValue()
				}
			}
			if job == "" {
				continue
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
			if out[job] == nil {
				out[job] = metricCounts{}
			}
			out[job][f.GetName()] += v
		}
	}
	return out
}
