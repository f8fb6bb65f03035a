#!/usr/bin/env bash
# bench-full-replay.sh: `diagnose --full-replay` of one 1 GiB segment of
# 1 KiB batches with no producer snapshot (every batch replayed, every CRC
# checked: no recovery point is known), against `cat` of the segment, as
# whole processes in alternating rounds, warm page cache.
#
#   scripts/bench-full-replay.sh                 # 7 rounds, the file just written
#   RUNS=11 EVICT=1 scripts/bench-full-replay.sh # the file evicted and read back first
#
# scripts/genlog writes the partition (transactional producers with
# COMMIT/ABORT markers, an idempotent one, a transaction left open at the
# end); the segment keeps its .index and .timeindex, not its .txnindex, so
# the replay rebuilds every entry. The page cache holds a file just written
# in large folios and one read back after an eviction in small ones, which
# the kernel copies out more slowly: cat's time moves with it, the ratio
# less. Prints each round, the medians, the ratio, the CPU time of each
# (the least wall time txnscope's work can take on these cores) and
# txnscope's peak RSS.
# The data is deleted at the end (KEEP=1 keeps it; WORK=DIR reuses it).
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/bench-full-replay.XXXXXX")}
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
go build -o "$WORK/txnscope" ./cmd/txnscope
DIR=$WORK/log/bench-0
if [ ! -d "$DIR" ]; then
	go run ./scripts/genlog -out "$WORK/log" -total-bytes 1073741824 -segment-bytes 2000000000 -no-snapshots -hanging-from -1 >/dev/null
	rm -f "$DIR"/*.txnindex "$DIR"/*.snapshot
fi
LOG=$(ls "$DIR"/*.log)
if [ "${EVICT:-0}" = 1 ]; then
	dd if="$LOG" iflag=nocache count=0 status=none # drop the file's pages
fi
cat "$LOG" >/dev/null # read it (back) into the page cache

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
secs() { echo "($2 - $1) / 1000000000" | bc -l | xargs printf '%.3f'; }
d=() c=()
for r in $(seq "$RUNS"); do
	t0=$(now)
	"$WORK/txnscope" diagnose --full-replay "$DIR" >/dev/null || [ $? = 3 ] # 3: the open transaction is late
	t1=$(now)
	cat "$LOG" >/dev/null
	t2=$(now)
	d+=("$(secs "$t0" "$t1")") c+=("$(secs "$t1" "$t2")")
	echo "  round $r: diagnose --full-replay ${d[-1]} s, cat ${c[-1]} s"
done
md=$(printf '%s\n' "${d[@]}" | median)
mc=$(printf '%s\n' "${c[@]}" | median)
printf 'medians: diagnose --full-replay %s s, cat %s s: %.2fx cat\n' "$md" "$mc" "$(echo "$md / $mc" | bc -l)"
# CPU time (user + system) and peak RSS, 3 more runs each, medians: the
# CPU spread over every core is the least wall time the work can take
# here, whatever overlaps; cat's is the kernel's copy out of the cache.
u=() k=() m=()
for r in 1 2 3; do
	read -r cpu rss < <( (/usr/bin/time -f '%U %S %M' "$WORK/txnscope" diagnose --full-replay "$DIR" >/dev/null || true) 2>&1 | tail -1 | awk '{print $1 + $2, $3}')
	u+=("$cpu") m+=("$rss")
	k+=("$( (/usr/bin/time -f '%U %S' cat "$LOG" >/dev/null) 2>&1 | awk '{print $1 + $2}')")
done
mu=$(printf '%s\n' "${u[@]}" | median)
mk=$(printf '%s\n' "${k[@]}" | median)
mm=$(printf '%s\n' "${m[@]}" | median)
printf 'CPU: diagnose --full-replay %.2f s (over %d cores at best %.3f s = %.2fx cat), cat %.2f s; peak RSS %d MB\n' \
	"$mu" "$(nproc)" "$(echo "$mu / $(nproc)" | bc -l)" "$(echo "$mu / $(nproc) / $mc" | bc -l)" "$mk" "$((mm / 1000))"
