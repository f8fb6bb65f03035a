#!/usr/bin/env bash
# bench-scan-batches.sh: the header scan of a 1 GiB single-segment partition
# at 1 KiB, 4 KiB and 64 KiB batches, against `cat` of the same file in the
# same run.
#
#   scripts/bench-scan-batches.sh                 # 1 GiB each, 5 alternating runs
#   RUNS=7 SIZES="1024 65536" scripts/bench-scan-batches.sh
#
# scripts/genlog writes each partition into the system temp dir: one
# segment of 1 GiB of kmsg-encoded batches of the size (transactional
# producers with COMMIT/ABORT markers, an idempotent one) with its
# .index/.timeindex/.txnindex. Then, warm page cache, RUNS rounds, each
# round running every command once in turn (so load changes hit all alike),
# as whole processes timed by /usr/bin/time:
#
#   cat        cat DIR/*.log > /dev/null
#   scan       scripts/scanonly -build=false: loader.OpenPartitionWith(HeaderScanOptions), the header scan
#              (its .index read too), the segment cut at .index entries and walked on all cores,
#              each part writing into its region of one batch slice
#   scan-1cpu  the same with GOMAXPROCS=1: one walk on one core
#
# and prints the medians (wall and CPU) and their ratios to cat's, and
# whether copying out of the page cache scales across the cores (dd of the
# whole file against two dd of its halves at once). The data is deleted at
# the end (KEEP=1 keeps it).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZE=${BENCH_SIZE:-1073741824}
SIZES=${SIZES:-1024 4096 65536}
RUNS=${RUNS:-5}
# WORK=DIR reuses the partitions a KEEP=1 run left there.
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/bench-scan-batches.XXXXXX")}
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
echo "== $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg)"
go build -o "$WORK/scanonly" ./scripts/scanonly

# now is the time in nanoseconds: wall times are taken around the command
# (/usr/bin/time's %e has 10 ms steps, a fifth of a scan).
now() { date +%s%N; }

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

for B in $SIZES; do
	# One segment: segment-bytes above the total, so genlog never rolls.
	[ -d "$WORK/b$B/bench-0" ] || go run ./scripts/genlog -out "$WORK/b$B" -batch-bytes "$B" -segment-bytes 2000000000 -total-bytes "$SIZE" -hanging-from -1 >/dev/null
done

for B in $SIZES; do
	DIR=$WORK/b$B/bench-0
	LOG=$(ls "$DIR"/*.log)
	echo
	echo "== batches of $B bytes: $(stat -c %s "$LOG") bytes, $("$WORK/scanonly" -build=false "$DIR" 2>&1 | tail -1)"
	cat "$LOG" >/dev/null # warm the page cache
	declare -A wall=() cpu=()
	for r in $(seq "$RUNS"); do
		for name in cat scan scan-1cpu; do
			case $name in
			cat) cmd=(cat "$LOG") ;;
			scan) cmd=("$WORK/scanonly" -build=false "$DIR") ;;
			scan-1cpu) cmd=(env GOMAXPROCS=1 "$WORK/scanonly" -build=false "$DIR") ;;
			esac
			t0=$(now)
			/usr/bin/time -f "%U %S" -o "$WORK/time" "${cmd[@]}" >/dev/null 2>&1
			t1=$(now)
			read -r u s <"$WORK/time"
			wall[$name]+="$(echo "($t1 - $t0) / 1000000000" | bc -l | xargs printf '%.4f') "
			cpu[$name]+="$(echo "$u + $s" | bc -l) "
		done
	done
	for name in cat scan scan-1cpu; do
		w=$(echo "${wall[$name]}" | tr ' ' '\n' | grep . | median)
		c=$(echo "${cpu[$name]}" | tr ' ' '\n' | grep . | median)
		wall[m$name]=$w
		cpu[m$name]=$c
		printf '  %-10s median %7.4f s wall %6.3f s cpu   (wall: %s)\n' "$name" "$w" "$c" "${wall[$name]}"
	done
	for name in scan scan-1cpu; do
		printf '  %-10s %.2fx cat wall, %.2fx cat cpu\n' "$name" "$(echo "${wall[m$name]} / ${wall[mcat]}" | bc -l)" "$(echo "${cpu[m$name]} / ${cpu[mcat]}" | bc -l)"
	done
	# Does copying out of the page cache scale across the cores? dd of the
	# whole file against two dd of its halves at once (what a segment cut
	# in two parts reads), medians of RUNS.
	half=$(($(stat -c %s "$LOG") / 2 / 262144 + 1))
	one=() two=()
	for r in $(seq "$RUNS"); do
		t0=$(now)
		dd if="$LOG" of=/dev/null bs=256K status=none
		t1=$(now)
		bash -c "dd if='$LOG' of=/dev/null bs=256K count=$half status=none & dd if='$LOG' of=/dev/null bs=256K skip=$half status=none; wait"
		t2=$(now)
		one+=("$(echo "($t1 - $t0) / 1000000000" | bc -l)")
		two+=("$(echo "($t2 - $t1) / 1000000000" | bc -l)")
	done
	printf '  copy scaling: dd whole %.4f s, two halves at once %.4f s (medians)\n' "$(printf '%s\n' "${one[@]}" | median)" "$(printf '%s\n' "${two[@]}" | median)"
	unset wall cpu
done
echo
echo "== done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
