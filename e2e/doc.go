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
// What they cover: kcat round trips through every codec and across kill -9
// restarts (kcat_test.go); kafkajs produce, fetch and group consumption
// (kafkajs_test.go); consumer groups shared by three kcat -G members and two
// kafkajs members, then resumed by a new member exactly at the committed
// offsets (groups_test.go); the strata CLI (cli_test.go); SIGTERM and the
// admin HTTP listener (lifecycle_test.go); deploy/'s Prometheus rules and
// Grafana dashboards, with promtool and against a live node's /metrics
// (deploy_test.go).
//
// External tools: when one is missing the test skips, except under CI (the
// CI environment variable set), where it fails and names what to install;
// scripts/install-test-deps.sh installs them all.
package e2e
