#!/usr/bin/env bash
# Produce to a plain topic and to an Iceberg topic side by side, in
# separate processes: one `strata server` (log and object store on tmpfs,
# /dev/shm) and `strata perf produce` (franz-go, acks=1, linger 5 ms,
# 1 MiB batches, no compression, 1 KiB records). Each round produces N
# records to a fresh plain topic and N to a fresh iceberg topic (commits
# every INTERVAL ms, compaction off), in alternating order, waits until the
# table holds them all, and deletes both. ICE=false makes the second topic a
# plain one too (the control). Prints each round's records/s and ratio.
#
#   ROUNDS=4 N=2000000 INTERVAL=1000 scripts/iceberg-produce-cost.sh
set -euo pipefail
S=${STRATA:-bin/strata}
[ -x "$S" ] || { echo "build $S first (make build)" >&2; exit 2; }
D=$(mktemp -d /dev/shm/strata-icecost.XXXXXX)
B=${BROKER:-127.0.0.1:19092}
A=${ADMIN:-127.0.0.1:19644}
C=${CATALOG:-127.0.0.1:18181}
N=${N:-1000000}
ICE=${ICE:-true}
INTERVAL=${INTERVAL:-100}
"$S" server --listen "$B" --http-listen "$A" --data-dir "$D/data" --object-store "file://$D/store" \
	--set iceberg.catalog.listen="$C" --set log.retention.check.interval.ms=1000 > "$D/server.log" 2>&1 &
SP=$!
trap 'kill $SP; wait $SP || true; rm -rf "$D"' EXIT
for _ in $(seq 100); do "$S" topic list -b "$B" > /dev/null 2>&1 && break; sleep 0.1; done
create() {
	"$S" topic create "$1" -b "$B" -p 2 -c iceberg.enabled="$2" -c iceberg.commit.interval.ms="$INTERVAL" \
		-c iceberg.compaction.min.input.files=0 -c retention.bytes=1073741824 -c segment.bytes=33554432 > /dev/null
}
produce() {
	GOGC=800 "$S" perf produce --topic "$1" --num-records "$N" --record-size 1024 --throughput -1 \
		--producer-props bootstrap.servers="$B" acks=1 linger.ms=5 batch.size=1048576 compression.type=none 2>&1 |
		grep -oE '[0-9.]+ records/sec' | tail -1 | cut -d' ' -f1
}
# catchup waits until topic $1's table holds all N records, and prints
# how long that took.
catchup() {
	local start end held
	start=$(date +%s.%N)
	for _ in $(seq 3000); do
		[ "$ICE" = true ] || break
		held=$("$S" iceberg status --admin "$A" --json | python3 -c "import json,sys; d=[x for x in json.load(sys.stdin) if x['topic']=='$1']; print(sum(p['table_next_offset'] for p in d[0].get('partitions') or []) if d else -1)")
		[ "$held" = "$N" ] && break
		sleep 0.2
	done
	end=$(date +%s.%N)
	python3 -c "print('%.1f' % ($end - $start))"
}
# Both topics of a round have the same configs but iceberg.enabled, and
# every round deletes them: each writes to fresh tmpfs pages alike. The
# order alternates, so that whatever favours the first or the second
# topic of a round (memory the first one touched, a slow start) cancels;
# the plain topic never runs while the table catches up.
for r in $(seq "${ROUNDS:-3}"); do
	create "plain-$r" false
	create "ice-$r" "$ICE"
	if [ $((r % 2)) = 1 ]; then
		p=$(produce "plain-$r")
		q=$(produce "ice-$r")
		c=$(catchup "ice-$r")
	else
		q=$(produce "ice-$r")
		c=$(catchup "ice-$r")
		p=$(produce "plain-$r")
	fi
	"$S" topic delete "plain-$r" -b "$B" > /dev/null
	"$S" topic delete "ice-$r" -b "$B" > /dev/null
	# A deleted topic's table stays in the bucket: removed here, so that
	# the rounds do not pile gigabytes of Parquet up in memory.
	rm -rf "$D/store/iceberg"
	python3 -c "print('round $r: plain %.0f, ice-$r %.0f records/s, ratio %.3f, catch-up %s s' % ($p, $q, $q/$p, '$c'))"
done
