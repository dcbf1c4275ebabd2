#!/usr/bin/env bash
# Throughput and memory benchmark of parse/sanitizerlog on a generated 1 GiB
# compute-sanitizer log, against `grep -c 'Invalid __global__'` on the same file.
#
# Requirement: our parser reaches at least half of grep's throughput with a peak
# RSS under 32 MiB. The script prints both figures side by side and the ratio, and
# exits 1 when a requirement is missed.
#
# Environment:
#   SIZE   log size in bytes (default 1073741824 = 1 GiB)
#   RUNS   timed runs of each program; the best wall time counts (default 3)
#   SEED   generator seed (default 1; same seed, same file)
#   TMPDIR where the log is written (default /tmp); the log is deleted at exit
set -euo pipefail

SIZE=${SIZE:-1073741824}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
PATTERN='Invalid __global__'
MAX_RSS_KB=$((32 * 1024))

cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/time ]; then
	echo "installing GNU time (for max RSS) with apt-get" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq && $sudo apt-get install -y -qq time >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sanbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

go build -o "$work/gensanlog" ./bench/gensanlog
go build -o "$work/sanparse" ./bench/sanparse

log="$work/sanitizer.log"
echo "generating $SIZE bytes (seed $SEED) ..."
gen_stats=$("$work/gensanlog" -size "$SIZE" -seed "$SEED" -o "$log")
echo "  $gen_stats"
bytes=$(stat -c %s "$log")

# Warm the page cache so that both programs read from memory.
cat "$log" >/dev/null

# measure NAME CMD... runs CMD $RUNS times under /usr/bin/time -v and sets
# best_wall (s), best_cpu (user+sys s of that run) and max_rss (KiB, over all runs).
# The command's stdout goes to a file: GNU grep stops at the first match when its
# output is /dev/null, which would time nothing.
measure() {
	local name=$1
	shift
	best_wall="" best_cpu="" max_rss=0
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -v -o "$work/time.$name" "$@" >"$work/out.$name"
		local wall cpu rss
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {
			n = split($2, t, ":"); s = 0
			for (j = 1; j <= n; j++) s = s * 60 + t[j]
			print s }' "$work/time.$name")
		cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$work/time.$name")
		rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.$name")
		if [ -z "$best_wall" ] || awk -v a="$wall" -v b="$best_wall" 'BEGIN {exit !(a < b)}'; then
			best_wall=$wall best_cpu=$cpu
		fi
		if [ "$rss" -gt "$max_rss" ]; then
			max_rss=$rss
		fi
	done
}

measure grep grep -c "$PATTERN" "$log"
grep_wall=$best_wall grep_cpu=$best_cpu grep_rss=$max_rss
grep_count=$(cat "$work/out.grep")

measure ours "$work/sanparse" "$log"
our_wall=$best_wall our_cpu=$best_cpu our_rss=$max_rss
our_out=$(cat "$work/out.ours")

mbps() { awk -v b="$bytes" -v s="$1" 'BEGIN { if (s <= 0) s = 0.001; printf "%.0f", b / s / 1e6 }'; }
grep_mbps=$(mbps "$grep_wall")
our_mbps=$(mbps "$our_wall")
grep_cpu_mbps=$(mbps "$grep_cpu")
our_cpu_mbps=$(mbps "$our_cpu")
ratio=$(awk -v o="$our_mbps" -v g="$grep_mbps" 'BEGIN { printf "%.2f", o / g }')
cpu_ratio=$(awk -v o="$our_cpu_mbps" -v g="$grep_cpu_mbps" 'BEGIN { printf "%.2f", o / g }')

echo
echo "file: $bytes bytes, $RUNS runs each, best wall time counts"
printf '%-28s %14s %14s\n' "" "grep -c" "sanitizerlog"
printf '%-28s %14s %14s\n' "wall time (s)" "$grep_wall" "$our_wall"
printf '%-28s %14s %14s\n' "throughput (MB/s, wall)" "$grep_mbps" "$our_mbps"
printf '%-28s %14s %14s\n' "cpu time user+sys (s)" "$grep_cpu" "$our_cpu"
printf '%-28s %14s %14s\n' "throughput (MB/s, cpu)" "$grep_cpu_mbps" "$our_cpu_mbps"
printf '%-28s %14s %14s\n' "peak RSS (MiB)" "$(awk -v k="$grep_rss" 'BEGIN{printf "%.1f", k/1024}')" "$(awk -v k="$our_rss" 'BEGIN{printf "%.1f", k/1024}')"
echo "ratio ours/grep: $ratio (wall), $cpu_ratio (cpu)"
echo "grep count: $grep_count"
echo "parser:     $our_out"

status=0
if awk -v r="$ratio" 'BEGIN {exit !(r < 0.5)}'; then
	echo "FAIL: parser throughput is under half of grep's" >&2
	status=1
fi
if [ "$our_rss" -ge "$MAX_RSS_KB" ]; then
	echo "FAIL: parser peak RSS ${our_rss} KiB is not under 32 MiB" >&2
	status=1
fi
# The parser must have aggregated every record the generator wrote.
want_records=$(sed -n 's/.*access_records=\([0-9]*\).*/\1/p' <<<"$gen_stats")
got_records=$(sed -n 's/.* records=\([0-9]*\).*/\1/p' <<<"$our_out")
if [ "$want_records" != "$got_records" ]; then
	echo "FAIL: generator wrote $want_records access records, parser counted $got_records" >&2
	status=1
fi
if [ "$status" -eq 0 ]; then
	echo "PASS: >= 0.5x grep throughput, peak RSS < 32 MiB, record counts match"
fi
exit "$status"
