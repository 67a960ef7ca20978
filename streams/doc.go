// Package streams will hold the stream-processing library (a typed DSL over
// topics) and the runner for declarative YAML jobs. It is a Kafka client only
// and never imports the broker.
package streams
