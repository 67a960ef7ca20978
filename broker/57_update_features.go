package broker

// UpdateFeatures (key 57), v0–v1: changes the cluster's finalized features
// (KIP-584, KIP-778), which ApiVersions v3+ reports.
//
//   - Features and the levels this node supports: metadata.version 7–25
//     (Kafka 3.3-IV3 to 4.0-IV3; nothing in Strata depends on it, so every
//     level is equivalent and every downgrade lossless), group.version 0–1
//     (1 = the KIP-848 consumer protocol; 0–0 with
//     group.consumer.protocol.enable=false), transaction.version 0–0
//     (KIP-890 part 2, level 2, is not implemented; level 1 is not wired to
//     the transaction coordinator) and kraft.version 0–0 (static voters, no
//     KIP-853). A cluster no UpdateFeatures has changed runs at
//     metadata.version 25 and group.version 1 (cluster.DefaultFeatureLevels).
//   - v1 upgrade_type: 1 UPGRADE, 2 SAFE_DOWNGRADE, 3 UNSAFE_DOWNGRADE (the
//     same here: no downgrade loses metadata); v0's allow_downgrade is
//     SAFE_DOWNGRADE, as in Kafka. Level 0 disables a feature (a downgrade);
//     metadata.version cannot be disabled.
//   - As Kafka's KRaft controller the request applies as a whole or not at
//     all. INVALID_UPDATE_VERSION, top-level only with the failing feature in
//     the message and no per-feature results, for: an unknown feature, a
//     level outside this node's range, a negative level, an unknown upgrade
//     type, a lower level without a downgrade type, a higher one with it.
//     A feature named twice is INVALID_REQUEST. On success every feature has
//     a result with error 0.
//   - validate_only (v1) checks everything and changes nothing.
//   - Any node commits the change through the metadata quorum
//     (cluster.UpdateFeatures) and answers once it has applied it, so an
//     ApiVersions to this node right after sees the new levels and epoch.
//     timeout_ms bounds the round trip (REQUEST_TIMED_OUT: the change may
//     still apply); a node shutting down answers NOT_CONTROLLER.
//   - Limits: the ranges checked are this node's; other nodes' ranges are
//     not registered in the quorum, so upgrade every node before raising a
//     level. No authorization, like every admin request here.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.UpdateFeatures, 0, 1, handleUpdateFeatures)
}

// updateFeaturesDefaultTimeout bounds a request that names no timeout
// (Kafka's default timeout_ms).
const updateFeaturesDefaultTimeout = 60 * time.Second

// Kafka's upgrade types (UpdateFeatures v1+).
const (
	upgradeTypeUpgrade         int8 = 1
	upgradeTypeSafeDowngrade   int8 = 2
	upgradeTypeUnsafeDowngrade int8 = 3
)

// supportedFeatures are the feature levels a node with cfg supports: what
// the state machine knows, less the KIP-848 protocol when it is disabled.
func supportedFeatures(cfg *Config) map[string]cluster.FeatureRange {
	out := cluster.KnownFeatures()
	if !cfg.GroupConsumerProtocolEnable {
		out[cluster.GroupVersionFeature] = cluster.FeatureRange{Min: 0, Max: 0}
	}
	return out
}

// reportedFeatures are the finalized levels a node with cfg reports for st:
// each capped at what the node supports (group.version is 0 where the
// consumer protocol is disabled), level-0 features left out.
func reportedFeatures(cfg *Config, st cluster.State) map[string]int16 {
	supported := supportedFeatures(cfg)
	out := st.FinalizedFeatures()
	for name, level := range out {
		if r, ok := supported[name]; ok && level > r.Max {
			level = r.Max
		}
		if level <= 0 {
			delete(out, name)
			continue
		}
		out[name] = level
	}
	return out
}

// consumerProtocolActive reports whether this node serves the KIP-848
// consumer group protocol: enabled in its config and group.version >= 1.
func (s *Server) consumerProtocolActive() bool {
	return s.cfg.GroupConsumerProtocolEnable && s.clusterState().FeatureLevel(cluster.GroupVersionFeature) >= 1
}

// featureUpdateError is why a feature update is refused.
type featureUpdateError struct {
	code    int16
	message string
}

func invalidFeatureUpdate(feature string, level int16, format string, args ...any) *featureUpdateError {
	return &featureUpdateError{
		code:    kerr.InvalidUpdateVersion.Code,
		message: fmt.Sprintf("Invalid update version %d for feature %s. ", level, feature) + fmt.Sprintf(format, args...),
	}
}

// unsupportedFeatureNotes explain the levels Strata does not implement.
var unsupportedFeatureNotes = map[string]string{
	cluster.TransactionVersionFeature: " Strata does not implement KIP-890 part 2 (transaction.version 2: an epoch bump per transaction, implicit AddPartitionsToTxn through Produce v12).",
	cluster.KRaftVersionFeature:       " The metadata quorum's voters are static (no KIP-853).",
}

