package broker

// The lag API on the admin HTTP listener, JSON only:
//
//	GET /v1/groups              every group: state, members, Burrow status, total lag
//	GET /v1/groups/{group}/lag  per partition: committed offset, log end offset,
//	                            lag in records and seconds, status and the window
//
// and the share groups' (share_lag_http.go) under /v1/share-groups.
//
// Every node answers for every group: one that another node coordinates
// is asked of the cluster over the Kafka protocol (lag_remote.go), and the
// list is the whole cluster's. When the cluster cannot be asked the answer
// is 502 {"error": "..."}.
//
// An unknown group is 404 {"error": "..."}; other methods are 405. Status
// and severity are the lag package's (OK, WARN, STOP, STALL, REWIND; OK,
// WARN, ERR); see its documentation for the rules.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"time"

	"github.com/strata-streaming/strata/broker/lag"
)

// groupSummaryJSON is one group of GET /v1/groups.
type groupSummaryJSON struct {
	Group      string       `json:"group"`
	State      string       `json:"state"`
	Members    int          `json:"members"`
	Partitions int          `json:"partitions"`
	Status     lag.Status   `json:"status"`
	Severity   lag.Severity `json:"severity"`
	TotalLag   int64        `json:"total_lag"`
	// Coordinator is the group's coordinator when another node is
	// (lag_remote.go); absent when this node is.
	Coordinator *int32 `json:"coordinator,omitempty"`
}

type groupListJSON struct {
	Groups []groupSummaryJSON `json:"groups"`
}

// windowJSON describes the evaluation window.
type windowJSON struct {
	Commits       int   `json:"commits"`
	MinDistanceMs int64 `json:"min_distance_ms"`
	MinSpanMs     int64 `json:"min_span_ms"`
}

type commitJSON struct {
	Offset       int64     `json:"offset"`
	LogEndOffset int64     `json:"log_end_offset"`
	Lag          int64     `json:"lag"`
	Time         time.Time `json:"time"`
}

type partitionLagJSON struct {
	Topic           string       `json:"topic"`
	Partition       int32        `json:"partition"`
	CommittedOffset int64        `json:"committed_offset"`
	LogEndOffset    *int64       `json:"log_end_offset"` // null: the topic is gone
	LagRecords      *int64       `json:"lag_records"`
	LagSeconds      *float64     `json:"lag_seconds"` // null: gone, or no timestamp
	Status          lag.Status   `json:"status"`
	LastCommit      time.Time    `json:"last_commit,omitzero"` // absent from another node's answer
	Complete        float64      `json:"complete"`             // how full the window is, 0..1
	Window          []commitJSON `json:"window"`
}

type groupLagJSON struct {
	Group    string       `json:"group"`
	State    string       `json:"state"`
	Members  int          `json:"members"`
	Status   lag.Status   `json:"status"`
	Severity lag.Severity `json:"severity"`
	TotalLag int64        `json:"total_lag"`
	// Coordinator: as in groupSummaryJSON.
	Coordinator *int32             `json:"coordinator,omitempty"`
	Window      windowJSON         `json:"window"`
	Partitions  []partitionLagJSON `json:"partitions"`
}

type adminErrorJSON struct {
	Error string `json:"error"`
}

// mountLag serves consumer lag on the admin listener: the lag series on
// /metrics, the /v1/groups API, the commit hook the coordinator calls, and
// the sampler (a server task that stops with the server).
func (s *Server) mountLag(mux *http.ServeMux) {
	m := newLagMonitor(s.topics, s.logger, s.groups.snapshot, lag.Config{})
	if len(s.listeners) > 0 {
		m.cluster = newClusterGroups(s.interBrokerSeed, s.interBrokerOpts())
		s.goTask(func() { <-s.ctx.Done(); m.cluster.close() })
	}
	s.lag = m // before the Kafka listener serves: the coordinator reports commits to it
	s.metrics.registry.MustRegister(newLagCollector(m), newShareLagCollector(s.shares))
	m.mountLagRoutes(mux)
	s.goTask(func() { m.run(s.ctx.Done(), lagSampleInterval) })
}

// mountLagRoutes adds the /v1/groups API to mux.
func (m *lagMonitor) mountLagRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/v1/groups", adminGetOnly(m.serveGroups))
	mux.HandleFunc("/v1/groups/{group}/lag", adminGetOnly(m.serveGroupLag))
	m.mountShareLagRoutes(mux)
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeAdminJSON(w, http.StatusNotFound, adminErrorJSON{Error: "no such endpoint: " + r.URL.Path})
	})
}

// adminGetOnly refuses methods other than GET and HEAD with a JSON 405.
func adminGetOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeAdminJSON(w, http.StatusMethodNotAllowed, adminErrorJSON{Error: "method " + r.Method + " not allowed"})
			return
		}
		h(w, r)
	}
}

func writeAdminJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (m *lagMonitor) serveGroups(w http.ResponseWriter, r *http.Request) {
	snaps := m.sample()
	now := m.now()
	out := groupListJSON{Groups: make([]groupSummaryJSON, 0, len(snaps))}
	for _, g := range snaps {
		s := groupSummaryJSON{
			Group:      g.Group,
			State:      g.State,
			Members:    len(g.Members),
			Partitions: len(g.Offsets),
		}
		if gs, ok := m.eval.Evaluate(g.Group, now, m.logEnds); ok {
			s.Status, s.Severity, s.TotalLag = gs.Status, gs.Severity(), gs.TotalLag
		}
		out.Groups = append(out.Groups, s)
	}
	if m.cluster != nil {
		local := make(map[string]bool, len(snaps))
		for _, g := range snaps {
			local[g.Group] = true
		}
		ctx, cancel := context.WithTimeout(r.Context(), remoteLagTimeout)
		remote, err := m.remoteGroups(ctx, local)
		cancel()
		if err != nil {
			writeAdminJSON(w, http.StatusBadGateway, adminErrorJSON{Error: "asking the cluster for its groups: " + err.Error()})
			return
		}
		out.Groups = append(out.Groups, remote...)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].Group < out.Groups[j].Group })
	writeAdminJSON(w, http.StatusOK, out)
}

func (m *lagMonitor) serveGroupLag(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("group")
	out, err := m.groupLagByName(r.Context(), name)
	switch {
	case errors.Is(err, errGroupNotFound):
		writeAdminJSON(w, http.StatusNotFound, adminErrorJSON{Error: fmt.Sprintf("group %q not found", name)})
	case err != nil:
		writeAdminJSON(w, http.StatusBadGateway, adminErrorJSON{Error: fmt.Sprintf("asking the coordinator of group %q: %v", name, err)})
	default:
		writeAdminJSON(w, http.StatusOK, out)
	}
}

// groupLagByName is GET /v1/groups/{group}/lag's answer: from this node's
// coordinator when it has the group, else from the cluster
// (errGroupNotFound when no one has it).
func (m *lagMonitor) groupLagByName(ctx context.Context, name string) (groupLagJSON, error) {
	snaps := m.sample()
	for i := range snaps {
		if snaps[i].Group == name {
			return m.groupLag(snaps[i], m.now()), nil
		}
	}
	if m.cluster == nil {
		return groupLagJSON{}, errGroupNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, remoteLagTimeout)
	defer cancel()
	return m.remoteGroupLag(ctx, name)
}

// groupLag joins the coordinator's committed offsets (the truth about what
// is committed) with the evaluator's verdicts and the partitions' logs.
func (m *lagMonitor) groupLag(g groupSnapshot, now time.Time) groupLagJSON {
	cfg := m.eval.Config()
	out := groupLagJSON{
		Group:   g.Group,
		State:   g.State,
		Members: len(g.Members),
		Window: windowJSON{
			Commits:       cfg.Window,
			MinDistanceMs: max(cfg.MinDistance, 0).Milliseconds(),
			MinSpanMs:     max(cfg.MinSpan, 0).Milliseconds(),
		},
		Partitions: make([]partitionLagJSON, 0, len(g.Offsets)),
	}
	verdicts := map[lag.TopicPartition]lag.PartitionStatus{}
	if gs, ok := m.eval.Evaluate(g.Group, now, m.logEnds); ok {
		out.Status, out.Severity = gs.Status, gs.Severity()
		for _, p := range gs.Partitions {
			verdicts[lag.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p
		}
	}
	for _, o := range g.Offsets {
		pl := m.lagOf(o, now)
		pj := partitionLagJSON{
			Topic:           o.Topic,
			Partition:       o.Partition,
			CommittedOffset: o.Offset,
			Status:          lag.StatusOK,
			LastCommit:      o.CommitTimestamp.UTC(),
			Window:          []commitJSON{},
		}
		if pl.known {
			logEnd, records, seconds := pl.logEnd, pl.lagRecords, pl.lagSeconds
			pj.LogEndOffset, pj.LagRecords = &logEnd, &records
			if !math.IsNaN(seconds) {
				pj.LagSeconds = &seconds
			}
			out.TotalLag += records
		}
		if v, ok := verdicts[lag.TopicPartition{Topic: o.Topic, Partition: o.Partition}]; ok {
			pj.Status, pj.Complete = v.Status, v.Complete
			for _, c := range v.Window {
				pj.Window = append(pj.Window, commitJSON{Offset: c.Offset, LogEndOffset: c.LogEndOffset, Lag: c.Lag(), Time: c.Time.UTC()})
			}
		}
		out.Partitions = append(out.Partitions, pj)
	}
	return out
}
