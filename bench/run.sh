#!/bin/bash
# `make bench`: measures godat (bench/datbench.c over libdat), the peers
# libfabric (fi_pingpong -p shm) and UCX (ucx_perftest, UCX_TLS=posix,cma),
# and the C floors (bench/floors.c), all in this one run, and prints one
# table (table.awk) with ratios and a PASS/MISS per goal.
#
# Usage: run.sh BINDIR        (BINDIR holds datbench and floors)
# Environment: BENCH_TIME     seconds per measurement (default 0.2)
#              BENCH_REPEAT   rounds over every tool; each cell keeps the
#                             best round (default 2)
#              BENCH_RESULTS  keep the raw results in this file
# Every program runs under `timeout`; a failure shows up as "fail" in its
# column and the run exits non-zero.
set -u
B=${1:?usage: run.sh BINDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
REPEAT=${BENCH_REPEAT:-2}
export BENCH_TIME=${BENCH_TIME:-0.2}
TMP=$(mktemp -d /tmp/godat-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
RES=$TMP/results # lines: tool row size value  |  status tool text
: >"$RES"
failed=0

note() { echo "bench: $*" >&2; }
status() { echo "status $1 $2" >>"$RES"; }

# ---- peers: present, installable, or "n/a (not installed)" ----
have_peers() { command -v fi_pingpong >/dev/null && command -v ucx_perftest >/dev/null; }
if ! have_peers; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		note "installing the peer tools (libfabric-bin ucx-utils)"
		if ! timeout 600 apt-get install -y libfabric-bin ucx-utils >"$TMP/apt.log" 2>&1; then
			note "apt-get install failed; the missing columns are n/a:"
			tail -3 "$TMP/apt.log" >&2
		fi
	fi
fi
FI=0 UCX=0
if command -v fi_pingpong >/dev/null && fi_info -p shm >/dev/null 2>&1; then FI=1; else status fi missing; fi
if command -v ucx_perftest >/dev/null; then UCX=1; else status ucx missing; fi

# A port for the peers' TCP bootstrap, away from their defaults so that two
# benches on one host do not meet.
port() { echo $((20000 + (RANDOM % 20000))); }

# runs a server in the background and its client, retrying while the
# server is not yet listening; the client's output goes to $out.
serve_and_run() { # out server-cmd... -- client-cmd...
	local out=$1
	shift
	local -a srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local try
	for try in 1 2 3; do
		timeout 60 "${srv[@]}" >"$out.srv" 2>&1 &
		local spid=$!
		sleep 0.3
		if timeout 60 "${cli[@]}" >"$out" 2>&1; then
			wait $spid
			return 0
		fi
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null
	done
	return 1
}

run_godat() {
	if timeout 150 "$B/datbench" >"$TMP/godat" 2>"$TMP/godat.err"; then
		cat "$TMP/godat" >>"$RES"
	else
		note "datbench failed:"
		cat "$TMP/godat.err" >&2
		status godat fail
		failed=1
	fi
}

run_floors() {
	if timeout 120 "$B/floors" >"$TMP/floors" 2>"$TMP/floors.err"; then
		cat "$TMP/floors" >>"$RES"
	else
		note "floors failed:"
		cat "$TMP/floors.err" >&2
		status floor fail
		failed=1
	fi
}

# fi_pingpong: one run per size; "usec/xfer" is one-way (two transfers per
# iteration), MB/sec is 1e6 B/s of ping-pong traffic.
run_fi() {
	[ $FI = 1 ] || return 0
	local s n p
	for s in 8:20000 64:20000 4096:20000 65536:5000 1048576:1000 16777216:40; do
		n=${s#*:} s=${s%:*} p=$(port)
		if serve_and_run "$TMP/fi" fi_pingpong -p shm -e rdm -B "$p" -I "$n" -S "$s" -- \
			fi_pingpong -p shm -e rdm -P "$p" -I "$n" -S "$s" 127.0.0.1; then
			awk -v s="$s" 'NF == 8 && $1 ~ /^[0-9]/ { print "fi lat " s, $7; print "fi bw " s, $6 / 1000 }' \
				"$TMP/fi" >>"$RES"
		else
			note "fi_pingpong -S $s failed:"
			tail -3 "$TMP/fi" >&2
			status fi fail
			failed=1
		fi
	done
}

# ucx_perftest: one batch; latency is one-way, bandwidth in MiB/s.
run_ucx() {
	[ $UCX = 1 ] || return 0
	local p
	p=$(port)
	cat >"$TMP/ucx.batch" <<-EOF
		lat_8 -t tag_lat -s 8 -n 100000 -w 10000
		lat_64 -t tag_lat -s 64 -n 100000 -w 10000
		lat_4096 -t tag_lat -s 4096 -n 50000 -w 5000
		lat_65536 -t tag_lat -s 65536 -n 10000 -w 1000
		lat_1048576 -t tag_lat -s 1048576 -n 1000 -w 100
		bw_send_4096 -t tag_bw -s 4096 -n 200000 -w 20000
		bw_send_65536 -t tag_bw -s 65536 -n 20000 -w 2000
		bw_send_1048576 -t tag_bw -s 1048576 -n 2000 -w 200
		bw_send_16777216 -t tag_bw -s 16777216 -n 100 -w 10
		bw_write_4096 -t ucp_put_bw -s 4096 -n 200000 -w 20000
		bw_write_65536 -t ucp_put_bw -s 65536 -n 20000 -w 2000
		bw_write_1048576 -t ucp_put_bw -s 1048576 -n 2000 -w 200
		bw_write_16777216 -t ucp_put_bw -s 16777216 -n 100 -w 10
		bw_read_4096 -t ucp_get -s 4096 -n 200000 -w 20000
		bw_read_65536 -t ucp_get -s 65536 -n 20000 -w 2000
		bw_read_1048576 -t ucp_get -s 1048576 -n 2000 -w 200
		bw_read_16777216 -t ucp_get -s 16777216 -n 100 -w 10
	EOF
	if UCX_TLS=posix,cma UCX_WARN_UNUSED_ENV_VARS=n serve_and_run "$TMP/ucx" \
		ucx_perftest -p "$p" -b "$TMP/ucx.batch" -- \
		ucx_perftest 127.0.0.1 -p "$p" -b "$TMP/ucx.batch" -f; then
		awk '$1 ~ /^(lat|bw_[a-z]+)_[0-9]+$/ && NF >= 9 {
			n = split($1, f, "_"); size = f[n]; row = (n == 2) ? "lat" : f[1] "_" f[2]
			if (row == "lat") print "ucx lat " size, $4
			else print "ucx " row " " size, $7 * 1048576 / 1e9
		}' "$TMP/ucx" >>"$RES"
	else
		note "ucx_perftest failed:"
		tail -3 "$TMP/ucx" >&2
		status ucx fail
		failed=1
	fi
}

note "measuring ($REPEAT rounds of godat, floors, libfabric, UCX; ~${BENCH_TIME}s per figure)"
for r in $(seq "$REPEAT"); do
	run_godat
	run_floors
	run_fi
	run_ucx
done
[ -n "${BENCH_RESULTS:-}" ] && cp "$RES" "$BENCH_RESULTS"
awk -v repeat="$REPEAT" -v cpus="$(nproc)" -v kernel="$(uname -r)" -f "$HERE/table.awk" "$RES"
exit $failed
