package broker

// ApiVersions (key 18), v0–v4.
//
//   - The list is built from the handler registry, so every advertised range
//     is handled; APIs gated by a property (ConsumerGroupHeartbeat and
//     ConsumerGroupDescribe: group.consumer.protocol.enable, default true) are
//     listed only where they are served.
//   - A version newer than ours is answered in the v0 form with
//     UNSUPPORTED_VERSION and our ranges, so the client can downgrade (KIP-511);
//     the response header is always v0, as Kafka's.
//   - v3+ clients send their software name and version; we accept any.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(kmsg.ApiVersions, 0, 4, handleAPIVersions)
}

func handleAPIVersions(rc *requestContext, req *kmsg.ApiVersionsRequest) kmsg.Response {
	return apiVersionsResponse(&rc.s.cfg, req.Version)
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
