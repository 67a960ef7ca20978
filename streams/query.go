package streams

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Interactive queries (QueryListen): an HTTP listener per running App
// answers, in JSON,
//
//	GET /v1/jobs/{job}/stores/{store}/keys/{key}                 a key's value
//	GET /v1/jobs/{job}/stores/{store}/keys?from=A&to=B&limit=N    keys A..B (inclusive, either optional), in key-byte order
//	GET /v1/jobs/{job}/stores/{store}/keys/{key}/windows?from=T1&to=T2   a windowed store's windows of key starting in [T1, T2]
//
// from the committed state of the stores (what the last commit wrote, never
// a commit period's pending writes). A key lives in partition p of the
// store's input topic, p computed as the App's partitioner does (Kafka's
// murmur2 of the key bytes; a source topic must be partitioned that way,
// as Kafka's producers do by default). The owner of p is the group member
// assigned p: DescribeGroups returns each member's assignment and client
// id, and an App with QueryListen sets its client id to
// strata-streams-<application id>@<advertised query address>. An instance
// without the partition forwards the request once to the owner, marked
// with the queryForwarded header; a forwarded request it cannot answer,
// or an owner it cannot reach, gets 503 with the owner's address. A range
// query asks every member for its partitions and merges the answers.

// queryForwarded marks a request forwarded by another instance: it is
// answered from local stores only.
const queryForwarded = "Strata-Query-Forwarded"

// queryServedBy names, in every answer read from a store, the advertised
// query address of the instance that read it.
const queryServedBy = "Strata-Query-Instance"

const (
	defaultQueryLimit = 100
	maxQueryLimit     = 1000
	queryTimeout      = 5 * time.Second
)

// queryCodec parses a store's keys from URL paths and renders its keys and
// values as JSON (the decoded value: numbers for Int64, strings for String,
// base64 for Bytes, the value itself for JSON serdes).
type queryCodec struct {
	parseKey    func(string) ([]byte, error)
	renderKey   func([]byte) (any, error)
	renderValue func([]byte) (any, error)
	windowSize  int64 // ms; 0: a key-value store
}

func newQueryCodec[K, V any](keys Serde[K], values Serde[V], windowSize int64) *queryCodec {
	return &queryCodec{
		parseKey:    func(s string) ([]byte, error) { return parseQueryKey(keys, s) },
		renderKey:   func(b []byte) (any, error) { return keys.Decode(b) },
		renderValue: func(b []byte) (any, error) { return values.Decode(b) },
		windowSize:  windowSize,
	}
}

// parseQueryKey parses a key from a path: String keys as they are, Int64
// keys in decimal, Bytes keys in standard base64, other keys as JSON.
func parseQueryKey[K any](keys Serde[K], s string) ([]byte, error) {
	switch any(keys).(type) {
	case stringSerde:
		return []byte(s), nil
	case bytesSerde:
		return base64.StdEncoding.DecodeString(s)
	case int64Serde:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, err
		}
		return Int64.Encode(n)
	}
	var k K
	if err := json.Unmarshal([]byte(s), &k); err != nil {
		return nil, err
	}
	return keys.Encode(k)
}

// queryServer serves one run's interactive queries.
type queryServer struct {
	app        *App
	advertised string
	srv        *http.Server
	served     chan struct{} // closed when Serve returned
	client     *kgo.Client
	adm        *kadm.Client
	forwarder  *http.Client

	partitions struct {
		sync.Mutex
		byTopic map[string]int // partition counts of store input topics
	}
}

// startQueryServer listens on QueryListen and serves until stop.
func (a *App) startQueryServer() (*queryServer, error) {
	ln, err := net.Listen("tcp", a.cfg.queryListen)
	if err != nil {
		return nil, fmt.Errorf("streams: query listener: %w", err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(a.cfg.brokers...)}, a.cfg.clientOpts...)...)
	if err != nil {
		ln.Close()
		return nil, err
	}
	qs := &queryServer{app: a, advertised: a.cfg.queryAdvertise, served: make(chan struct{}),
		client: cl, adm: kadm.NewClient(cl), forwarder: &http.Client{Timeout: queryTimeout}}
	if qs.advertised == "" {
		qs.advertised = ln.Addr().String()
	}
	qs.partitions.byTopic = map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/jobs/{job}/stores/{store}/keys/{key}", qs.getOnly(qs.handleKey))
	mux.HandleFunc("/v1/jobs/{job}/stores/{store}/keys", qs.getOnly(qs.handleRange))
	mux.HandleFunc("/v1/jobs/{job}/stores/{store}/keys/{key}/windows", qs.getOnly(qs.handleWindows))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		queryError(w, http.StatusNotFound, "no such endpoint")
	})
	qs.srv = &http.Server{Handler: mux, ReadHeaderTimeout: queryTimeout}
	go func() {
		defer close(qs.served)
		_ = qs.srv.Serve(ln) // returns at Shutdown
	}()
	a.query.Store(qs)
	return qs, nil
}

