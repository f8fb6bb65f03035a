#!/usr/bin/env bash
# bench-diagnose.sh: `server diagnose` of a broker-shaped partition against
# `cat` of its segments (warm cache), with and without producer snapshots.
#
#   scripts/bench-diagnose.sh                         # 8 segments of 1 GiB (7.45 GiB), 1 KiB batches
#   BENCH_SIZE=1073741824 BATCH=4096 RUNS=5 FULL_RUNS=1 scripts/bench-diagnose.sh
#
# scripts/genlog writes the partition into the system temp dir: 1 GiB
# segments of 1 KiB kmsg-encoded batches (transactional producers,
# COMMIT/ABORT markers, idempotent batches), .index/.timeindex/.txnindex,
# the producer .snapshot at each roll and a hanging transaction in the last
# two segments. Then, each as a whole process, RUNS rounds of cat,
# diagnose and diagnose-base in turn (FULL_RUNS of the two full replays
# after), the median and quartiles of each:
#
#   cat             cat DIR/*.log > /dev/null
#   diagnose        server diagnose DIR: from the newest snapshot (loader.OpenPartitionTail)
#   diagnose-base   the same with BASE=BINARY, an older build, when given
#   full-replay     server diagnose --full-replay DIR: every segment, as before
#   no-snapshots    server diagnose DIR with the .snapshot files moved away: the fallback
#   decide-from     with DECIDE_FROM=N: server decide --format ndjson --from N DIR,
#                   from the newest snapshot at or below N (in the RUNS rounds)
#   decide-full     the same with --full-replay (FULL_RUNS runs)
#
# with wall time and peak RSS from /usr/bin/time. The data is deleted at
# the end (KEEP=1 keeps it).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZE=${BENCH_SIZE:-8000000000}
BATCH=${BATCH:-1024}
SEGMENT=${SEGMENT:-1073741824}
RUNS=${RUNS:-3}
FULL_RUNS=${FULL_RUNS:-$RUNS} # runs of the two full replays
# WORK=DIR reuses the partition a KEEP=1 run left there.
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/bench-diagnose.XXXXXX")}
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
df -h "$WORK" | tail -1
go build -o "$WORK/server" ./cmd/server
[ -d "$WORK/logdir/bench-0" ] || go run ./scripts/genlog -out "$WORK/logdir" -batch-bytes "$BATCH" -segment-bytes "$SEGMENT" -total-bytes "$SIZE"
DIR=$WORK/logdir/bench-0
LOGS=$(ls "$DIR"/*.log | tr '\n' ' ')
NOW=2027-01-01T00:00:00Z

# once NAME CMD...: one timed run, its wall and CPU time appended to
# TS[NAME] and CS[NAME], its peak RSS kept in RSS[NAME] when larger.
declare -A WALL CPU RSS TS CS Q
once() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/err" || [ $? = 3 ]
	read -r t u s k < <(tail -1 "$WORK/time")
	TS[$name]+="$t "
	CS[$name]+="$(echo "$u + $s" | bc -l) "
	((k / 1024 > ${RSS[$name]:-0})) && RSS[$name]=$((k / 1024))
	return 0
}
# summary NAME: the median wall and CPU time and the wall quartiles of
# NAME's runs.
summary() {
	local name=$1 n
	sorted() { tr ' ' '\n' | grep . | sort -n; }
	n=$(echo "${TS[$name]}" | sorted | wc -l)
	WALL[$name]=$(echo "${TS[$name]}" | sorted | sed -n "$(((n + 1) / 2))p")
	CPU[$name]=$(echo "${CS[$name]}" | sorted | sed -n "$(((n + 1) / 2))p")
	Q[$name]="$(echo "${TS[$name]}" | sorted | sed -n "$((n / 4 + 1))p")-$(echo "${TS[$name]}" | sorted | sed -n "$((3 * n / 4 + 1))p")"
	printf '%-13s %7.2f s wall (quartiles %s) %7.2f s cpu  peak RSS %5d MB   (wall: %s)\n' "$name" "${WALL[$name]}" "${Q[$name]}" "${CPU[$name]}" "${RSS[$name]}" "${TS[$name]}"
}
cat $LOGS >/dev/null # warm the page cache
# RUNS rounds, each running cat, the seeded diagnose and BASE's in turn, so
# that what else the VM does (its page faults come and go) hits all alike.
for _ in $(seq "$RUNS"); do
	once cat cat $LOGS
	once diagnose "$WORK/server" diagnose --now $NOW "$DIR"
	# BASE=BINARY times an older build's seeded diagnose in the same run.
	[ -z "${BASE:-}" ] || once diagnose-base "$BASE" diagnose --now $NOW "$DIR"
	[ -z "${DECIDE_FROM:-}" ] || once decide-from "$WORK/server" decide --format ndjson --from "$DECIDE_FROM" "$DIR"
done
for _ in $(seq "$FULL_RUNS"); do
	once full-replay "$WORK/server" diagnose --now $NOW --full-replay "$DIR"
	[ -z "${DECIDE_FROM:-}" ] || once decide-full "$WORK/server" decide --format ndjson --from "$DECIDE_FROM" --full-replay "$DIR"
done
mkdir -p "$WORK/snapshots" && mv "$DIR"/*.snapshot "$WORK/snapshots/"
for _ in $(seq "$FULL_RUNS"); do
	once no-snapshots "$WORK/server" diagnose --now $NOW "$DIR"
done
mv "$WORK/snapshots/"*.snapshot "$DIR/"
DECIDE=${DECIDE_FROM:+decide-from decide-full}
for n in cat diagnose ${BASE:+diagnose-base} full-replay no-snapshots $DECIDE; do
	summary "$n"
done
"$WORK/server" diagnose --now $NOW "$DIR" | sed -n 2,4p || true
for n in diagnose ${BASE:+diagnose-base} full-replay no-snapshots $DECIDE; do
	printf '%-13s %.2fx cat (wall), %.2fx cat (cpu)\n' "$n" "$(echo "${WALL[$n]} / ${WALL[cat]}" | bc -l)" "$(echo "${CPU[$n]} / ${CPU[cat]}" | bc -l)"
done
echo "== done $(date -u +%FT%TZ), load $(cut -d" " -f1-3 /proc/loadavg)"
