package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config is what the console needs from the node that serves it.
type Config struct {
	// NewClient makes a Kafka client for this node's own listener with
	// the given extra options (seed brokers, TLS and SASL included). The
	// console keeps one for admin requests and produce and makes
	// short-lived ones to browse a partition.
	NewClient func(opts ...kgo.Opt) (*kgo.Client, error)
	// NodeID is the id of the node serving the console.
	NodeID int32
	// Logger receives failures the API reports as 5xx; nil discards.
	Logger *slog.Logger
	// Connect names the Kafka Connect REST API of the connectors pages
	// (api_connect.go), read on each request; nil or a zero URL: none.
	Connect func() ConnectConfig
	// StreamJobs lists the stream jobs this node runs, nil when it does
	// not know (the jobs are then found by their clients' ids).
	StreamJobs func() []StreamJob
	// StreamMetrics gathers the jobs' strata_stream_* series; nil: none.
	StreamMetrics prometheus.Gatherer
	// GroupLag, when set, is the node's lag evaluator's view of a group
	// (broker/lag): its Burrow-style status and each partition's lag in
	// seconds. It returns ErrGroupNotFound for a group it does not know.
	// nil: groups show lag in records only.
	GroupLag func(ctx context.Context, group string) (GroupLag, error)
	// RemoteLog, when set, is a tiered partition's remote log as this
	// node knows it: its bytes in the bucket (strata_remote_log_size_bytes)
	// and the offset after its last uploaded record; ok is false when it
	// does not know.
	RemoteLog func(topic string, partition int32) (RemoteLogState, bool)
	// LagHistoryInterval is how often every group's lag is sampled into
	// the last hour's history (lag_history.go); 0 means 30 s, negative
	// means no sampler (a group's history then holds only what its page
	// measured).
	LagHistoryInterval time.Duration
}

// RemoteLogState is what Config.RemoteLog knows of a tiered partition.
type RemoteLogState struct {
	Bytes      int64 // the remote segments' size
	NextOffset int64 // the offset after the last record in the bucket
}

// GroupLag is the lag evaluator's view of one group (Config.GroupLag).
type GroupLag struct {
	Status     string // OK, WARN, STOP, STALL or REWIND
	Severity   string // OK, WARN or ERR
	Partitions []PartitionLag
}

// PartitionLag is one partition of a GroupLag.
type PartitionLag struct {
	Topic      string
	Partition  int32
	Status     string
	LagSeconds float64 // age of the next record to read; -1: unknown
}

// ErrGroupNotFound is what Config.GroupLag returns for a group it does not
// know.
var ErrGroupNotFound = errors.New("console: group not found")

// requestTimeout bounds each API request's Kafka round trips.
const requestTimeout = 10 * time.Second

// Console is the web console of one node: its UI assets and JSON API.
type Console struct {
	cfg Config
	// snapshots is the Metadata of every topic, shared by the cluster
	// page and the topic list for a short interval (snapshot.go).
	snapshots *snapshotCache

	history *lagHistory
	// stopSampler ends the lag history's sampler; samplerDone closes when
	// it has returned.
	stopSampler context.CancelFunc
	samplerDone chan struct{}

	mu struct {
		sync.Mutex
		client *kgo.Client
		closed bool
	}
}

// New returns a console and starts its lag history's sampler; Mount
// serves it and Close stops it.
func New(cfg Config) *Console {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.LagHistoryInterval == 0 {
		cfg.LagHistoryInterval = defaultLagHistoryInterval
	}
	c := &Console{cfg: cfg, snapshots: newSnapshotCache(snapshotTTL, snapshotMaxStale), history: newLagHistory(), samplerDone: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	c.stopSampler = cancel
	if cfg.LagHistoryInterval > 0 && cfg.NewClient != nil {
		go func() {
			defer close(c.samplerDone)
			c.sampleLag(ctx, cfg.LagHistoryInterval)
		}()
	} else {
		close(c.samplerDone)
	}
	return c
}

// Mount adds the UI (/) and the API (/api/v1/) to mux.
func (c *Console) Mount(mux *http.ServeMux) {
	api := http.NewServeMux()
	c.routes(api)
	mux.Handle("/api/v1/", csrfCheck(api))
	mux.Handle("/", assetHandler())
}

// Close stops the lag sampler, closes the shared client and waits for
// background Metadata fetches; requests after it answer 503.
func (c *Console) Close() {
	c.stopSampler()
	<-c.samplerDone
	c.mu.Lock()
	cl := c.mu.client
	c.mu.client, c.mu.closed = nil, true
	c.mu.Unlock()
	if cl != nil {
		cl.Close()
	}
	c.snapshots.wait()
}

var errClosed = errors.New("console: shutting down")

// client returns the shared client, made on first use.
func (c *Console) client() (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return nil, errClosed
	}
	if c.mu.client == nil {
		cl, err := c.cfg.NewClient(
			kgo.ClientID("strata-console"),
			kgo.RecordPartitioner(pinnedPartitioner{kgo.StickyKeyPartitioner(nil)}),
			kgo.ProducerLinger(0),
			kgo.RequestRetries(2),
		)
		if err != nil {
			return nil, err
		}
		c.mu.client = cl
	}
	return c.mu.client, nil
}

// apiHandler is an API handler given the shared client and a context
// that bounds its Kafka round trips by requestTimeout.
type apiHandler func(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client)

// call runs h with the shared client (503 after Close, 502 if it cannot
// be made).
func (c *Console) call(h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cl, err := c.client()
		if err != nil {
			c.writeKafkaError(w, "connecting to the cluster", err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		h(ctx, w, r, cl)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.snapshots.invalidate() // the next page shows what this changed
		}
	}
}

