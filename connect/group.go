package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Workers of one cluster are members of a classic Kafka group (group.id)
// with protocol type "connect", like Kafka Connect's. The broker treats the
// metadata and assignments as opaque bytes; ours are JSON:
//
//	JoinGroup metadata  {"url":"host:port","digest":"<units digest>","units":[{"connector","task"}…],"epoch":e}
//	SyncGroup assignment {"generation":e,"leader":"<member id>","leader_url":"host:port","units":[…]}
//
// The leader (chosen by the broker) reads the config topic to its end and
// assigns every connector and task with assignUnits, keeping each unit
// where it ran. A worker whose view of the connectors changed rejoins with
// a new digest, which makes the broker rebalance the group. A worker that
// dies stops heartbeating; after session.timeout.ms the broker drops it and
// the others rejoin and share its units.

const (
	connectProtocolType = "connect"
	connectProtocolName = "strata-v1"
)

type memberMetadata struct {
	URL    string `json:"url"`
	Digest string `json:"digest"`
	Units  []unit `json:"units"`
	Epoch  int32  `json:"epoch"` // the member's last assignment epoch
}

// memberAssignment is one member's share. Epoch numbers assignments for
// the status topic: the leader picks one above the broker's generation,
// every member's last epoch and every status record's generation, so it
// grows strictly even when the broker forgets the group and restarts its
// generations at 1.
type memberAssignment struct {
	Epoch     int32  `json:"generation"`
	Leader    string `json:"leader"`
	LeaderURL string `json:"leader_url"`
	Units     []unit `json:"units"`
}

// groupHooks is what the membership loop needs from the worker.
type groupHooks struct {
	// metadata describes this worker for a join: its URL, the digest of the
	// units it knows of, and the units it runs.
	metadata func() memberMetadata
	// assign is called on the leader with every member's metadata; it
	// returns each member's units and the epoch of the assignment (at
	// least minEpoch).
	assign func(ctx context.Context, members map[string]memberMetadata, minEpoch int32) (map[string][]unit, int32, error)
	// assigned delivers the worker's units after each rebalance.
	assigned func(memberAssignment)
	// revoked is called when the worker lost its membership (its units may
	// be running elsewhere already).
	revoked func()
}

// membership runs the join/sync/heartbeat loop until ctx ends.
type membership struct {
	client *kgo.Client
	cfg    WorkerConfig
	log    *slog.Logger
	hooks  groupHooks
	rejoin chan struct{} // cap 1: the worker wants a rebalance

	memberID   string
	generation int32
}

func (m *membership) requestRejoin() {
	select {
	case m.rejoin <- struct{}{}:
	default:
	}
}

