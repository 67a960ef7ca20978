#!/usr/bin/env bash
# perf-compare.sh: one run, on this machine, side by side:
#   dd        sequential write of the disk under the data directories (fdatasync)
#   strata    `strata perf produce` / `strata perf consume` against bin/strata server
#   raw       `strata perf baseline` (disk write, page-cache read, loopback TCP)
#             and `strata perf raw-produce` / `raw-fetch` against a fresh server
#   jetstream `nats bench js pub async` (file storage) / `nats bench js ordered`
#   omb       `strata perf omb` on one node: the 50 MB/s workload, the
#             unthrottled max-rate one with acks=1, then half of the highest
#             rate the consumers kept up with
#   omb3      `strata perf omb` on three `strata server` processes, RF=3,
#             acks=all, min.insync.replicas=2: 20 MB/s, then unthrottled
# then a table of MiB/s and the ratios strata/dd, strata/JetStream,
# raw produce/disk write, raw fetch/page-cache read, raw fetch/loopback TCP,
# and the OMB figures with three nodes' throughput / one node's.
#
# Run with `make perf`. Knobs (environment):
#   RECORDS=2000000      messages produced and consumed, by strata and by JetStream
#   RECORD_SIZE=1024     bytes per message
#   PARTITIONS=1         partitions of the strata topic (JetStream: one stream)
#   DD_MB=2048           size of the dd write, MiB
#   PERF_DIR=/var/tmp    where the scratch directory goes (keep it on a real disk, not tmpfs)
#   PERF_PARTS="dd strata raw jetstream omb omb3"   which parts to run
#   OMB_WARMUP=15s OMB_DURATION=45s   phases of each OMB workload
#   OMB_TOPIC_CONFIGS="retention.bytes=134217728 segment.bytes=67108864 file.delete.delay.ms=1000"
#                        configs of the OMB topics: bound what an unthrottled run leaves on disk
#                        (retention.bytes is per partition, as in Kafka: 16 x (128 + 64) MiB is
#                        about 3 GiB per node, 9 GiB for the three nodes of omb3)
#   RAW_DURATION=10s     length of raw-fetch, of the sustained raw-produce run (the first one
#                        writes DD_MB like the baseline) and of each timed baseline figure
#   RAW_CONNECTIONS=4 RAW_IN_FLIGHT=8 RAW_PARTITIONS=4 RAW_RECORDS_PER_BATCH=256
#                        (256 records of 1 KiB per partition: 1 MiB per request, dd's block;
#                        16-record batches measure the per-request cost instead, below)
#                        (the broker serves one request of a connection at a time, as
#                        Kafka does: two connections left 13-26% of the two cores idle)
#   PRODUCER_PROPS="acks=1 linger.ms=5 batch.size=1048576"
#   SERVER_SETS=""       extra flags of every strata server started, e.g.
#                        "--set replica.fetch.wait.max.ms=100" (word-split)
#   CLIENT_GOGC=800      GOGC of every load generator, strata's and NATS's alike
#                        (`strata perf` defaults to 800 itself; `nats bench` gets it
#                        here so both sides' clients collect garbage equally seldom);
#                        the servers run with Go's default
#
# The script kills only the processes it started (by PID) and removes its
# scratch directory on exit.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export GOTOOLCHAIN=local

RECORDS="${RECORDS:-2000000}"
RECORD_SIZE="${RECORD_SIZE:-1024}"
PARTITIONS="${PARTITIONS:-1}"
DD_MB="${DD_MB:-2048}"
PERF_DIR="${PERF_DIR:-/var/tmp}"
PERF_PARTS="${PERF_PARTS:-dd strata raw jetstream omb omb3}"
OMB_WARMUP="${OMB_WARMUP:-15s}"
OMB_DURATION="${OMB_DURATION:-45s}"
OMB_TOPIC_CONFIGS="${OMB_TOPIC_CONFIGS:-retention.bytes=134217728 segment.bytes=67108864 file.delete.delay.ms=1000}"
RAW_DURATION="${RAW_DURATION:-10s}"
RAW_CONNECTIONS="${RAW_CONNECTIONS:-4}"
RAW_IN_FLIGHT="${RAW_IN_FLIGHT:-8}"
RAW_PARTITIONS="${RAW_PARTITIONS:-4}"
RAW_RECORDS_PER_BATCH="${RAW_RECORDS_PER_BATCH:-256}"
PRODUCER_PROPS="${PRODUCER_PROPS:-acks=1 linger.ms=5 batch.size=1048576}"
CLIENT_GOGC="${CLIENT_GOGC:-800}"
NATS_SERVER_VERSION="v2.15.2"
NATSCLI_VERSION="v0.5.0"

