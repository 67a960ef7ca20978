// Package console serves Strata's web console and its JSON API on the admin
// HTTP listener: the embedded single-page UI at / and the API under
// /api/v1/ (documented in openapi.yaml, served at /api/v1/openapi.yaml).
//
// The console is a Kafka client of the node it runs on, like the CLI: every
// answer comes from the Kafka admin and data paths (kadm and kgo against the
// node's own listener, with the identity the node's inter-broker connections
// use), never from the broker's structures, so it shows what clients see and
// works the same on every node of a cluster. It imports nothing of the
// broker; the broker passes a client factory (Config.NewClient).
//
// The caller's duties, in order:
//
//  1. New(Config) with a factory that makes clients for the node's own
//     listener (seed and TLS/SASL options included) and, optionally, the
//     node's lag evaluator (GroupLag) and remote log sizes
//     (RemoteLog). New starts the lag history's sampler.
//  2. Mount(mux) on the admin listener's mux, which the listener wraps in
//     its authentication and authorization (GET and HEAD need DESCRIBE on
//     the cluster, every other method ALTER). The console adds the CSRF
//     check (csrf.go) for state-changing requests.
//  3. Close() when the listener stops: it stops the sampler, waits for
//     it, and closes the shared client.
//
// Errors are JSON: {"error": "...", "code": "KAFKA_ERROR_NAME"} where a
// Kafka error code is the cause (code is omitted otherwise), with 400 for
// invalid input, 403 for refused requests, 404 for an unknown topic or
// group, 409 when the topic exists or the group is not empty (deleting it,
// resetting its offsets), and 502 when
// the cluster could not answer.
//
// The front end (ui/, Preact + htm) is bundled by esbuild's Go API into
// dist/ by `go generate ./broker/console` (internal/bundle); dist/ is
// committed, so building Strata needs no Node.
package console

//go:generate go run ./internal/bundle/cmd
