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
# two segments. Then, each as a whole process, median of RUNS:
#
#   cat             cat DIR/*.log > /dev/null
#   diagnose        server diagnose DIR: from the newest snapshot (loader.OpenPartitionTail)
#   diagnose-base   the same with BASE=BINARY, an older build, when given
#   full-replay     server diagnose --full-replay DIR: every segment, as before
#   no-snapshots    server diagnose DIR with the .snapshot files moved away: the fallback
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

# run NAME CMD...: RUNS timed runs; prints the median wall time and the
# largest peak RSS.
declare -A WALL CPU RSS
run() {
	local name=$1
	shift
	local ts=() cs=() m=0 runs=$RUNS
	case $name in full-replay | no-snapshots) runs=$FULL_RUNS ;; esac
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" >/dev/null 2>"$WORK/err" || [ $? = 3 ]
		read -r t u s k < <(tail -1 "$WORK/time")
		ts+=("$t")
		cs+=("$(echo "$u + $s" | bc -l)")
		((k > m)) && m=$k
	done
	WALL[$name]=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
	CPU[$name]=$(printf '%s\n' "${cs[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
	RSS[$name]=$((m / 1024))
	printf '%-13s %7.2f s wall %7.2f s cpu  peak RSS %5d MB   (wall: %s)\n' "$name" "${WALL[$name]}" "${CPU[$name]}" "${RSS[$name]}" "${ts[*]}"
}
cat $LOGS >/dev/null # warm the page cache
run cat cat $LOGS
run diagnose "$WORK/server" diagnose --now $NOW "$DIR"
# BASE=BINARY times an older build's seeded diagnose in the same run.
[ -z "${BASE:-}" ] || run diagnose-base "$BASE" diagnose --now $NOW "$DIR"
run full-replay "$WORK/server" diagnose --now $NOW --full-replay "$DIR"
mkdir -p "$WORK/snapshots" && mv "$DIR"/*.snapshot "$WORK/snapshots/"
run no-snapshots "$WORK/server" diagnose --now $NOW "$DIR"
mv "$WORK/snapshots/"*.snapshot "$DIR/"
"$WORK/server" diagnose --now $NOW "$DIR" | sed -n 2,4p || true
for n in diagnose ${BASE:+diagnose-base} full-replay no-snapshots; do
	printf '%-13s %.2fx cat (wall), %.2fx cat (cpu)\n' "$n" "$(echo "${WALL[$n]} / ${WALL[cat]}" | bc -l)" "$(echo "${CPU[$n]} / ${CPU[cat]}" | bc -l)"
done
echo "== done $(date -u +%FT%TZ), load $(cut -d" " -f1-3 /proc/loadavg)"