func handleUpdateFeatures(rc *requestContext, req *kmsg.UpdateFeaturesRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	fail := func(e *featureUpdateError) kmsg.Response {
		resp.ErrorCode = rc.countError(e.code)
		msg := e.message
		if e.code == kerr.InvalidUpdateVersion.Code {
			msg = "The update failed for all features since the following feature had an error: " + msg
		}
		resp.ErrorMessage = &msg
		return resp
	}
	rec, ferr := rc.s.checkFeatureUpdates(req)
	if ferr != nil {
		return fail(ferr)
	}
	if len(rec.Updates) > 0 && !req.ValidateOnly {
		timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
		if timeout <= 0 {
			timeout = updateFeaturesDefaultTimeout
		}
		ctx, cancel := context.WithTimeout(rc.s.ctx, timeout)
		err := rc.s.meta.updateFeatures(ctx, rec)
		cancel()
		if ferr := featureProposeResult(err); ferr != nil {
			return fail(ferr)
		}
	}
	for _, u := range req.FeatureUpdates {
		r := kmsg.NewUpdateFeaturesResponseResult()
		r.Feature = u.Feature
		resp.Results = append(resp.Results, r)
	}
	return resp
}

// checkFeatureUpdates turns the request into the record to propose after
// checking every update against this node's ranges and the applied state.
func (s *Server) checkFeatureUpdates(req *kmsg.UpdateFeaturesRequest) (cluster.UpdateFeatures, *featureUpdateError) {
	var rec cluster.UpdateFeatures
	supported := supportedFeatures(&s.cfg)
	st := s.clusterState()
	for i, u := range req.FeatureUpdates {
		if slices.ContainsFunc(req.FeatureUpdates[:i], func(o kmsg.UpdateFeaturesRequestFeatureUpdate) bool { return o.Feature == u.Feature }) {
			return rec, &featureUpdateError{code: kerr.InvalidRequest.Code, message: fmt.Sprintf("feature %s is named more than once", u.Feature)}
		}
		upgradeType := u.UpgradeType
		if req.Version == 0 {
			upgradeType = upgradeTypeUpgrade
			if u.AllowDowngrade {
				upgradeType = upgradeTypeSafeDowngrade
			}
		}
		if upgradeType < upgradeTypeUpgrade || upgradeType > upgradeTypeUnsafeDowngrade {
			return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "Unknown upgrade type %d: 1 upgrades, 2 and 3 downgrade.", upgradeType)
		}
		if u.MaxVersionLevel < 0 {
			return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "A feature version cannot be less than 0.")
		}
		r, known := supported[u.Feature]
		if !known {
			return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "Strata does not know this feature.")
		}
		if !r.Contains(u.MaxVersionLevel) {
			note := unsupportedFeatureNotes[u.Feature]
			if u.Feature == cluster.GroupVersionFeature && !s.cfg.GroupConsumerProtocolEnable {
				note = " group.consumer.protocol.enable is false on this node."
			}
			return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "Node %d supports levels %d to %d.%s", s.cfg.NodeID, r.Min, r.Max, note)
		}
		fu := cluster.FeatureUpdate{Feature: u.Feature, Level: u.MaxVersionLevel, Downgrade: upgradeType != upgradeTypeUpgrade}
		if err := cluster.CheckFeatureUpdate(st, fu); err != nil {
			cur := st.FeatureLevel(u.Feature)
			switch {
			case errors.Is(err, cluster.ErrFeatureDowngrade):
				return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "The finalized level is %d: a downgrade needs upgrade type 2 or 3 (v0: allow_downgrade).", cur)
			case errors.Is(err, cluster.ErrFeatureUpgradeAsDowngrade):
				return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "The finalized level is %d: can't downgrade to a newer version.", cur)
			default:
				return rec, invalidFeatureUpdate(u.Feature, u.MaxVersionLevel, "%v", err)
			}
		}
		rec.Updates = append(rec.Updates, fu)
	}
	return rec, nil
}

// featureProposeResult maps the outcome of proposing an UpdateFeatures
// record to the request's error, nil on success.
func featureProposeResult(err error) *featureUpdateError {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrRejected), errors.Is(err, cluster.ErrInvalid):
		// The state moved between the check and the commit.
		return &featureUpdateError{code: kerr.InvalidUpdateVersion.Code, message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, metadata.ErrNotLeader),
		errors.Is(err, metadata.ErrNoController), errors.Is(err, metadata.ErrControllerLost):
		return &featureUpdateError{code: kerr.RequestTimedOut.Code, message: "the metadata quorum did not apply the change in time; it may still take effect"}
	case errors.Is(err, metadata.ErrClosed), errors.Is(err, context.Canceled):
		return &featureUpdateError{code: kerr.NotController.Code, message: "this node is shutting down"}
	default:
		return &featureUpdateError{code: kerr.UnknownServerError.Code, message: err.Error()}
	}
}