// stop shuts the listener down, waiting up to queryTimeout for queries in
// flight.
func (qs *queryServer) stop() {
	qs.app.query.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	if err := qs.srv.Shutdown(ctx); err != nil {
		qs.srv.Close()
	}
	<-qs.served
	qs.forwarder.CloseIdleConnections()
	qs.client.Close()
}

// QueryAddr is the advertised address of the running App's query listener
// ("" when it does not run one or is not running).
func (a *App) QueryAddr() string {
	if qs := a.query.Load(); qs != nil {
		return qs.advertised
	}
	return ""
}

// clientID is the client id of the App's group member: it carries the
// query address (see the comment at the top of query.go).
func (a *App) clientID() string {
	id := "strata-streams-" + a.cfg.appID
	if qs := a.query.Load(); qs != nil {
		id += "@" + qs.advertised
	}
	return id
}

func (qs *queryServer) getOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			queryError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed; use GET")
			return
		}
		h(w, r)
	}
}

func queryJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type queryErrorBody struct {
	Error string `json:"error"`
	Owner string `json:"owner,omitempty"` // the query address of the key's owner, when known
}

func queryError(w http.ResponseWriter, status int, msg string) {
	queryJSON(w, status, queryErrorBody{Error: msg})
}

// storeOf resolves the job and store of a request, answering 404 itself
// when either is unknown and 400 when the store is (not) windowed against
// windowed.
func (qs *queryServer) storeOf(w http.ResponseWriter, r *http.Request, windowed bool) *storeSpec {
	if job := r.PathValue("job"); job != qs.app.cfg.name {
		queryError(w, http.StatusNotFound, fmt.Sprintf("unknown job %q", job))
		return nil
	}
	name := r.PathValue("store")
	for _, spec := range qs.app.top.stores {
		switch {
		case spec.name != name || spec.query == nil:
			continue
		case windowed && spec.query.windowSize == 0:
			queryError(w, http.StatusBadRequest, fmt.Sprintf("store %s is not windowed", spec.name))
			return nil
		case !windowed && spec.query.windowSize != 0:
			queryError(w, http.StatusBadRequest, fmt.Sprintf("store %s is windowed: query .../keys/{key}/windows", spec.name))
			return nil
		}
		return spec
	}
	queryError(w, http.StatusNotFound, fmt.Sprintf("unknown store %q", name))
	return nil
}

// partitionOf is the partition of the store's input topic holding key.
func (qs *queryServer) partitionOf(ctx context.Context, spec *storeSpec, key []byte) (int32, error) {
	topic := spec.inputTopic()
	qs.partitions.Lock()
	n := qs.partitions.byTopic[topic]
	qs.partitions.Unlock()
	if n == 0 {
		topics, err := qs.adm.ListTopics(ctx, topic)
		if err != nil {
			return 0, err
		}
		if td, ok := topics[topic]; !ok || td.Err != nil || len(td.Partitions) == 0 {
			return 0, fmt.Errorf("topic %s not found", topic)
		}
		n = len(topics[topic].Partitions)
		qs.partitions.Lock()
		qs.partitions.byTopic[topic] = n
		qs.partitions.Unlock()
	}
	return keyPartition(key, n), nil
}

