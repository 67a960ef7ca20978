package broker

// GetTelemetrySubscriptions (key 71), v0 (KIP-714):
//   - A client sending the zero instance id gets a new random (version 4)
//     UUID; an id the broker does not know (it restarted) is taken as is.
//   - The answer combines the CLIENT_METRICS subscriptions whose match
//     patterns all match the client (client_metrics.go): the union of
//     their metric prefixes ([""] when one asks for *, none when no
//     subscription matches), the smallest push interval (300000 ms when
//     none matches), and a subscription id hashing them, so a client
//     notices a change at its next push (UNKNOWN_SUBSCRIPTION_ID).
//   - Accepted compression: zstd, lz4, gzip, snappy (and none);
//     telemetry_max_bytes 1 MiB; delta temporality, as Kafka asks.
//   - Asking again within the push interval, when nothing changed and no
//     push was refused for an unknown subscription or a compression type,
//     is THROTTLING_QUOTA_EXCEEDED.
//   - Needs only an authenticated connection, as in Kafka.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(kmsg.GetTelemetrySubscriptions, 0, 0, handleGetTelemetrySubscriptions)
	checksACLs(kmsg.GetTelemetrySubscriptions)
}

func handleGetTelemetrySubscriptions(rc *requestContext, req *kmsg.GetTelemetrySubscriptionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	res := rc.s.telemetry.get(rc, req.ClientInstanceID, rc.s.clusterState())
	resp.ErrorCode = rc.countError(res.code)
	resp.ClientInstanceID = res.id
	resp.SubscriptionID = res.sub.id
	resp.AcceptedCompressionTypes = append([]int8(nil), telemetryCompressionTypes...)
	resp.PushIntervalMillis = res.sub.intervalMs
	resp.TelemetryMaxBytes = telemetryMaxBytes
	resp.DeltaTemporality = true
	resp.RequestedMetrics = append([]string{}, res.sub.metrics...)
	return resp
}
