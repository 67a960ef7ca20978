package broker

// PushTelemetry (key 72), v0 (KIP-714), checked in Kafka's order:
//   - the zero instance id: INVALID_REQUEST; an instance the broker does
//     not know (expired, or the broker restarted) or a subscription id that
//     is not the current one: UNKNOWN_SUBSCRIPTION_ID (the client asks for
//     its subscriptions again);
//   - a push after the instance's terminating push: INVALID_REQUEST;
//   - a compression type not accepted: UNSUPPORTED_COMPRESSION_TYPE;
//   - a second push within the push interval of the last one (with no
//     GetTelemetrySubscriptions between): THROTTLING_QUOTA_EXCEEDED; a
//     terminating push is never throttled;
//   - more than telemetry_max_bytes (1 MiB): TELEMETRY_TOO_LARGE;
//   - a payload that does not decompress or is not OTLP MetricsData:
//     INVALID_RECORD.
//   - The metrics are exported on /metrics (telemetry.go).
//   - Needs only an authenticated connection, as in Kafka.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(kmsg.PushTelemetry, 0, 0, handlePushTelemetry)
	checksACLs(kmsg.PushTelemetry)
}

func handlePushTelemetry(rc *requestContext, req *kmsg.PushTelemetryRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.PushTelemetryResponse)
	code, _ := rc.s.telemetry.push(pushRequest{
		id:             req.ClientInstanceID,
		subscriptionID: req.SubscriptionID,
		terminating:    req.Terminating,
		compression:    req.CompressionType,
		metrics:        req.Metrics,
	}, rc.s.clusterState())
	resp.ErrorCode = rc.countError(code)
	return resp
}
