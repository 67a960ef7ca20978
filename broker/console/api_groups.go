package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

type groupSummaryJSON struct {
	Group        string `json:"group"`
	State        string `json:"state"`
	ProtocolType string `json:"protocolType"`
	Coordinator  int32  `json:"coordinator"`
}

// listGroups: GET /api/v1/groups, every group of the cluster by name.
func (c *Console) listGroups(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		c.writeKafkaError(w, "listing groups", err)
		return
	}
	out := struct {
		Groups []groupSummaryJSON `json:"groups"`
	}{Groups: []groupSummaryJSON{}}
	for _, g := range listed.Sorted() {
		out.Groups = append(out.Groups, groupSummaryJSON{Group: g.Group, State: g.State, ProtocolType: g.ProtocolType, Coordinator: g.Coordinator})
	}
	writeJSON(w, http.StatusOK, out)
}

type assignmentJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

type memberJSON struct {
	MemberID   string           `json:"memberId"`
	InstanceID *string          `json:"instanceId"`
	ClientID   string           `json:"clientId"`
	ClientHost string           `json:"clientHost"`
	Assigned   []assignmentJSON `json:"assigned"`
}

type groupOffsetJSON struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committedOffset"` // -1: none
	LogEndOffset    int64  `json:"logEndOffset"`    // -1: unknown
	Lag             int64  `json:"lag"`             // -1: unknown
	// LagSeconds is the age of the next record the group will read
	// (the lag evaluator's); -1: unknown.
	LagSeconds float64 `json:"lagSeconds"`
	Status     string  `json:"status,omitempty"` // Burrow-style; absent: not evaluated
	MemberID   string  `json:"memberId,omitempty"`
	Error      string  `json:"error,omitempty"`
}

type groupJSON struct {
	Group        string            `json:"group"`
	State        string            `json:"state"`
	ProtocolType string            `json:"protocolType"`
	Protocol     string            `json:"protocol"`
	Coordinator  int32             `json:"coordinator"`
	Members      []memberJSON      `json:"members"`
	Offsets      []groupOffsetJSON `json:"offsets"`
	TotalLag     int64             `json:"totalLag"`
	// MaxLagSeconds is the largest partition lag in seconds; -1: unknown.
	MaxLagSeconds float64 `json:"maxLagSeconds"`
	// Status and Severity are the lag evaluator's (broker/lag); absent
	// when it has no verdict.
	Status   string `json:"status,omitempty"`
	Severity string `json:"severity,omitempty"`
	// History is the total lag over the last hour, oldest first
	// (lag_history.go), this answer's measurement included.
	History []lagPoint `json:"history"`
}

// getGroup: GET /api/v1/groups/{group}: members with assignments, and per
// partition the committed offset, log end offset and lag in records and
// seconds, with the lag evaluator's status and the last hour's history.
func (c *Console) getGroup(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	group := r.PathValue("group")
	adm := kadm.NewClient(cl)
	lags, err := adm.Lag(ctx, group)
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("describing group %q", group), err)
		return
	}
	gl, ok := lags[group]
	if ok {
		err = gl.Error()
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("describing group %q", group), err)
		return
	}
	// Kafka describes a group it does not know as Dead with nothing in it.
	if !ok || (gl.State == "Dead" && len(gl.Members) == 0 && len(gl.Lag) == 0) {
		writeError(w, http.StatusNotFound, kerr.GroupIDNotFound.Message, "group %q not found", group)
		return
	}
	out := groupJSON{
		Group: gl.Group, State: gl.State, ProtocolType: gl.ProtocolType, Protocol: gl.Protocol,
		Coordinator: gl.Coordinator.NodeID, Members: []memberJSON{}, Offsets: []groupOffsetJSON{},
	}
	for _, m := range gl.Members {
		mj := memberJSON{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost, Assigned: []assignmentJSON{}}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				mj.Assigned = append(mj.Assigned, assignmentJSON{Topic: t.Topic, Partitions: t.Partitions})
			}
		}
		out.Members = append(out.Members, mj)
	}
	ev, evaluated := c.evaluatorLag(ctx, group)
	out.MaxLagSeconds = -1
	if evaluated {
		out.Status, out.Severity, out.MaxLagSeconds = ev.Status, ev.Severity, ev.maxSeconds()
	}
	for _, l := range gl.Lag.Sorted() {
		oj := groupOffsetJSON{Topic: l.Topic, Partition: l.Partition, CommittedOffset: l.Commit.At, LogEndOffset: l.End.Offset, Lag: l.Lag, LagSeconds: -1}
		if pl, ok := ev.partition(l.Topic, l.Partition); ok {
			oj.LagSeconds, oj.Status = pl.LagSeconds, pl.Status
		}
		if l.Member != nil {
			oj.MemberID = l.Member.MemberID
		}
		if l.Err != nil {
			oj.Error = l.Err.Error()
		}
		if l.Lag > 0 {
			out.TotalLag += l.Lag
		}
		out.Offsets = append(out.Offsets, oj)
	}
	now := time.Now()
	c.history.add(group, lagPoint{Time: now.UnixMilli(), Records: out.TotalLag, Seconds: out.MaxLagSeconds})
	out.History = c.history.get(group, now)
	writeJSON(w, http.StatusOK, out)
}

// evaluationTimeout bounds a question to Config.GroupLag.
const evaluationTimeout = 3 * time.Second

// groupEvaluation is Config.GroupLag's answer.
type groupEvaluation GroupLag

// evaluatorLag asks Config.GroupLag about group; ok is false when it is
// not set, does not know the group or fails (lag in seconds and the
// status are then unknown, which the answer says, rather than an error).
func (c *Console) evaluatorLag(ctx context.Context, group string) (groupEvaluation, bool) {
	if c.cfg.GroupLag == nil {
		return groupEvaluation{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, evaluationTimeout)
	defer cancel()
	gl, err := c.cfg.GroupLag(ctx, group)
	if err != nil {
		if !errors.Is(err, ErrGroupNotFound) {
			c.cfg.Logger.Debug("console: asking the lag evaluator", "group", group, "err", err)
		}
		return groupEvaluation{}, false
	}
	return groupEvaluation(gl), true
}

// maxSeconds is the largest known partition lag in seconds, -1 if none is
// known.
func (g groupEvaluation) maxSeconds() float64 {
	most := -1.0
	for _, p := range g.Partitions {
		most = max(most, p.LagSeconds)
	}
	return most
}

func (g groupEvaluation) partition(topic string, partition int32) (PartitionLag, bool) {
	for _, p := range g.Partitions {
		if p.Topic == topic && p.Partition == partition {
			return p, true
		}
	}
	return PartitionLag{}, false
}

// deleteGroup: DELETE /api/v1/groups/{group}, 204; 409 while it has
// members.
func (c *Console) deleteGroup(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	group := r.PathValue("group")
	adm := kadm.NewClient(cl)
	resp, err := adm.DeleteGroup(ctx, group)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("deleting group %q", group), err)
		return
	}
	c.history.forget(group)
	w.WriteHeader(http.StatusNoContent)
}