bin="$root/bin"
log() { printf 'perf: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
wants() { [[ " $PERF_PARTS " == *" $1 "* ]]; }

mkdir -p "$PERF_DIR"
work="$(mktemp -d "$PERF_DIR/strata-perf.XXXXXX")"
pids=()

cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port prints a loopback port nothing is listening on and that it has
# not handed out before (a cluster takes several before any is bound). It
# runs in a subshell ($(free_port)), so the ports handed out are kept in a
# file. Ports come from below the kernel's ephemeral range: a port in it
# may be the local end of one of the load generators' hundreds of
# connections by the time a server binds it (a run failed so, 2026-12-05).
free_port() {
	local port lo=32768 span
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	span=$((lo - 10000))
	((span >= 1000)) || die "the ephemeral port range starts at $lo: no room below it for the servers' ports"
	for _ in $(seq 100); do
		port=$((10000 + RANDOM % span))
		if grep -qx "$port" "$work/ports" 2>/dev/null; then continue; fi
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port" >>"$work/ports"
			echo "$port"
			return
		fi
	done
	die "no free port found"
}

# wait_port PORT PID NAME: until PORT accepts connections, at most 30 s.
wait_port() {
	local port="$1" pid="$2" name="$3"
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || die "$name exited during startup (log: $work/$name.log): $(tail -5 "$work/$name.log")"
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return; fi
		sleep 0.1
	done
	die "$name not listening on $port after 30s"
}

# discard PATH...: removes a finished part's data and waits until the
# filesystem has written back what is dirty (sync), so the next part does
# not pay for this one's writeback or block frees: without it an 8 GB raw
# run left the 50 MB/s OMB workload after it at publish p99 104 ms instead
# of 3.5.
discard() {
	rm -rf "$@"
	sync
}

# stop_pid PID: SIGTERM, wait up to 15 s, then SIGKILL.
stop_pid() {
	local pid="$1"
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# build_strata: bin/strata, if it is missing.
build_strata() {
	if [ ! -x "$bin/strata" ]; then
		log "building bin/strata"
		go build -o "$bin/strata" ./cmd/strata
	fi
}

# start_strata: bin/strata server (built if missing) on free loopback
# ports with a fresh data directory; sets addr and strata_pid.
start_strata() {
	build_strata
	local port http_port
	port="$(free_port)"
	http_port="$(free_port)"
	addr="127.0.0.1:$port"
	rm -rf "$work/strata"
	log "strata: server on $addr, data in $work/strata"
	"$bin/strata" server --listen "$addr" --http-listen "127.0.0.1:$http_port" --data-dir "$work/strata" \
		--log-level warn --set log.retention.check.interval.ms=5000 ${SERVER_SETS:-} >"$work/strata.log" 2>&1 &
	strata_pid=$!
	pids+=("$strata_pid")
	wait_port "$port" "$strata_pid" strata
}

# start_cluster: three bin/strata server processes, every one a voter and a
# broker, on free loopback ports with fresh data directories; sets addr (all
# three) and cluster_pids, and returns once an RF=3 topic can be created.
start_cluster() {
	build_strata
	local i voters="" port cport hport
	local -a ports=()
	cluster_pids=()
	declare -gA cport_of=()
	for i in 1 2 3; do
		cport="$(free_port)"
		cport_of[$i]="$cport"
		voters+="${voters:+,}$i@127.0.0.1:$cport"
	done
	for i in 1 2 3; do
		port="$(free_port)"
		hport="$(free_port)"
		ports+=("$port")
		rm -rf "$work/node$i"
		"$bin/strata" server --node-id "$i" --data-dir "$work/node$i" --listen "127.0.0.1:$port" \
			--http-listen "127.0.0.1:$hport" --controllers "$voters" --controller-listen "127.0.0.1:${cport_of[$i]}" \
			--log-level warn --set log.retention.check.interval.ms=5000 ${SERVER_SETS:-} >"$work/node$i.log" 2>&1 &
		cluster_pids+=($!)
		pids+=($!)
	done
	addr=""
	for i in 0 1 2; do
		wait_port "${ports[$i]}" "${cluster_pids[$i]}" "node$((i + 1))"
		addr+="${addr:+,}127.0.0.1:${ports[$i]}"
	done
	log "cluster: brokers $addr, controllers $voters, data in $work/node{1,2,3}"
	for _ in $(seq 300); do
		if "$bin/strata" topic create perf-probe -r 3 -p 1 -b "$addr" >/dev/null 2>&1; then
			"$bin/strata" topic delete perf-probe -b "$addr" >/dev/null 2>&1 || true
			return
		fi
		sleep 0.1
	done
	die "the three nodes did not accept an RF=3 topic within 30s: $(tail -3 "$work/node1.log")"
}

# cpu_seconds PID...: user + system CPU the processes have used, in seconds.
cpu_seconds() {
	local pid ticks=0 stat
	local -a f
	for pid in "$@"; do
		stat="$(cat "/proc/$pid/stat")" || die "process $pid is gone"
		stat="${stat##*) }" # fields after the command name; utime and stime are the 12th and 13th
		read -r -a f <<<"$stat"
		ticks=$((ticks + f[11] + f[12]))
	done
	awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

# omb_run NAME WORKLOAD [FLAG...]: strata perf omb against addr, with the
# OMB topic configs; its result JSON goes to $work/omb-NAME.json, and the
# CPU seconds the servers (server_pids) and the client used per GiB
# published over the whole run (warm-up included) to $work/omb-NAME.cpu.
omb_run() {
	local name="$1" workload="$2" c srv0 srv1 cli published
	shift 2
	local -a cflags=()
	for c in $OMB_TOPIC_CONFIGS; do cflags+=(-c "$c"); done
	log "strata perf omb ($name): $workload $*"
	srv0="$(cpu_seconds "${server_pids[@]}")"
	local TIMEFORMAT='%3U %3S'
	{ time GOGC="$CLIENT_GOGC" "$bin/strata" perf omb "$workload" --bootstrap-server "$addr" --warmup-duration "$OMB_WARMUP" \
		--test-duration "$OMB_DURATION" --output "$work/omb-$name.json" --topic-prefix "omb-$name" "${cflags[@]}" "$@" \
		>"$work/omb-$name.log" 2>&1 || die "strata perf omb ($name) failed: $(tail -5 "$work/omb-$name.log")"; } 2>"$work/omb-$name.time"
	srv1="$(cpu_seconds "${server_pids[@]}")"
	cli="$(awk '{ print $1 + $2 }' "$work/omb-$name.time")"
	published="$(sed -nE 's/^----- Run totals: ([0-9]+) messages published.*/\1/p' "$work/omb-$name.log")"
	awk -v a="$srv0" -v b="$srv1" -v c="$cli" -v n="${published:-0}" \
		-v size="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["messageSize"])' "$work/omb-$name.json")" \
		'BEGIN { g = n * size / 1073741824; if (g > 0) printf "%.2f %.2f\n", (b - a) / g, c / g; else print "n/a n/a" }' >"$work/omb-$name.cpu"
	grep -E '^----- Aggregated|^Aggregated' "$work/omb-$name.log" >&2 || true
}

# omb_figures NAME: "pubMiB consMiB pubMsgs consMsgs p99 p999 e2eP99" from
# the result JSON: rates averaged over the test phase's periods, latencies
# aggregated over the test phase (ms).
omb_figures() {
	python3 - "$work/omb-$1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
pub, cons, size = mean(r["publishRate"]), mean(r["consumeRate"]), r["messageSize"]
print("%.1f %.1f %.0f %.0f %.1f %.1f %.1f" % (pub * size / 1048576, cons * size / 1048576, pub, cons,
      r["aggregatedPublishLatency99pct"], r["aggregatedPublishLatency999pct"], r["aggregatedEndToEndLatency99pct"]))
PY
}

# mib_per_sec BYTES SECONDS
mib_per_sec() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", b / s / 1048576; else print "n/a" }'; }
# msgs_to_mib MSGS_PER_SEC SIZE
msgs_to_mib() { awk -v m="$1" -v z="$2" 'BEGIN { printf "%.1f", m * z / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "n/a" }'; }

dd_mib="n/a"
strata_produce_mib="n/a"; strata_produce_msgs="n/a"
strata_consume_mib="n/a"; strata_consume_msgs="n/a"; strata_consume_how="strata perf consume"
js_pub_mib="n/a"; js_pub_msgs="n/a"
js_consume_mib="n/a"; js_consume_msgs="n/a"
base_write_mib="n/a"; base_read_mib="n/a"; base_tcp_mib="n/a"
raw_produce_mib="n/a"; raw_produce_msgs="n/a"; raw_fetch_mib="n/a"
raw_sustained_mib="n/a"; raw_sustained_gib="n/a"; raw_small_mib="n/a"
omb_rows=()
omb1_max_mib="n/a"; omb3_max_mib="n/a"

log "scratch directory $work ($(df -h --output=source,fstype,avail "$work" | tail -1 | tr -s ' '))"
# An unthrottled OMB run writes until retention.bytes holds it: refuse to
# start rather than fill the disk (the three-node run needs about 9 GiB).
avail_kib="$(df -k --output=avail "$work" | tail -1 | tr -d ' ')"
if wants omb3 && [ "$avail_kib" -lt $((12 * 1024 * 1024)) ]; then
	die "$work has $((avail_kib / 1024)) MiB free; the three-node OMB runs need about 12 GiB (PERF_DIR=elsewhere, or PERF_PARTS without omb3)"
fi

# --- dd -------------------------------------------------------------------
if wants dd; then
	log "dd: writing ${DD_MB} MiB with conv=fdatasync"
	out="$(dd if=/dev/zero of="$work/dd.tmp" bs=1M count="$DD_MB" conv=fdatasync 2>&1)"
	rm -f "$work/dd.tmp"
	echo "$out" | tail -1 >&2
	# "2147483648 bytes (2.1 GB, 2.0 GiB) copied, 4.2 s, 511 MB/s"
	bytes="$(echo "$out" | tail -1 | awk '{print $1}')"
	secs="$(echo "$out" | tail -1 | sed -nE 's/.*copied, ([0-9.]+) s.*/\1/p')"
	dd_mib="$(mib_per_sec "$bytes" "$secs")"
fi

# --- strata ---------------------------------------------------------------
if wants strata; then
	start_strata
	"$bin/strata" topic create perf --partitions "$PARTITIONS" -b "$addr" >&2
	log "strata perf produce: $RECORDS x $RECORD_SIZE B, producer props: $PRODUCER_PROPS"
	# shellcheck disable=SC2086 # PRODUCER_PROPS is a list of key=value words
	out="$(GOGC="$CLIENT_GOGC" "$bin/strata" perf produce -b "$addr" --topic perf --num-records "$RECORDS" --record-size "$RECORD_SIZE" \
		--throughput -1 --producer-props $PRODUCER_PROPS)" || die "strata perf produce failed: $out"
	echo "$out" | tail -1 >&2
	# kafka-producer-perf-test: "N records sent, R records/sec (M MB/sec), ..."
	line="$(echo "$out" | grep 'records sent' | tail -1)"
	strata_produce_msgs="$(echo "$line" | sed -nE 's/.* ([0-9.]+) records\/sec.*/\1/p')"
	strata_produce_mib="$(echo "$line" | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')"

	log "strata perf consume: $RECORDS messages"
	if out="$(GOGC="$CLIENT_GOGC" "$bin/strata" perf consume -b "$addr" --topic perf --messages "$RECORDS" 2>&1)"; then
		echo "$out" >&2
		# kafka-consumer-perf-test: a header line naming the columns, then one CSV line.
		read -r strata_consume_mib strata_consume_msgs < <(echo "$out" | awk -F', *' '
			/MB\.sec/ { for (i = 1; i <= NF; i++) col[$i] = i; getline; print $col["MB.sec"], $col["nMsg.sec"]; exit }') || true
	else
		# perf consume is a consumer-group member; without group support in
		# the broker, time a group-less `strata consume` of the same records.
		log "strata perf consume failed ($(echo "$out" | tail -1)); timing strata consume --from-beginning instead"
		strata_consume_how="strata consume, no group, timed"
		start="$(date +%s.%N)"
		"$bin/strata" consume perf -b "$addr" --from-beginning -n "$RECORDS" -f '%o\n' >"$work/consume.out" ||
			die "strata consume failed"
		end="$(date +%s.%N)"
		got="$(wc -l <"$work/consume.out")"
		[ "$got" -eq "$RECORDS" ] || die "strata consume printed $got records, want $RECORDS"
		secs="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
		strata_consume_mib="$(mib_per_sec "$((RECORDS * RECORD_SIZE))" "$secs")"
		strata_consume_msgs="$(awk -v n="$RECORDS" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')"
	fi
	stop_pid "$strata_pid"
	discard "$work/strata"
fi

# --- raw: the broker against the machine's limits -------------------------
if wants raw; then
	build_strata
	log "strata perf baseline: ${DD_MB} MiB in $work, $RAW_DURATION per timed figure"
	out="$("$bin/strata" perf baseline --dir "$work" --size "${DD_MB}MiB" --duration "$RAW_DURATION")" ||
		die "strata perf baseline failed: $out"
	echo "$out" >&2
	# "baseline disk write (fdatasync): B bytes in S s, X MB/sec"
	base_write_mib="$(echo "$out" | sed -nE 's/^baseline disk write.* ([0-9.]+) MB\/sec$/\1/p')"
	base_read_mib="$(echo "$out" | sed -nE 's/^baseline page cache read.* ([0-9.]+) MB\/sec$/\1/p')"
	base_tcp_mib="$(echo "$out" | sed -nE 's/^baseline loopback TCP.* ([0-9.]+) MB\/sec$/\1/p')"

	start_strata
	raw_flags=(-b "$addr" --topic raw --connections "$RAW_CONNECTIONS" --in-flight "$RAW_IN_FLIGHT" --duration "$RAW_DURATION")
	log "strata perf raw-produce: acks=1, $RECORD_SIZE B records, uncompressed, $RAW_PARTITIONS partitions, ${RAW_CONNECTIONS}x$RAW_IN_FLIGHT in flight"
	produce_flags=(--partitions "$RAW_PARTITIONS" --acks 1 --compression none --record-size "$RECORD_SIZE" --records-per-batch "$RAW_RECORDS_PER_BATCH")
	# Like for like with the baseline's write: the same ${DD_MB} MiB (--duration only bounds it).
	out="$(GOGC="$CLIENT_GOGC" "$bin/strata" perf raw-produce "${raw_flags[@]}" "${produce_flags[@]}" \
		--bytes "${DD_MB}MiB" --duration 300s 2>&1)" || die "strata perf raw-produce failed: $out"
	echo "$out" >&2
	# "raw-produce total: N records, R records/sec (M MB/sec), ..."
	line="$(echo "$out" | grep '^raw-produce total:')"
	raw_produce_msgs="$(echo "$line" | sed -nE 's/.* ([0-9.]+) records\/sec.*/\1/p')"
	raw_produce_mib="$(echo "$line" | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')"
	log "strata perf raw-produce, small batches: the same ${DD_MB} MiB in batches of 16 records"
	out="$(GOGC="$CLIENT_GOGC" "$bin/strata" perf raw-produce "${raw_flags[@]}" "${produce_flags[@]}" --records-per-batch 16 \
		--topic raw-small --bytes "${DD_MB}MiB" --duration 300s 2>&1)" || die "strata perf raw-produce failed: $out"
	echo "$out" >&2
	raw_small_mib="$(echo "$out" | grep '^raw-produce total:' | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')"
	log "strata perf raw-produce, sustained: the same for $RAW_DURATION"
	out="$(GOGC="$CLIENT_GOGC" "$bin/strata" perf raw-produce "${raw_flags[@]}" "${produce_flags[@]}" 2>&1)" ||
		die "strata perf raw-produce failed: $out"
	echo "$out" >&2
	line="$(echo "$out" | grep '^raw-produce total:')"
	raw_sustained_mib="$(echo "$line" | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')"
	raw_sustained_gib="$(echo "$line" | sed -nE 's/^raw-produce total: ([0-9]+) records.*/\1/p' | awk -v z="$RECORD_SIZE" '{ printf "%.1f", $1 * z / 1073741824 }')"

	log "strata perf raw-fetch: the records raw-produce wrote, from the page cache"
	out="$(GOGC="$CLIENT_GOGC" "$bin/strata" perf raw-fetch "${raw_flags[@]}" 2>&1)" || die "strata perf raw-fetch failed: $out"
	echo "$out" >&2
	raw_fetch_mib="$(echo "$out" | grep '^raw-fetch total:' | sed -nE 's/.*\(([0-9.]+) MB\/sec\).*/\1/p')"
	stop_pid "$strata_pid"
	discard "$work/strata"
fi

# --- NATS JetStream -------------------------------------------------------
if wants jetstream; then
	if [ ! -x "$bin/nats-server" ]; then
		log "building nats-server $NATS_SERVER_VERSION into bin/ (takes a few minutes)"
		GOBIN="$bin" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
	fi
	if [ ! -x "$bin/nats" ]; then
		log "building nats CLI $NATSCLI_VERSION into bin/ (takes a few minutes)"
		GOBIN="$bin" go install "github.com/nats-io/natscli/nats@$NATSCLI_VERSION"
	fi
	port="$(free_port)"
	url="nats://127.0.0.1:$port"
	log "jetstream: nats-server on $url, store in $work/nats"
	"$bin/nats-server" -js -sd "$work/nats" -a 127.0.0.1 -p "$port" >"$work/nats-server.log" 2>&1 &
	nats_pid=$!
	pids+=("$nats_pid")
	wait_port "$port" "$nats_pid" nats-server

	max_bytes=$((RECORDS * (RECORD_SIZE + 256) + (64 << 20)))
	log "nats bench js pub async: $RECORDS x $RECORD_SIZE B, file storage"
	out="$(GOGC="$CLIENT_GOGC" "$bin/nats" -s "$url" bench js pub async perf.bench --msgs "$RECORDS" --size "${RECORD_SIZE}B" \
		--create --storage file --replicas 1 --maxbytes "$max_bytes" --purge --batch 500 --no-progress 2>&1)" ||
		die "nats bench js pub failed: $out"
	echo "$out" | grep 'stats:' >&2 || true
	# "NATS JetStream asynchronous publisher stats: 46,743 msgs/sec ~ 46 MiB/sec ~ ..."
	js_pub_msgs="$(echo "$out" | sed -nE 's/.*publisher stats: ([0-9,.]+) msgs\/sec.*/\1/p' | tr -d ,)"
	[ -n "$js_pub_msgs" ] && js_pub_mib="$(msgs_to_mib "$js_pub_msgs" "$RECORD_SIZE")"

	log "nats bench js ordered: $RECORDS messages"
	out="$(GOGC="$CLIENT_GOGC" "$bin/nats" -s "$url" bench js ordered --msgs "$RECORDS" --size "${RECORD_SIZE}B" --no-progress 2>&1)" ||
		die "nats bench js ordered failed: $out"
	echo "$out" | grep 'stats:' >&2 || true
	js_consume_msgs="$(echo "$out" | sed -nE 's/.*consumer stats: ([0-9,.]+) msgs\/sec.*/\1/p' | tr -d ,)"
	[ -n "$js_consume_msgs" ] && js_consume_mib="$(msgs_to_mib "$js_consume_msgs" "$RECORD_SIZE")"
	stop_pid "$nats_pid"
fi

# --- OpenMessaging Benchmark workloads --------------------------------------
# omb_row LABEL NAME TARGET: a summary row of the run NAME.
omb_row() {
	local f
	local -a cpu
	read -r -a f < <(omb_figures "$2")
	read -r -a cpu <"$work/omb-$2.cpu"
	omb_rows+=("$(printf '%-44s %8s %8s %9s %9s %9s %9s %9s  %s' "$1" "${f[0]}" "${f[1]}" "${f[4]}" "${f[5]}" "${f[6]}" "${cpu[0]}" "${cpu[1]}" "$3")")
	omb_last=("${f[@]}")
}
if wants omb; then
	start_strata
	server_pids=("$strata_pid")
	omb_run 50mb deploy/perf/1-topic-16-partitions-1kb-50mb.yaml
	omb_row "1 node, 50 MB/s, acks=all" 50mb "target: pub p99 <= 5, e2e p99 <= 10"
	omb_run max deploy/perf/1-topic-16-partitions-1kb-max-rate.yaml --acks 1
	omb_row "1 node, unthrottled, acks=1" max "-"
	omb1_max_mib="${omb_last[0]}"
	# OMB's maximum rate is the highest the consumers keep up with: run at
	# half of what they consumed unthrottled.
	half=$(awk -v c="${omb_last[3]}" 'BEGIN { printf "%d", c / 2 }')
	sed -E "s/^producerRate: .*/producerRate: $half/; s/^name: .*/name: 1 topic \/ 16 partitions \/ 1kb \/ half of the max rate/" \
		deploy/perf/1-topic-16-partitions-1kb-max-rate.yaml >"$work/half-max.yaml"
	omb_run half "$work/half-max.yaml"
	omb_row "1 node, half the max consume rate ($half msg/s)" half "target: pub p99 <= 20"
	stop_pid "$strata_pid"
	discard "$work/strata"
fi
if wants omb3; then
	start_cluster
	server_pids=("${cluster_pids[@]}")
	omb_run 3n20mb deploy/perf/1-topic-16-partitions-1kb-20mb.yaml --replication-factor 3 -c min.insync.replicas=2
	omb_row "3 nodes RF=3 acks=all, 20 MB/s" 3n20mb "target: pub p99 <= 15"
	omb_run 3nmax deploy/perf/1-topic-16-partitions-1kb-max-rate.yaml --replication-factor 3 -c min.insync.replicas=2
	omb_row "3 nodes RF=3 acks=all, unthrottled" 3nmax "-"
	omb3_max_mib="${omb_last[0]}"
	for pid in "${cluster_pids[@]}"; do stop_pid "$pid"; done
	discard "$work"/node?
fi

# --- summary --------------------------------------------------------------
num() { awk -v x="$1" -v f="$2" 'BEGIN { if (x ~ /^[0-9.]+$/) printf f, x; else print x }'; }
for v in dd_mib strata_produce_mib strata_consume_mib js_pub_mib js_consume_mib \
	base_write_mib base_read_mib base_tcp_mib raw_produce_mib raw_small_mib raw_sustained_mib raw_fetch_mib; do printf -v "$v" '%s' "$(num "${!v}" %.1f)"; done
for v in strata_produce_msgs strata_consume_msgs js_pub_msgs js_consume_msgs raw_produce_msgs; do printf -v "$v" '%s' "$(num "${!v}" %.0f)"; done
cat <<EOF

Strata vs disk vs NATS JetStream on $(hostname) ($(nproc) cores), $(date -u +%Y-%m-%dT%H:%MZ)
$RECORDS messages x $RECORD_SIZE B; strata topic with $PARTITIONS partition(s), producer props: $PRODUCER_PROPS
JetStream: one file-storage stream, R1, async publish (batch 500), ordered ephemeral consumer
MiB/s = 2^20 bytes of message payload per second (dd, baseline: bytes moved; raw-fetch: whole responses)
raw: ${RAW_CONNECTIONS} connections x $RAW_IN_FLIGHT in flight, $RAW_PARTITIONS partitions, $RAW_RECORDS_PER_BATCH records per batch;
raw-produce writes ${DD_MB} MiB as the baseline does, again in batches of 16 records, then for $RAW_DURATION; raw-fetch runs $RAW_DURATION

$(printf '%-36s %12s %14s' "measurement" "MiB/s" "msgs/s")
$(printf '%-36s %12s %14s' "disk: dd ${DD_MB} MiB, fdatasync" "$dd_mib" "-")
$(printf '%-36s %12s %14s' "strata perf produce" "$strata_produce_mib" "$strata_produce_msgs")
$(printf '%-36s %12s %14s' "$strata_consume_how" "$strata_consume_mib" "$strata_consume_msgs")
$(printf '%-36s %12s %14s' "JetStream pub async (file)" "$js_pub_mib" "$js_pub_msgs")
$(printf '%-36s %12s %14s' "JetStream ordered consume" "$js_consume_mib" "$js_consume_msgs")
$(printf '%-36s %12s %14s' "baseline: disk write, fdatasync" "$base_write_mib" "-")
$(printf '%-36s %12s %14s' "baseline: page-cache read" "$base_read_mib" "-")
$(printf '%-36s %12s %14s' "baseline: loopback TCP" "$base_tcp_mib" "-")
$(printf '%-36s %12s %14s' "strata perf raw-produce (acks=1)" "$raw_produce_mib" "$raw_produce_msgs")
$(printf '%-36s %12s %14s' "  in batches of 16 records" "$raw_small_mib" "-")
$(printf '%-36s %12s %14s' "  the same for $RAW_DURATION (${raw_sustained_gib} GiB)" "$raw_sustained_mib" "-")
$(printf '%-36s %12s %14s' "strata perf raw-fetch (cached)" "$raw_fetch_mib" "-")

$(printf '%-36s %12s' "strata produce / dd" "$(ratio "$strata_produce_mib" "$dd_mib")")
$(printf '%-36s %12s' "strata produce / JetStream pub" "$(ratio "$strata_produce_mib" "$js_pub_mib")")
$(printf '%-36s %12s' "strata consume / JetStream consume" "$(ratio "$strata_consume_mib" "$js_consume_mib")")
$(printf '%-36s %12s' "raw produce / disk write (${DD_MB} MiB each)" "$(ratio "$raw_produce_mib" "$base_write_mib")")
$(printf '%-36s %12s' "raw fetch / page-cache read" "$(ratio "$raw_fetch_mib" "$base_read_mib")")
$(printf '%-36s %12s' "raw fetch / loopback TCP" "$(ratio "$raw_fetch_mib" "$base_tcp_mib")")
EOF
if ((${#omb_rows[@]} > 0)); then
	cat <<EOF

OpenMessaging Benchmark workloads (strata perf omb, warm-up $OMB_WARMUP, test $OMB_DURATION, 16 partitions,
1 KiB random payloads, uncompressed, linger.ms=1; topic configs: $OMB_TOPIC_CONFIGS)
MB/s as OMB prints it (2^20 bytes of payload per second); latencies in ms; CPU seconds per GiB
published (warm-up included) of the server processes (all three for 3 nodes) and of the client

$(printf '%-44s %8s %8s %9s %9s %9s %9s %9s' "workload" "pub MB/s" "con MB/s" "pub p99" "pub p99.9" "e2e p99" "srv s/GiB" "cli s/GiB")
$(printf '%s\n' "${omb_rows[@]}")

$(printf '%-44s %8s  %s' "3 nodes unthrottled / 1 node unthrottled" "$(ratio "$omb3_max_mib" "$omb1_max_mib")" "target: >= 0.6")
EOF
fi
