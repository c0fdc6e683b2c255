#!/bin/bash
# bench-verbs.sh: godat over verbs beside perftest on the same device, in
# one run inside the verbs VM (`make bench-verbs`). It measures nothing in
# make check and asserts nothing: it prints the raw figures and the ratios
# against the goals (8 B latency at most 1.3 x ib_send_lat's, 1 MiB RDMA
# write and read bandwidth at least 0.8 x ib_write_bw's and ib_read_bw's).
#
#   godat   bench/datbench over the IA godat-verbs: lat_poll (send/receive
#           ping-pong, one-way = round trip / 2, polling), bw_write and
#           bw_read (a window of RDMA operations in flight); the median of
#           its windows
#   perftest ib_send_lat (t_avg, the mean one-way latency, as datbench's
#           windows are means; t_typical, the median, shown beside it),
#           ib_write_bw and ib_read_bw (BW average, MiB/s), server and
#           client on the same device (rxe loops back)
# Under TCG the figures are slow and noisy: compare only within one run.
#
#   vm/bench-verbs.sh BENCHDIR     (BENCHDIR holds datbench)
set -u
B=${1:?usage: bench-verbs.sh BENCHDIR}
DEV=${VERBS_VM_DEV:-rxe0}
ADDR=${VERBS_VM_ADDR:-10.66.0.1}
GIDX=${VERBS_VM_GID_INDEX:-1}
here=$(cd "$(dirname "$0")" && pwd)
export DAT_OVERRIDE=${DAT_OVERRIDE:-$(dirname "$here")/dat.conf}
export BENCH_TIME=${BENCH_TIME:-2} BENCH_WINDOWS=${BENCH_WINDOWS:-3}
ITERS_LAT=${ITERS_LAT:-2000} ITERS_BW=${ITERS_BW:-200}
ulimit -l unlimited 2>/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

tcp_listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
wait_listen() {
	local n=400
	until tcp_listening "$1"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# perf TOOL PORT ARGS...: server and client of a perftest tool; the
# client's output in $TMP/TOOL.
perf() {
	local tool=$1 port=$2 spid
	shift 2
	timeout 300 "$tool" -d "$DEV" -x "$GIDX" -F -p "$port" "$@" >"$TMP/$tool.server" 2>&1 &
	spid=$!
	wait_listen "$port" || { echo "bench: $tool server never listened" >&2; kill "$spid"; return 1; }
	timeout 300 "$tool" -d "$DEV" -x "$GIDX" -F -p "$port" "$@" "$ADDR" >"$TMP/$tool" 2>&1 || {
		echo "bench: $tool failed:" >&2
		cat "$TMP/$tool" >&2
		kill "$spid"
		return 1
	}
	wait "$spid"
}

# perf_col FILE N: field N of the first data row of a perftest table (the
# row that starts with the message size; the headers hold blanks).
perf_col() {
	awk -v n="$2" '$1 ~ /^[0-9]+$/ && NF >= n { print $n; exit }' "$1"
}

# godat ROW SIZE: the median of datbench's windows.
godat() {
	timeout 600 "$B/datbench" -i godat-verbs -o "$1" -s "$2" >"$TMP/godat.$1" 2>&1 || {
		echo "bench: datbench $1 failed:" >&2
		cat "$TMP/godat.$1" >&2
		return 1
	}
	awk -v r="$1" '$1 == "godat" && $2 == r { v[n++] = $4 } END {
		if (n == 0) exit 1
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		print v[int(n / 2)] }' "$TMP/godat.$1"
}

# ib_send_lat's row: #bytes #iterations t_min t_max t_typical t_avg ...;
# the ib_*_bw rows: #bytes #iterations BW-peak BW-average MsgRate.
lat_p= lat_pt= wbw_p= rbw_p= lat_g= wbw_g= rbw_g=
if perf ib_send_lat 18601 -s 8 -n "$ITERS_LAT"; then
	lat_p=$(perf_col "$TMP/ib_send_lat" 6)
	lat_pt=$(perf_col "$TMP/ib_send_lat" 5)
fi
perf ib_write_bw 18602 -s 1048576 -n "$ITERS_BW" && wbw_p=$(perf_col "$TMP/ib_write_bw" 4)
perf ib_read_bw 18603 -s 1048576 -n "$ITERS_BW" && rbw_p=$(perf_col "$TMP/ib_read_bw" 4)
lat_g=$(godat lat_poll 8)
wbw_g=$(godat bw_write 1048576)
rbw_g=$(godat bw_read 1048576)

for f in "$TMP"/ib_* "$TMP"/godat.*; do
	echo "--- $(basename "$f")"
	cat "$f"
done

# perftest's MB/sec is MiB/s; datbench's GB/s is 1e9 B/s: both to MB/s (1e6 B/s).
awk -v lp="$lat_p" -v lpt="$lat_pt" -v lg="$lat_g" -v wp="$wbw_p" -v wg="$wbw_g" -v rp="$rbw_p" -v rg="$rbw_g" -v dev="$DEV" '
function row(what, unit, p, g, goal, le,   r, v) {
	if (p == "" || g == "" || p + 0 == 0) { printf "%-28s %12s %12s %8s  %s\n", what, p == "" ? "fail" : p, g == "" ? "fail" : g, "-", goal; bad = 1; return }
	r = g / p; v = le ? (r <= goal + 0 ? "PASS" : "MISS") : (r >= goal + 0 ? "PASS" : "MISS")
	printf "%-28s %12.2f %12.2f %7.2fx  %s %s %s\n", what " (" unit ")", p, g, r, le ? "<=" : ">=", goal, v
}
BEGIN {
	printf "bench-verbs on %s (TCG: one run, noisy)\n", dev
	printf "%-28s %12s %12s %8s  %s\n", "", "perftest", "godat", "ratio", "goal"
	row("8 B latency, one-way mean", "us", lp, lg, 1.3, 1)
	printf "%-28s %12s\n", "  (ib_send_lat median)", lpt
	row("1 MiB RDMA write bandwidth", "MB/s", wp * 1.048576, wg * 1000, 0.8, 0)
	row("1 MiB RDMA read bandwidth", "MB/s", rp * 1.048576, rg * 1000, 0.8, 0)
	exit bad
}'