func (m *membership) run(ctx context.Context) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := m.joinAndSync(ctx)
		if err == nil {
			backoff = 200 * time.Millisecond
			err = m.heartbeatUntilRebalance(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		var ke *kerr.Error
		switch {
		case errors.Is(err, errRejoin) || errors.Is(err, kerr.RebalanceInProgress):
			continue
		case errors.As(err, &ke) && (ke == kerr.UnknownMemberID || ke == kerr.IllegalGeneration || ke == kerr.FencedInstanceID):
			m.log.Info("connect: group membership lost; rejoining", "err", err)
			if ke == kerr.UnknownMemberID {
				m.memberID = ""
			}
			m.hooks.revoked()
			continue
		case errors.Is(err, kerr.InvalidSessionTimeout):
			m.log.Error("connect: the broker refuses session.timeout.ms; it must lie within the broker's group.min.session.timeout.ms and group.max.session.timeout.ms",
				"session.timeout.ms", m.cfg.SessionTimeout.Milliseconds(), "err", err)
		case err != nil:
			m.log.Warn("connect: group protocol", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

var errRejoin = errors.New("connect: rejoin requested")

func (m *membership) joinAndSync(ctx context.Context) error {
	// Drain a pending request: the join below carries the newest metadata.
	select {
	case <-m.rejoin:
	default:
	}
	meta, err := json.Marshal(m.hooks.metadata())
	if err != nil {
		return err
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = m.cfg.GroupID
	join.SessionTimeoutMillis = int32(m.cfg.SessionTimeout / time.Millisecond)
	join.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout / time.Millisecond)
	join.ProtocolType = connectProtocolType
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name = connectProtocolName
	proto.Metadata = meta
	join.Protocols = append(join.Protocols, proto)
	var resp *kmsg.JoinGroupResponse
	for attempt := 0; ; attempt++ {
		join.MemberID = m.memberID
		resp, err = join.RequestWith(ctx, m.client)
		if err != nil {
			return fmt.Errorf("join group %s: %w", m.cfg.GroupID, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			if errors.Is(err, kerr.MemberIDRequired) && attempt < 3 {
				m.memberID = resp.MemberID
				continue
			}
			if errors.Is(err, kerr.UnknownMemberID) {
				m.memberID = ""
			}
			return fmt.Errorf("join group %s: %w", m.cfg.GroupID, err)
		}
		break
	}
	m.memberID = resp.MemberID
	m.generation = resp.Generation

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group = m.cfg.GroupID
	sync.Generation = resp.Generation
	sync.MemberID = resp.MemberID
	sync.ProtocolType = kmsg.StringPtr(connectProtocolType)
	sync.Protocol = kmsg.StringPtr(connectProtocolName)
	if resp.LeaderID == resp.MemberID {
		members := make(map[string]memberMetadata, len(resp.Members))
		for _, mem := range resp.Members {
			var md memberMetadata
			if err := json.Unmarshal(mem.ProtocolMetadata, &md); err != nil {
				m.log.Warn("connect: unreadable member metadata", "member", mem.MemberID, "err", err)
			}
			members[mem.MemberID] = md
		}
		minEpoch := resp.Generation
		for _, md := range members {
			minEpoch = max(minEpoch, md.Epoch+1)
		}
		plan, epoch, err := m.hooks.assign(ctx, members, minEpoch)
		if err != nil {
			return fmt.Errorf("assigning: %w", err)
		}
		ids := make([]string, 0, len(members))
		for id := range members {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			a := memberAssignment{Epoch: epoch, Leader: resp.MemberID, LeaderURL: members[resp.MemberID].URL, Units: plan[id]}
			if a.Units == nil {
				a.Units = []unit{}
			}
			b, err := json.Marshal(a)
			if err != nil {
				return err
			}
			ga := kmsg.NewSyncGroupRequestGroupAssignment()
			ga.MemberID = id
			ga.MemberAssignment = b
			sync.GroupAssignment = append(sync.GroupAssignment, ga)
		}
	}
	sresp, err := sync.RequestWith(ctx, m.client)
	if err != nil {
		return fmt.Errorf("sync group %s: %w", m.cfg.GroupID, err)
	}
	if err := kerr.ErrorForCode(sresp.ErrorCode); err != nil {
		return fmt.Errorf("sync group %s: %w", m.cfg.GroupID, err)
	}
	var a memberAssignment
	if err := json.Unmarshal(sresp.MemberAssignment, &a); err != nil {
		return fmt.Errorf("sync group %s: unreadable assignment: %w", m.cfg.GroupID, err)
	}
	if a.Epoch < resp.Generation {
		a.Epoch = resp.Generation
	}
	m.hooks.assigned(a)
	return nil
}

func (m *membership) heartbeatUntilRebalance(ctx context.Context) error {
	ticker := time.NewTicker(m.cfg.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.rejoin:
			return errRejoin
		case <-ticker.C:
		}
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group = m.cfg.GroupID
		hb.Generation = m.generation
		hb.MemberID = m.memberID
		hctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
		resp, err := hb.RequestWith(hctx, m.client)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m.log.Warn("connect: heartbeat", "err", err)
			continue
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return err
		}
	}
}

// leave sends LeaveGroup (graceful shutdown only).
func (m *membership) leave(ctx context.Context) {
	if m.memberID == "" {
		return
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = m.memberID
	mem := kmsg.NewLeaveGroupRequestMember()
	mem.MemberID = m.memberID
	req.Members = append(req.Members, mem)
	if _, err := req.RequestWith(ctx, m.client); err != nil {
		m.log.Warn("connect: leaving group", "err", err)
	}
}
