package broker

// ApiVersions (key 18), v0–v5.
//
//   - The list is built from the handler registry, so every advertised range
//     is handled; APIs gated by a property (ConsumerGroupHeartbeat and
//     ConsumerGroupDescribe: group.consumer.protocol.enable, default true) are
//     listed only where they are served. The KIP-848 pair is also left out
//     while the cluster's finalized group.version is 0.
//   - A version newer than ours is answered in the v0 form with
//     UNSUPPORTED_VERSION and our ranges, so the client can downgrade (KIP-511);
//     the response header is always v0, as Kafka's.
//   - v3+ clients send their software name and version; we accept any and
//     keep them for the connection (KIP-714 selectors), unless the name is
//     empty (an ApiVersions a kgo user issues on the client's connection,
//     which Kafka ignores as invalid too). kgo sends v5 first:
//     answered UNSUPPORTED_VERSION it does not retry with a version that
//     carries its name, so v5 is what gets kgo's name to the broker.
//   - v5 (KIP-1242): a client names the cluster and node it believes it
//     reached (kgo does on connections to brokers it learned from
//     Metadata, not to seeds). Both set and either not ours:
//     REBOOTSTRAP_REQUIRED, so the client drops the stale mapping and
//     rediscovers the cluster from its seeds (a node that has no cluster
//     id yet checks the node id only); only one set: INVALID_REQUEST.
//     Both answer with no API keys. The response is v4's.
//   - v3+ responses carry the features (KIP-584): SupportedFeatures are this
//     node's ranges (see 57_update_features.go); FinalizedFeatures the
//     applied metadata state's levels, capped at this node's ranges, with
//     min = max = the level and level-0 features left out, as Kafka does;
//     FinalizedFeaturesEpoch is the state's features epoch (the count of
//     UpdateFeatures records that changed a level, 0 for a cluster still at
//     its default levels; never -1, which clients read as "no features").
//   - v3 omits supported features whose minimum is 0 (every one but
//     metadata.version): clients before KAFKA-17011 fail to decode them;
//     v4 lists them all (KIP-1022, Kafka's KAFKA-17492).

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.ApiVersions, 0, 5, handleAPIVersions)
}

func handleAPIVersions(rc *requestContext, req *kmsg.ApiVersionsRequest) kmsg.Response {
	if req.Version >= 3 && req.ClientSoftwareName != "" {
		rc.conn.softwareName, rc.conn.softwareVersion = req.ClientSoftwareName, req.ClientSoftwareVersion
	}
	if code := rc.checkExpectedNode(req); code != 0 {
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		resp.ErrorCode = rc.countError(code)
		return resp
	}
	resp := apiVersionsResponse(&rc.s.cfg, req.Version)
	if !rc.s.consumerProtocolActive() {
		resp.ApiKeys = slices.DeleteFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
			return k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16() || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16()
		})
	}
	if req.Version >= 3 {
		addFeatures(resp, rc.s)
	}
	return resp
}

// checkExpectedNode checks v5's ClusterID and NodeID, the cluster and
// node the client believes it reached (KIP-1242): INVALID_REQUEST when only
// one is set, REBOOTSTRAP_REQUIRED when they name another cluster or node.
func (rc *requestContext) checkExpectedNode(req *kmsg.ApiVersionsRequest) int16 {
	if req.Version < 5 || req.ClusterID == nil && req.NodeID == -1 {
		return 0
	}
	if req.ClusterID == nil || req.NodeID == -1 {
		return kerr.InvalidRequest.Code
	}
	ours := rc.s.clusterState().ClusterID
	if req.NodeID != rc.s.cfg.NodeID || ours != "" && *req.ClusterID != ours {
		return kerr.RebootstrapRequired.Code
	}
	return 0
}

func apiVersionsResponse(cfg *Config, version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = version
	for _, a := range servedAPIs(cfg) {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey = a.key
		k.MinVersion = a.minVersion
		k.MaxVersion = a.maxVersion
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

// addFeatures fills the v3+ feature fields from this node's supported
// ranges and the applied metadata state, in name order.
func addFeatures(resp *kmsg.ApiVersionsResponse, s *Server) {
	st := s.clusterState()
	supported := supportedFeatures(&s.cfg)
	for _, name := range slices.Sorted(maps.Keys(supported)) {
		r := supported[name]
		if resp.Version < 4 && r.Min == 0 {
			continue
		}
		f := kmsg.NewApiVersionsResponseSupportedFeature()
		f.Name, f.MinVersion, f.MaxVersion = name, r.Min, r.Max
		resp.SupportedFeatures = append(resp.SupportedFeatures, f)
	}
	finalized := reportedFeatures(&s.cfg, st)
	for _, name := range slices.Sorted(maps.Keys(finalized)) {
		f := kmsg.NewApiVersionsResponseFinalizedFeature()
		f.Name = name
		f.MinVersionLevel, f.MaxVersionLevel = finalized[name], finalized[name]
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
	}
	resp.FinalizedFeaturesEpoch = st.FeaturesEpoch
}
