#!/usr/bin/env bash
# bench-scan.sh: txnscope's header scan of a partition against `cat` of the
# same files and against decoding every batch with franz-go.
#
#   scripts/bench-scan.sh            # 1 GiB partition, warm cache, and cold if root
#   BENCH_SIZE=268435456 RUNS=5 scripts/bench-scan.sh
#   COLD_RUNS=0 scripts/bench-scan.sh   # warm only: dropping the page cache slows everyone on a shared machine
#
# It generates a partition directory (scripts/genpartition: 256 MiB segments
# of mostly transactional 1-16 KiB batches of 1-50 records, COMMIT/ABORT
# markers, some non-transactional and compressed batches) in a temp dir,
# builds the measured programs once, and times, as whole processes:
#
#   cat        cat DIR/*.log > /dev/null
#   scan       scripts/scanonly: loader.OpenPartitionWith(HeaderScanOptions) + txnindex.Build
#   scan-1cpu  the same with GOMAXPROCS=1: segments scanned one after another on one core
#   scan-only  scripts/scanonly -build=false: the header scan alone
#   scan+crc   scripts/scanonly -crc: DefaultScanOptions (every batch read whole, CRC-32C checked), + Build
#   kmsg       scripts/kmsgdecode: kmsg.RecordBatch.ReadFrom + decompress + kmsg.Record.ReadFrom of every record
#   kgo        scripts/kmsgdecode -mode kgo: kgo.ProcessFetchPartition over the segments
#
# with hyperfine when installed (installed with apt-get when root), else a
# bash timing loop; then the peak RSS of each (/usr/bin/time) and what the
# loaded partition keeps per batch. With root, the cat/scan/kmsg timings are
# repeated with the page cache dropped before every run.
set -euo pipefail

