package broker

import (
	"fmt"
	"net/http"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// readyLagEntries is how many committed metadata records a node may still
// have to apply and be ready: records commit continuously (heartbeats), so
// "applied == commit" would flap; a node restoring a long log is far behind.
const readyLagEntries = 100

// readiness is what /readyz decides from: a snapshot of the node's state.
type readiness struct {
	serving      bool   // Start has returned: the Kafka listeners accept
	shuttingDown bool   // Close or a controlled shutdown has begun
	leader       int32  // the metadata quorum's leader, -1 when unknown
	node         int32  // this node's id
	incarnation  string // this process's registration
	state        cluster.State
	applied      uint64 // the applied metadata index
	commit       uint64 // the quorum's commit index as known here; 0 when unknown (observers)
}

// notReady returns why the node should receive no client traffic yet, or ""
// when it serves Kafka, is registered (this incarnation, unfenced) and has
// applied the metadata up to the quorum's commit, within readyLagEntries.
func (r readiness) notReady() string {
	switch {
	case r.shuttingDown:
		return "shutting down"
	case !r.serving:
		return "kafka listeners not serving yet"
	case r.leader < 0:
		return "no metadata quorum leader known"
	}
	b, ok := r.state.Brokers[r.node]
	switch {
	case !ok || b.IncarnationID != r.incarnation:
		return fmt.Sprintf("node %d not registered in the applied metadata yet", r.node)
	case b.Fenced:
		return fmt.Sprintf("node %d is fenced", r.node)
	case r.commit > r.applied+readyLagEntries:
		return fmt.Sprintf("metadata applied to index %d of %d committed", r.applied, r.commit)
	}
	return ""
}

// readiness snapshots the node for /readyz.
func (s *Server) readiness() readiness {
	r := readiness{
		serving:      s.serving.Load(),
		shuttingDown: s.ctx.Err() != nil || s.shuttingDown.Load(),
		leader:       s.member.LeaderID(),
		node:         s.cfg.NodeID,
		incarnation:  s.incarnation,
		state:        s.member.State(),
		applied:      s.member.AppliedIndex(),
	}
	if c, ok := s.member.(interface{ CommitIndex() uint64 }); ok {
		r.commit = c.CommitIndex()
	}
	return r
}

// serveReadyz answers a Kubernetes readiness probe: 200 "ready" or 503 with
// the reason (readiness.notReady). /healthz is liveness: the process
// answers and is not shutting down.
func (s *Server) serveReadyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	if reason := s.readiness().notReady(); reason != "" {
		http.Error(w, "not ready: "+reason, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}
