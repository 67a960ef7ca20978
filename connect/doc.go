// Package connect will hold the Kafka-Connect-compatible runtime: workers that
// share connector tasks through a consumer group, the REST API on port 8083,
// and the built-in JDBC and file connectors. It is a Kafka client only and
// never imports the broker.
package connect