// members maps the group members' query addresses to their assigned
// partitions of topic.
func (qs *queryServer) members(ctx context.Context, topic string) (map[string][]int32, error) {
	described, err := qs.adm.DescribeGroups(ctx, qs.app.cfg.appID)
	if err != nil {
		return nil, err
	}
	out := map[string][]int32{}
	for _, g := range described {
		if g.Err != nil {
			return nil, g.Err
		}
		for _, m := range g.Members {
			_, addr, ok := strings.Cut(m.ClientID, "@")
			if !ok {
				continue
			}
			if _, ok := out[addr]; !ok {
				out[addr] = nil
			}
			if c, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range c.Topics {
					if t.Topic == topic {
						out[addr] = append(out[addr], t.Partitions...)
					}
				}
			}
		}
	}
	return out, nil
}

// acquire returns the open store of spec's partition p here, or nil; the
// caller calls st.readers.Done.
func (qs *queryServer) acquire(spec *storeSpec, p int32) *store {
	if sm := qs.app.state.Load(); sm != nil {
		return sm.acquireQueryable(spec.name, p)
	}
	return nil
}

// route answers a key's request that this instance cannot: it forwards it
// to the owner of partition p once, or answers 503 with the owner.
func (qs *queryServer) route(w http.ResponseWriter, r *http.Request, spec *storeSpec, p int32) {
	notHere := fmt.Sprintf("partition %d of store %s is not open on this instance", p, spec.name)
	if r.Header.Get(queryForwarded) != "" {
		queryError(w, http.StatusServiceUnavailable, notHere)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), queryTimeout)
	defer cancel()
	members, err := qs.members(ctx, spec.inputTopic())
	if err != nil {
		queryError(w, http.StatusServiceUnavailable, "finding the key's owner: "+err.Error())
		return
	}
	owner := ""
	for addr, ps := range members {
		if slices.Contains(ps, p) {
			owner = addr
		}
	}
	if owner == "" || owner == qs.advertised {
		queryJSON(w, http.StatusServiceUnavailable, queryErrorBody{Error: notHere + " (being assigned, restored or idle)", Owner: owner})
		return
	}
	status, header, body, err := qs.forward(ctx, owner, r.URL.RequestURI())
	if err != nil {
		queryJSON(w, http.StatusServiceUnavailable, queryErrorBody{Error: "forwarding to the owner: " + err.Error(), Owner: owner})
		return
	}
	for _, h := range []string{"Content-Type", queryServedBy} {
		if v := header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// forward sends GET uri to the instance at addr, marked as forwarded.
func (qs *queryServer) forward(ctx context.Context, addr, uri string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+uri, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set(queryForwarded, qs.advertised)
	resp, err := qs.forwarder.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, resp.Header, body, err
}

type keyAnswer struct {
	Key       any   `json:"key"`
	Value     any   `json:"value"`
	Partition int32 `json:"partition"`
}

func (qs *queryServer) handleKey(w http.ResponseWriter, r *http.Request) {
	spec := qs.storeOf(w, r, false)
	if spec == nil {
		return
	}
	st, kb, p := qs.heldKey(w, r, spec)
	if st == nil {
		return
	}
	defer st.readers.Done()
	v, found, err := st.getRaw(dataKey(kb))
	if err != nil {
		queryError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set(queryServedBy, qs.advertised)
	if !found {
		queryJSON(w, http.StatusNotFound, queryErrorBody{Error: fmt.Sprintf("key %q not found in store %s", r.PathValue("key"), spec.name)})
		return
	}
	a := keyAnswer{Partition: p}
	if a.Key, err = spec.query.renderKey(kb); err == nil {
		a.Value, err = spec.query.renderValue(v)
	}
	if err != nil {
		queryError(w, http.StatusInternalServerError, "rendering: "+err.Error())
		return
	}
	queryJSON(w, http.StatusOK, a)
}

// heldKey parses the path's key, finds its partition and takes the store
// of that partition here (the caller calls st.readers.Done); when the
// partition is not open here, or the key is bad, it answers the request
// itself (routing it to the owner) and returns a nil store.
func (qs *queryServer) heldKey(w http.ResponseWriter, r *http.Request, spec *storeSpec) (*store, []byte, int32) {
	kb, err := spec.query.parseKey(r.PathValue("key"))
	if err != nil {
		queryError(w, http.StatusBadRequest, fmt.Sprintf("key %q: %v", r.PathValue("key"), err))
		return nil, nil, 0
	}
	ctx, cancel := context.WithTimeout(r.Context(), queryTimeout)
	defer cancel()
	p, err := qs.partitionOf(ctx, spec, kb)
	if err != nil {
		queryError(w, http.StatusServiceUnavailable, "partitioning the key: "+err.Error())
		return nil, nil, 0
	}
	st := qs.acquire(spec, p)
	if st == nil {
		qs.route(w, r, spec, p)
	}
	return st, kb, p
}

type windowAnswer struct {
	Start int64 `json:"start"` // Unix ms
	End   int64 `json:"end"`
	Value any   `json:"value"`
}

type windowsAnswer struct {
	Key       any            `json:"key"`
	Partition int32          `json:"partition"`
	Windows   []windowAnswer `json:"windows"`
}

func (qs *queryServer) handleWindows(w http.ResponseWriter, r *http.Request) {
	spec := qs.storeOf(w, r, true)
	if spec == nil {
		return
	}
	from, err := parseQueryTime(r.URL.Query().Get("from"), 0)
	if err != nil {
		queryError(w, http.StatusBadRequest, "from: "+err.Error())
		return
	}
	to, err := parseQueryTime(r.URL.Query().Get("to"), 1<<62)
	if err != nil || to < from {
		queryError(w, http.StatusBadRequest, fmt.Sprintf("to: want a time at or after from (%v)", err))
		return
	}
	limit, ok := queryLimit(w, r)
	if !ok {
		return
	}
	st, kb, p := qs.heldKey(w, r, spec)
	if st == nil {
		return
	}
	defer st.readers.Done()
	a := windowsAnswer{Partition: p, Windows: []windowAnswer{}}
	err = st.scanCommitted(windowKey(kb, from), windowKey(kb, to), func(k, v []byte) (bool, error) {
		if len(k) != len(kb)+8 {
			return true, nil // a longer key sharing the prefix
		}
		val, err := spec.query.renderValue(v)
		if err != nil {
			return false, err
		}
		start := readTime(k[len(kb):])
		a.Windows = append(a.Windows, windowAnswer{Start: start, End: start + spec.query.windowSize, Value: val})
		return len(a.Windows) < limit, nil
	})
	if err == nil {
		a.Key, err = spec.query.renderKey(kb)
	}
	if err != nil {
		queryError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set(queryServedBy, qs.advertised)
	queryJSON(w, http.StatusOK, a)
}

// parseQueryTime parses epoch milliseconds or RFC 3339 ("" gives dflt).
func parseQueryTime(s string, dflt int64) (int64, error) {
	if s == "" {
		return dflt, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither epoch milliseconds nor RFC 3339", s)
	}
	return t.UnixMilli(), nil
}

func queryLimit(w http.ResponseWriter, r *http.Request) (int, bool) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return defaultQueryLimit, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxQueryLimit {
		queryError(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want 1 to %d", s, maxQueryLimit))
		return 0, false
	}
	return n, true
}

type rangeEntry struct {
	Key   any    `json:"key"`
	Value any    `json:"value"`
	Raw   []byte `json:"raw,omitempty"` // the key's bytes, for merging; forwarded answers only
}

type rangeAnswer struct {
	Entries []rangeEntry `json:"entries"`
	// Partitions are the partitions read; Missing those no instance had
	// open (their keys are absent from Entries).
	Partitions []int32 `json:"partitions"`
	Missing    []int32 `json:"missing_partitions,omitempty"`
	// Truncated: more keys are in range than the limit.
	Truncated bool `json:"truncated"`
}

func (qs *queryServer) handleRange(w http.ResponseWriter, r *http.Request) {
	spec := qs.storeOf(w, r, false)
	if spec == nil {
		return
	}
	var lower, upper []byte
	for _, b := range []struct {
		param string
		dst   *[]byte
	}{{"from", &lower}, {"to", &upper}} {
		if s, ok := r.URL.Query()[b.param]; ok {
			kb, err := spec.query.parseKey(s[0])
			if err != nil {
				queryError(w, http.StatusBadRequest, fmt.Sprintf("%s %q: %v", b.param, s[0], err))
				return
			}
			*b.dst = kb
		}
	}
	if upper != nil && bytes.Compare(lower, upper) > 0 {
		queryError(w, http.StatusBadRequest, "from is after to")
		return
	}
	limit, ok := queryLimit(w, r)
	if !ok {
		return
	}
	a, err := qs.localRange(spec, lower, upper, limit)
	if err != nil {
		queryError(w, http.StatusInternalServerError, err.Error())
		return
	}
	forwarded := r.Header.Get(queryForwarded) != ""
	if !forwarded {
		if err := qs.gatherRange(r, spec, &a); err != nil {
			queryError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		slices.SortFunc(a.Entries, func(x, y rangeEntry) int { return bytes.Compare(x.Raw, y.Raw) })
		if len(a.Entries) > limit {
			a.Entries, a.Truncated = a.Entries[:limit], true
		}
		for i := range a.Entries {
			a.Entries[i].Raw = nil
		}
	}
	slices.Sort(a.Partitions)
	w.Header().Set(queryServedBy, qs.advertised)
	queryJSON(w, http.StatusOK, a)
}

// localRange reads up to limit+1 entries of every partition of spec open
// here, keys with their bytes.
func (qs *queryServer) localRange(spec *storeSpec, lower, upper []byte, limit int) (rangeAnswer, error) {
	a := rangeAnswer{Entries: []rangeEntry{}, Partitions: []int32{}}
	sm := qs.app.state.Load()
	if sm == nil {
		return a, nil
	}
	for _, p := range sm.queryablePartitions(spec.name) {
		st := qs.acquire(spec, p)
		if st == nil {
			continue // closed meanwhile
		}
		n := 0
		err := st.scanCommitted(lower, upper, func(k, v []byte) (bool, error) {
			key, err := spec.query.renderKey(k)
			if err != nil {
				return false, err
			}
			val, err := spec.query.renderValue(v)
			if err != nil {
				return false, err
			}
			a.Entries = append(a.Entries, rangeEntry{Key: key, Value: val, Raw: append([]byte(nil), k...)})
			n++
			return n <= limit, nil // one more than limit: the merge sees if there are more
		})
		st.readers.Done()
		if err != nil {
			return a, err
		}
		a.Partitions = append(a.Partitions, p)
	}
	return a, nil
}

// gatherRange adds the local answers of every other member to a and notes
// the partitions no one answered for.
func (qs *queryServer) gatherRange(r *http.Request, spec *storeSpec, a *rangeAnswer) error {
	ctx, cancel := context.WithTimeout(r.Context(), queryTimeout)
	defer cancel()
	members, err := qs.members(ctx, spec.inputTopic())
	if err != nil {
		return fmt.Errorf("finding the members: %w", err)
	}
	for addr := range members {
		if addr == qs.advertised {
			continue
		}
		status, _, body, err := qs.forward(ctx, addr, r.URL.RequestURI())
		if err != nil || status != http.StatusOK {
			continue // its partitions show as missing
		}
		var part rangeAnswer
		if err := json.Unmarshal(body, &part); err != nil {
			continue
		}
		a.Entries = append(a.Entries, part.Entries...)
		a.Partitions = append(a.Partitions, part.Partitions...)
	}
	qs.partitions.Lock()
	n := qs.partitions.byTopic[spec.inputTopic()]
	qs.partitions.Unlock()
	if n == 0 {
		topics, err := qs.adm.ListTopics(ctx, spec.inputTopic())
		if err != nil {
			return err
		}
		n = len(topics[spec.inputTopic()].Partitions)
	}
	for p := int32(0); p < int32(n); p++ {
		if !slices.Contains(a.Partitions, p) {
			a.Missing = append(a.Missing, p)
		}
	}
	return nil
}

// scanCommitted calls fn for the committed entries with lower <= key <=
// upper (nil upper: no bound) in key order; safe beside the processing
// goroutine while the caller holds a readers count.
func (s *store) scanCommitted(lower, upper []byte, fn func(key, value []byte) (bool, error)) error {
	opts := &pebble.IterOptions{LowerBound: dataKey(lower), UpperBound: []byte{dataPrefix + 1}}
	if upper != nil {
		opts.UpperBound = append(dataKey(upper), 0) // inclusive
	}
	it, err := s.db.NewIter(opts)
	if err != nil {
		return fmt.Errorf("streams: store %s: %w", s.spec.name, err)
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		more, err := fn(it.Key()[1:], it.Value())
		if err != nil || !more {
			return err
		}
	}
	return it.Error()
}
