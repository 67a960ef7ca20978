package broker

// ApiVersions (key 18), v0–v4.
//
//   - The list is built from the handler registry, so every advertised range
//     is handled; APIs gated by a property (ConsumerGroupHeartbeat and
//     ConsumerGroupDescribe: group.consumer.protocol.enable, default true) are
//     listed only where they are served. The KIP-848 pair is also left out
//     while the cluster's finalized group.version is 0.
//   - A version newer than ours is answered in the v0 form with
//     UNSUPPORTED_VERSION and our ranges, so the client can downgrade (KIP-511);
//     the response header is always v0, as Kafka's.
//   - v3+ clients send their software name and version; we accept any.
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

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.ApiVersions, 0, 4, handleAPIVersions)
}

func handleAPIVersions(rc *requestContext, req *kmsg.ApiVersionsRequest) kmsg.Response {
	resp := apiVersionsResponse(&rc.s.cfg, req.Version)
	if !rc.s.consumerProtocolActive() {
		resp.ApiKeys = slices.DeleteFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
			return k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16() || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16()
		})
	}
	if req.Version >= 3 {
		rc.conn.softwareName, rc.conn.softwareVersion = req.ClientSoftwareName, req.ClientSoftwareVersion
		addFeatures(resp, rc.s)
	}
	return resp
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
