#!/usr/bin/env bash
# bench-capture.sh: txnscope decide on a pcapng against tshark on the same
# file, as whole processes, alternating (tshark, then each txnscope binary,
# per round) so that a busy shared machine slows them alike. Prints each
# run's wall time and peak RSS (/usr/bin/time -v) and the medians.
#
#   scripts/bench-capture.sh CAPTURE.pcapng TXNSCOPE_BIN [MORE_BINS...]
#   ROUNDS=7 scripts/bench-capture.sh /tmp/c.pcapng /tmp/old /tmp/new
#
# Make CAPTURE with scripts/gencapture (the broker on 9092, where tshark's
# Kafka dissector looks).
set -euo pipefail
F=$1; shift
ROUNDS=${ROUNDS:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-capture.XXXXXX")
trap 'rm -rf "$T"' EXIT
measure() { # name cmd...
	local name=$1; shift
	/usr/bin/time -v -o "$T/time" "$@" > /dev/null 2>"$T/err" || { cat "$T/err" >&2; exit 1; }
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$T/time")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/time")
	echo "$name $wall $rss" | tee -a "$T/all"
}
for r in $(seq "$ROUNDS"); do
	measure tshark tshark -r "$F" -Y kafka -T fields -e kafka.offset
	i=0
	for b in "$@"; do
		i=$((i+1))
		measure "txnscope$i" "$b" decide --counts "$F"
	done
done
echo "median wall s, median peak RSS KB (of $ROUNDS; capture $(stat -c %s "$F") bytes):"
for name in $(awk '{print $1}' "$T/all" | sort -u); do
	awk -v n="$name" '$1==n {print $2}' "$T/all" | sort -g | awk -v n="$name" '{a[NR]=$1} END {printf "%s %s", n, a[int((NR+1)/2)]}'
	awk -v n="$name" '$1==n {print $3}' "$T/all" | sort -g | awk '{a[NR]=$1} END {print " " a[int((NR+1)/2)]}'
done