cd "$(dirname "$0")/.."
SIZE=${BENCH_SIZE:-1073741824}
RUNS=${RUNS:-7}
COLD_RUNS=${COLD_RUNS:-3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-scan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DIR=$WORK/bench-0
BIN=$WORK/bin

if ! command -v hyperfine >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get install -y hyperfine >/dev/null 2>&1 || true
fi
if [ ! -x /usr/bin/time ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get install -y time >/dev/null 2>&1 || true
fi

echo "== $(date -u +%FT%TZ) $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3)"
mkdir -p "$BIN"
go build -o "$BIN/scanonly" ./scripts/scanonly
go build -o "$BIN/kmsgdecode" ./scripts/kmsgdecode
go run ./scripts/genpartition -dir "$DIR" -size "$SIZE"
LOGS=$(ls "$DIR"/*.log | tr '\n' ' ')
BYTES=$(cat $LOGS | wc -c)
echo "partition: $DIR, $(ls "$DIR"/*.log | wc -l) segments, $BYTES bytes"

NAMES=(cat scan scan-1cpu scan-only scan+crc kmsg kgo)
CMDS=(
	"cat $LOGS"
	"$BIN/scanonly $DIR"
	"env GOMAXPROCS=1 $BIN/scanonly $DIR"
	"$BIN/scanonly -build=false $DIR"
	"$BIN/scanonly -crc $DIR"
	"$BIN/kmsgdecode $DIR"
	"$BIN/kmsgdecode -mode kgo $DIR"
)

# measure LABEL RUNS PREPARE NAME... : prints "name mean_s stddev_s" lines into $WORK/LABEL.txt
measure() {
	local label=$1 runs=$2 prepare=$3
	shift 3
	local out=$WORK/$label.txt
	: >"$out"
	local args=() names=()
	for n in "$@"; do
		for i in "${!NAMES[@]}"; do
			if [ "${NAMES[$i]}" = "$n" ]; then
				args+=("${CMDS[$i]}")
				names+=("$n")
			fi
		done
	done
	if command -v hyperfine >/dev/null; then
		local hf=(hyperfine -N --style basic --runs "$runs" --export-csv "$WORK/$label.csv")
		if [ -n "$prepare" ]; then
			hf+=(--prepare "$prepare")
		else
			hf+=(--warmup 1)
		fi
		for i in "${!args[@]}"; do hf+=(-n "${names[$i]}" "${args[$i]}"); done
		"${hf[@]}" >"$WORK/$label.hyperfine.txt" 2>&1 || { cat "$WORK/$label.hyperfine.txt"; exit 1; }
		# command,mean,stddev,median,user,system,min,max
		tail -n +2 "$WORK/$label.csv" | awk -F, '{print $1, $2, $3, $5, $6, $4, $7}' >"$out"
	else
		for i in "${!args[@]}"; do
			local sum=0 sq=0 t
			[ -z "$prepare" ] && ${args[$i]} >/dev/null 2>&1
			for ((r = 0; r < runs; r++)); do
				[ -n "$prepare" ] && bash -c "$prepare"
				local t0 t1
				t0=$(date +%s%N)
				${args[$i]} >/dev/null 2>&1
				t1=$(date +%s%N)
				t=$(((t1 - t0) / 1000))
				sum=$((sum + t))
				sq=$((sq + t * t / 1000))
			done
			awk -v n="${names[$i]}" -v s=$sum -v q=$sq -v r="$runs" 'BEGIN{m=s/r; v=q*1000/r-m*m; if(v<0)v=0; printf "%s %.6f %.6f - - %.6f -\n", n, m/1e6, sqrt(v)/1e6, m/1e6}' >>"$out"
		done
	fi
}

# median of a command (the mean for the bash fallback): robust to the
# occasional slow run on a shared machine.
mean() { awk -v n="$2" '$1==n{print $6}' "$WORK/$1.txt"; }

report() {
	local label=$1 title=$2
	echo
	echo "== $title"
	echo "(load average before: $(cut -d' ' -f1-3 /proc/loadavg); other work on the machine inflates every row)"
	printf "%-9s %10s %10s %10s %9s %9s %9s\n" what median_ms mean_ms min_ms user_ms sys_ms "MiB/s"
	awk -v b="$BYTES" '{u=($4=="-")?"-":sprintf("%.0f",$4*1000); s=($5=="-")?"-":sprintf("%.0f",$5*1000); mn=($7=="-")?"-":sprintf("%.1f",$7*1000);
		printf "%-9s %10.1f %10.1f %10s %9s %9s %9.0f\n", $1, $6*1000, $2*1000, mn, u, s, b/1048576/$6}' "$WORK/$label.txt"
	local c s o k g
	c=$(mean "$label" cat)
	s=$(mean "$label" scan)
	o=$(mean "$label" scan-only)
	local one
	one=$(mean "$label" scan-1cpu)
	k=$(mean "$label" kmsg)
	g=$(mean "$label" kgo)
	echo "ratios of medians ($title):"
	awk -v c="$c" -v s="$s" -v one="$one" -v o="$o" -v k="$k" -v g="$g" 'BEGIN{
		printf "  scan/cat  %6.2fx   (acceptance: <= 1.5x, aim 1.0x; scan = header scan + txnindex.Build)\n", s/c
		if (one != "") printf "  scan-1cpu/cat %6.2fx (GOMAXPROCS=1: one core)\n", one/c
		if (o != "") printf "  scan-only/cat %6.2fx (the header scan without Build)\n", o/c
		if (k != "") printf "  kmsg/scan %6.2fx   (acceptance: >= 5x)\n", k/s
		if (k != "" && one != "") printf "  kmsg/scan-1cpu %6.2fx (both on one core: kmsgdecode is single-threaded)\n", k/one
		if (g != "") printf "  kgo/scan  %6.2fx\n", g/s
	}'
}

echo
echo "== warm cache: timing ${NAMES[*]} ($RUNS runs each, 1 warmup)"
cat $LOGS >/dev/null
measure warm "$RUNS" "" "${NAMES[@]}"
report warm "warm page cache"

echo
echo "== peak RSS (/usr/bin/time -f %M), warm"
if [ -x /usr/bin/time ]; then
	for i in "${!NAMES[@]}"; do
		rss=$(/usr/bin/time -f "%M %R" -o "$WORK/rss" ${CMDS[$i]} >/dev/null 2>&1; cat "$WORK/rss")
		printf "  %-9s %8d KiB peak RSS, %7d minor page faults\n" "${NAMES[$i]}" ${rss% *} ${rss#* }
	done
else
	echo "  /usr/bin/time not installed"
fi

echo
echo "== memory kept per batch (scanonly -mem: heap after loading and Build, GC'd)"
"$BIN/scanonly" -mem "$DIR" 2>/dev/null | sed 's/^/  /'

if [ "$COLD_RUNS" -gt 0 ] && [ "$(id -u)" = 0 ] && sync && (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; then
	echo
	echo "== COLD cache: page cache dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every run, $COLD_RUNS runs each"
	measure cold "$COLD_RUNS" "sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'" cat scan scan-1cpu scan-only kmsg
	report cold "COLD page cache"
else
	echo
	echo "== cold cache: skipped (COLD_RUNS=0, or dropping the page cache needs root and a writable /proc/sys/vm/drop_caches)"
fi
