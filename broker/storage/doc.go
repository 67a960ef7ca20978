// Package storage is Strata's partition log: segments of Kafka v2 record
// batches with Kafka-format offset and time indexes.
package storage
