#!/usr/bin/env bash
# bench-capture.sh: txnscope decide on a pcapng against tshark on the same
# file, as whole processes, alternating (tshark, then each txnscope binary,
# per round) so that a busy shared machine slows them alike. Prints each
# run's wall time, CPU time (user + system) and peak RSS (/usr/bin/time -v)
# and their medians. On a machine shared with other work the wall time
# includes waiting for a CPU; the CPU time does not.
#
#   scripts/bench-capture.sh CAPTURE.pcapng TXNSCOPE_BIN [MORE_BINS...]
#   ROUNDS=7 scripts/bench-capture.sh /tmp/c.pcapng /tmp/old /tmp/new
#   DECIDE_ARGS= scripts/bench-capture.sh ...   # `decide F` (every offset) instead of `decide --counts F`
#
# Make CAPTURE with scripts/gencapture (the broker on 9092, where tshark's
# Kafka dissector looks).
set -euo pipefail
F=$1; shift
ROUNDS=${ROUNDS:-5}
DECIDE_ARGS=${DECIDE_ARGS---counts}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-capture.XXXXXX")
trap 'rm -rf "$T"' EXIT
measure() { # name cmd...
	local name=$1; shift
	/usr/bin/time -v -o "$T/time" "$@" > /dev/null 2>"$T/err" || { cat "$T/err" >&2; exit 1; }
	local wall cpu rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$T/time")
	cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {printf "%.2f", s}' "$T/time")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/time")
	echo "$name $wall $cpu $rss" | tee -a "$T/all"
}
for r in $(seq "$ROUNDS"); do
	measure tshark tshark -r "$F" -Y kafka -T fields -e kafka.offset
	i=0
	for b in "$@"; do
		i=$((i+1))
		# shellcheck disable=SC2086 # DECIDE_ARGS is words
		measure "txnscope$i" "$b" decide $DECIDE_ARGS "$F"
	done
done
median() { # name column
	awk -v n="$1" -v c="$2" '$1==n {print $c}' "$T/all" | sort -g | awk '{a[NR]=$1} END {printf " %s", a[int((NR+1)/2)]}'
}
echo "name, median wall s, median CPU s, median peak RSS KB (of $ROUNDS rounds; capture $(stat -c %s "$F") bytes):"
for name in $(awk '{print $1}' "$T/all" | sort -u); do
	printf "%s" "$name"; median "$name" 2; median "$name" 3; median "$name" 4; echo
done