// route serves path with one handler per method; other methods are 405.
func route(mux *http.ServeMux, path string, byMethod map[string]http.HandlerFunc) {
	allowed := make([]string, 0, len(byMethod))
	for m := range byMethod {
		allowed = append(allowed, m)
	}
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		h, ok := byMethod[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = byMethod[http.MethodGet]
		}
		if !ok {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, http.StatusMethodNotAllowed, "", "method %s not allowed on %s", r.Method, r.URL.Path)
			return
		}
		h(w, r)
	})
}

// routes lists the API (openapi.yaml documents it).
func (c *Console) routes(mux *http.ServeMux) {
	route(mux, "/api/v1/openapi.yaml", map[string]http.HandlerFunc{"GET": serveOpenAPI})
	route(mux, "/api/v1/cluster", map[string]http.HandlerFunc{"GET": c.call(c.getCluster)})
	route(mux, "/api/v1/cluster/partitions", map[string]http.HandlerFunc{"GET": c.call(c.listProblemPartitions)})
	route(mux, "/api/v1/topics", map[string]http.HandlerFunc{"GET": c.call(c.listTopics), "POST": c.call(c.createTopic)})
	route(mux, "/api/v1/topics/{topic}", map[string]http.HandlerFunc{"GET": c.call(c.getTopic), "DELETE": c.call(c.deleteTopic)})
	route(mux, "/api/v1/topics/{topic}/records", map[string]http.HandlerFunc{"GET": c.call(c.getRecords), "POST": c.call(c.produceRecord)})
	route(mux, "/api/v1/groups", map[string]http.HandlerFunc{"GET": c.call(c.listGroups)})
	route(mux, "/api/v1/groups/{group}", map[string]http.HandlerFunc{"GET": c.call(c.getGroup), "DELETE": c.call(c.deleteGroup)})
	route(mux, "/api/v1/connect", map[string]http.HandlerFunc{"GET": c.listConnectors})
	route(mux, "/api/v1/connect/{name}/{action}", map[string]http.HandlerFunc{"POST": c.connectAction})
	route(mux, "/api/v1/connect/{name}/tasks/{task}/restart", map[string]http.HandlerFunc{"POST": c.connectAction})
	route(mux, "/api/v1/streams", map[string]http.HandlerFunc{"GET": c.call(c.listStreamJobs)})
	route(mux, "/api/v1/acls", map[string]http.HandlerFunc{"GET": c.call(c.listACLs), "POST": c.call(c.createACL), "DELETE": c.call(c.deleteACL)})
	route(mux, "/api/v1/users", map[string]http.HandlerFunc{"GET": c.call(c.listUsers), "POST": c.call(c.upsertUser)})
	route(mux, "/api/v1/users/{user}", map[string]http.HandlerFunc{"DELETE": c.call(c.deleteUser)})
	route(mux, "/api/v1/quotas", map[string]http.HandlerFunc{"GET": c.call(c.listQuotas), "PUT": c.call(c.setQuota), "DELETE": c.call(c.deleteQuota)})
	route(mux, "/api/v1/groups/{group}/reset-offsets", map[string]http.HandlerFunc{"POST": c.call(c.resetOffsets)})
	route(mux, "/api/v1/topics/{topic}/configs", map[string]http.HandlerFunc{"PATCH": c.call(c.alterTopicConfigs)})
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no such endpoint: %s", r.URL.Path)
	})
}

// errorJSON is every error answer.
type errorJSON struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code string, format string, args ...any) {
	writeJSON(w, status, errorJSON{Error: fmt.Sprintf(format, args...), Code: code})
}

// kafkaStatus is the HTTP status for a Kafka error code.
func kafkaStatus(ke *kerr.Error) int {
	switch ke.Code {
	case kerr.UnknownTopicOrPartition.Code, kerr.GroupIDNotFound.Code, kerr.UnknownTopicID.Code:
		return http.StatusNotFound
	case kerr.TopicAlreadyExists.Code, kerr.NonEmptyGroup.Code, kerr.UnknownMemberID.Code, kerr.IllegalGeneration.Code,
		kerr.RebalanceInProgress.Code:
		return http.StatusConflict
	case kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code,
		kerr.TransactionalIDAuthorizationFailed.Code:
		return http.StatusForbidden
	case kerr.InvalidTopicException.Code, kerr.InvalidPartitions.Code, kerr.InvalidReplicationFactor.Code,
		kerr.InvalidReplicaAssignment.Code, kerr.InvalidConfig.Code, kerr.PolicyViolation.Code, kerr.InvalidRequest.Code,
		kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidRecord.Code, kerr.InvalidTimestamp.Code,
		kerr.InvalidGroupID.Code, kerr.TopicDeletionDisabled.Code:
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}

// writeKafkaError answers err, a Kafka error or a failure to reach the
// cluster, with what went wrong in doing what.
func (c *Console) writeKafkaError(w http.ResponseWriter, doing string, err error) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		writeError(w, kafkaStatus(ke), ke.Message, "%s: %s", doing, ke.Description)
		return
	}
	var ae *kadm.AuthError
	if errors.As(err, &ae) {
		writeError(w, http.StatusForbidden, "", "%s: %v", doing, err)
		return
	}
	status := http.StatusBadGateway
	if errors.Is(err, errClosed) {
		status = http.StatusServiceUnavailable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	c.cfg.Logger.Warn("console: request failed", "doing", doing, "err", err)
	writeError(w, status, "", "%s: %v", doing, err)
}

// decodeBody reads a JSON request body of at most maxBody bytes into v.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	const maxBody = 4 << 20
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "", "invalid JSON body: %v", err)
		return false
	}
	return true
}
