#!/usr/bin/env bash
# install-test-deps.sh: installs what the end-to-end tests need beyond Go:
# kcat (librdkafka's CLI), confluent-kafka-python (librdkafka with an
# OAUTHBEARER callback), node + npm, kafkajs in e2e/kafkajs, icebird and
# DuckDB (@duckdb/node-api) in e2e/iceberg, the console's
# front-end packages in broker/console/ui (its bundle freshness test),
# chromium (the console's browser tests, e2e/console_test.go), and the MinIO
# server in bin/minio for the tiering tests, and PostgreSQL for the JDBC
# connector tests, promtool in bin/ for the deploy/prometheus checks, helm in bin/ for
# the chart's tests, and nfpm in bin/ for the .deb of `make package`.
# Idempotent: each step checks first and does nothing when already satisfied.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf 'install-test-deps: %s\n' "$*"; }

apt_install() {
	# Try with the current package lists first; refresh them only if that fails.
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1; then
		log "apt-get install $* failed; running apt-get update and retrying"
		apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
	fi
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		log "need root to run: $*"
		return 1
	fi
}

if command -v kcat >/dev/null 2>&1; then
	log "kcat: present ($(command -v kcat))"
else
	log "kcat: missing; apt-get install kcat"
	as_root bash -c "$(declare -f log apt_install); apt_install kcat"
fi

# confluent-kafka-python over the system's librdkafka: the librdkafka client
# whose OAUTHBEARER token comes from an application callback (kcat has only
# librdkafka's unsigned development tokens and this build lacks its OIDC).
if /usr/bin/python3 -c 'import confluent_kafka' >/dev/null 2>&1; then
	log "python3-confluent-kafka: present"
else
	log "python3-confluent-kafka: missing; apt-get install python3-confluent-kafka"
	as_root bash -c "$(declare -f log apt_install); apt_install python3-confluent-kafka"
fi

if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	log "node $(node --version) and npm: present ($(command -v node))"
else
	log "node/npm: missing; apt-get install nodejs npm"
	as_root bash -c "$(declare -f log apt_install); apt_install nodejs npm"
fi

# kafkajs and @kafkajs/confluent-schema-registry (the schema registry's
# independent Node client), at the versions package.json pins.
js="$root/e2e/kafkajs"
want="$(node -p 'const d = require(process.argv[1]).dependencies; d.kafkajs + " " + d["@kafkajs/confluent-schema-registry"]' "$js/package.json")"
have="$(node -p 'const v = (p) => { try { return require(process.argv[1] + "/node_modules/" + p + "/package.json").version } catch (e) { return "" } }; v("kafkajs") + " " + v("@kafkajs/confluent-schema-registry")' "$js" 2>/dev/null || true)"
if [ "$have" = "$want" ]; then
	log "kafkajs and confluent-schema-registry ($have): present in e2e/kafkajs/node_modules"
else
	log "kafkajs and confluent-schema-registry ($want): npm ci in e2e/kafkajs"
	(cd "$js" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# The independent Iceberg readers of e2e/iceberg_test.go: icebird (reads a
# table through its metadata) and @duckdb/node-api (DuckDB, with its
# prebuilt library inside the npm package), at the versions package.json pins.
ice="$root/e2e/iceberg"
want="$(node -p 'const d = require(process.argv[1]).dependencies; d.icebird + " " + d["@duckdb/node-api"]' "$ice/package.json")"
have="$(node -p 'const v = (p) => { try { return require(process.argv[1] + "/node_modules/" + p + "/package.json").version } catch (e) { return "" } }; v("icebird") + " " + v("@duckdb/node-api")' "$ice" 2>/dev/null || true)"
if [ "$have" = "$want" ]; then
	log "icebird and @duckdb/node-api ($have): present in e2e/iceberg/node_modules"
else
	log "icebird and @duckdb/node-api ($want): npm ci in e2e/iceberg"
	(cd "$ice" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# The console's front-end packages (preact, htm): broker/console's
# TestDistUpToDate re-bundles them with esbuild's Go API and compares with
# the committed dist/.
ui="$root/broker/console/ui"
want="$(node -p 'const d = require(process.argv[1]).dependencies; d.preact + " " + d.htm' "$ui/package.json")"
have="$(node -p 'const v = (p) => { try { return require(process.argv[1] + "/node_modules/" + p + "/package.json").version } catch (e) { return "" } }; v("preact") + " " + v("htm")' "$ui" 2>/dev/null || true)"
if [ "$have" = "$want" ]; then
	log "console front-end packages (preact htm $have): present in broker/console/ui/node_modules"
else
	log "console front-end packages: npm ci in broker/console/ui"
	(cd "$ui" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# Chromium: the headless browser the console's e2e test drives with chromedp.
if command -v chromium >/dev/null 2>&1; then
	log "chromium: present ($(command -v chromium))"
else
	log "chromium: missing; apt-get install chromium"
	as_root bash -c "$(declare -f log apt_install); apt_install chromium"
fi

# PostgreSQL: the server the JDBC connector tests run (internal/pgtest runs
# initdb and postgres from /usr/lib/postgresql/*/bin in a temp directory; no
# cluster or service of the package is used).
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
	log "postgresql: present ($(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' '))"
else
	log "postgresql: missing; apt-get install postgresql"
	as_root bash -c "$(declare -f log apt_install); apt_install postgresql"
fi

# Test tools built from source into bin/ at pinned versions, each rebuilt
# only when its version changes (scripts/go-install-pinned.sh):
# - MinIO: the S3 server the tiering tests run against (tiering/minio_test.go;
#   about 150 MiB, several minutes on a cold module cache);
# - promtool: checks deploy/prometheus and runs the alert rules' unit tests
#   (e2e/deploy_test.go; a large module graph, minutes on a cold cache);
# - helm: renders and lints deploy/helm/strata (e2e/helm_test.go; 92 s here
#   with its modules not yet downloaded).
"$root/scripts/go-install-pinned.sh" minio github.com/minio/minio github.com/minio/minio v0.0.0-20260212201848-7aac2a2c5b7c
"$root/scripts/go-install-pinned.sh" promtool github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/promtool v0.316.0
"$root/scripts/go-install-pinned.sh" helm helm.sh/helm/v4 helm.sh/helm/v4/cmd/helm v4.3.2

# nfpm: builds the .deb of `make package` (e2e/package_test.go).
"$root/scripts/install-nfpm.sh"
