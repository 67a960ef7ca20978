// Package e2e holds Strata's end-to-end tests: the real `strata` binary run as
// a process, driven by real clients that share no code with the broker —
// kcat (librdkafka), kafkajs (node) and the strata CLI — plus franz-go from
// the test itself.
//
// Running them:
//
//	make e2e                 # installs kcat/node/kafkajs if missing, then go test ./e2e/...
//	go test ./e2e/ -run Kcat # one test; tools must already be installed
//
// TestMain builds ./cmd/strata once into a temporary directory (or uses the
// binary named by STRATA_E2E_BIN). Each test starts its own server on free
// loopback ports with its own data directory, waits until the Kafka port
// accepts connections and /healthz answers 200, and stops it by PID: SIGTERM
// for a graceful stop, SIGKILL to simulate a crash. A failing test prints the
// tail of the server's log.
//
// External tools: when one is missing the test skips, except under CI (the
// CI environment variable set), where it fails and names what to install;
// scripts/install-test-deps.sh installs them all.
package e2e
