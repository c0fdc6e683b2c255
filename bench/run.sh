#!/bin/bash
# `make bench`: measures godat (bench/datbench.c over libdat), the peers
# libfabric (fi_pingpong -p shm) and UCX (ucx_perftest, UCX_TLS=posix,cma),
# and the C floors (bench/floors.c), all in this one run, and prints one
# table (table.awk) with ratios and a PASS/MISS per goal.
#
# Then the application patterns of issue 17 (apppat.c: polled send/recv,
# eager RDMA, the time inside an RDMA post, the idle cost of 100
# connections) beside plain TCP and shared-memory ping-pongs and
# fi_pingpong -p tcp, and the TCP stream of tcp_bench, with their goals.
#
# Usage: run.sh BINDIR        (BINDIR holds datbench, floors, apppat, ...)
# Environment: BENCH_TIME     seconds per measurement (default 0.2)
#              BENCH_WINDOWS  windows per measurement (default 3; the peers
#                             are run that many times)
#              BENCH_REPEAT   rounds over every tool (default 3); a cell is
#                             the median over rounds x windows values
#              BENCH_RESULTS  keep the raw results in this file
#              BENCH_FI_PINGPONG, BENCH_UCX_PERFTEST  the peer programs
#                             (default: fi_pingpong, ucx_perftest on PATH)
#              BENCH_BASELINE_LIBDIR  a directory holding another build's
#                             libdat.so.1 (e.g. main's build/lib): datbench
#                             also runs against it every round, and the
#                             issue-17 row "existing one-host rows" compares
#                             this build's cells with it
# Every program runs under `timeout`; a failure shows up as "fail" in its
# column and the run exits non-zero.
set -u
B=${1:?usage: run.sh BINDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
REPEAT=${BENCH_REPEAT:-3}
export BENCH_TIME=${BENCH_TIME:-0.2} BENCH_WINDOWS=${BENCH_WINDOWS:-3}
# Iterations for a peer window: ($1 = iterations for a 0.2 s measurement)
# scaled to BENCH_TIME / BENCH_WINDOWS.
iters() { awk -v n="$1" -v t="$BENCH_TIME" -v w="$BENCH_WINDOWS" 'BEGIN { n = int(n * t / 0.2 / w); print (n < 10 ? 10 : n) }'; }
TMP=$(mktemp -d /tmp/godat-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
RES=$TMP/results # lines: tool row size value  |  status tool text
: >"$RES"
failed=0

note() { echo "bench: $*" >&2; }
status() { echo "status $1 $2" >>"$RES"; }

# ---- peers: present, installable, or "n/a (not installed)" ----
FI_PINGPONG=${BENCH_FI_PINGPONG:-fi_pingpong}
UCX_PERFTEST=${BENCH_UCX_PERFTEST:-ucx_perftest}
have_peers() { command -v "$FI_PINGPONG" >/dev/null && command -v "$UCX_PERFTEST" >/dev/null; }
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
if command -v "$FI_PINGPONG" >/dev/null; then FI=1; else status fi missing; note "fi_pingpong: not installed"; fi
if command -v "$UCX_PERFTEST" >/dev/null; then UCX=1; else status ucx missing; note "ucx_perftest: not installed"; fi

# Every measurement runs its two processes on two different CPUs (the
# first two allowed, or BENCH_CPUS=A,B); datbench and floors pin themselves
# from BENCH_CPUS, the peers run under taskset.
if [ -z "${BENCH_CPUS:-}" ]; then
	BENCH_CPUS=$(awk '/^Cpus_allowed_list/ {
		n = split($2, r, ","); out = ""; k = 0
		for (i = 1; i <= n && k < 2; i++) {
			m = split(r[i], ab, "-"); hi = (m == 2) ? ab[2] : ab[1]
			for (c = ab[1]; c <= hi && k < 2; c++) { out = out (k ? "," : "") c; k++ }
		}
		if (k == 2) print out }' /proc/self/status)
fi
export BENCH_CPUS
PIN0=() PIN1=()
if [ -n "$BENCH_CPUS" ] && command -v taskset >/dev/null; then
	PIN0=(taskset -c "${BENCH_CPUS%,*}") PIN1=(taskset -c "${BENCH_CPUS#*,}")
fi

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

# fi_pingpong: BENCH_WINDOWS runs per size; "usec/xfer" is one-way (two
# transfers per iteration), MB/sec is 1e6 B/s of ping-pong traffic.
run_fi() {
	[ $FI = 1 ] || return 0
	local s n p w
	for s in 8:140000 64:140000 4096:50000 65536:20000 1048576:1600 16777216:60; do
		n=$(iters ${s#*:}) s=${s%:*}
		for w in $(seq "$BENCH_WINDOWS"); do
			p=$(port)
			if serve_and_run "$TMP/fi" "${PIN0[@]}" "$FI_PINGPONG" -p shm -e rdm -B "$p" -I "$n" -S "$s" -- \
				"${PIN1[@]}" "$FI_PINGPONG" -p shm -e rdm -P "$p" -I "$n" -S "$s" 127.0.0.1; then
				awk -v s="$s" 'NF == 8 && $1 ~ /^[0-9]/ { print "fi lat " s, $7; print "fi bw " s, $6 / 1000 }' \
					"$TMP/fi" >>"$RES"
			else
				note "fi_pingpong -S $s failed:"
				tail -3 "$TMP/fi" >&2
				status fi fail
				failed=1
			fi
		done
	done
}

# ucx_perftest: one batch; latency is one-way, bandwidth in MiB/s.
run_ucx() {
	[ $UCX = 1 ] || return 0
	local p
	p=$(port)
	# name test size iterations-for-0.2s; each line BENCH_WINDOWS times
	local w name t size n
	: >"$TMP/ucx.batch"
	while read -r name t size n; do
		n=$(iters "$n")
		for w in $(seq "$BENCH_WINDOWS"); do
			echo "${name}_$size -t $t -s $size -n $n -w $((n / 10 + 1))" >>"$TMP/ucx.batch"
		done
	done <<-EOF
		lat tag_lat 8 250000
		lat tag_lat 64 250000
		lat tag_lat 4096 60000
		lat tag_lat 65536 20000
		lat tag_lat 1048576 1600
		bw_send tag_bw 4096 250000
		bw_send tag_bw 65536 50000
		bw_send tag_bw 1048576 3000
		bw_send tag_bw 16777216 100
		bw_write ucp_put_bw 4096 1000000
		bw_write ucp_put_bw 65536 100000
		bw_write ucp_put_bw 1048576 4000
		bw_write ucp_put_bw 16777216 100
		bw_read ucp_get 4096 1000000
		bw_read ucp_get 65536 100000
		bw_read ucp_get 1048576 4000
		bw_read ucp_get 16777216 100
	EOF
	if UCX_TLS=posix,cma UCX_WARN_UNUSED_ENV_VARS=n serve_and_run "$TMP/ucx" \
		"${PIN0[@]}" "$UCX_PERFTEST" -p "$p" -b "$TMP/ucx.batch" -- \
		"${PIN1[@]}" "$UCX_PERFTEST" 127.0.0.1 -p "$p" -b "$TMP/ucx.batch" -f; then
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

# datbench against another build's library (BENCH_BASELINE_LIBDIR): its
# lines are tool "base". datbench's RUNPATH yields to LD_LIBRARY_PATH.
run_base() {
	[ -n "${BENCH_BASELINE_LIBDIR:-}" ] || return 0
	if LD_LIBRARY_PATH=$BENCH_BASELINE_LIBDIR timeout 150 "$B/datbench" >"$TMP/base" 2>"$TMP/base.err"; then
		sed -n 's/^godat /base /p' "$TMP/base" >>"$RES"
	else
		note "datbench against $BENCH_BASELINE_LIBDIR failed:"
		cat "$TMP/base.err" >&2
		status base fail
		failed=1
	fi
}

# The application patterns (issue 17): apppat's ping-pongs and post costs
# over both IAs and its plain anchors, and fi_pingpong -p tcp (8 bytes,
# BENCH_WINDOWS runs), every process pinned like the rest.
run_app() {
	local m tool w n p
	for m in plain-shm plain-tcp "dat godat-shm" "dat godat-tcp"; do
		tool=${m##* }
		# shellcheck disable=SC2086 # m is the mode and its argument
		if timeout 100 "$B/apppat" $m >"$TMP/app" 2>"$TMP/app.err"; then
			cat "$TMP/app" >>"$RES"
		else
			note "apppat $m failed:"
			cat "$TMP/app.err" >&2
			status "$tool" fail
			failed=1
		fi
	done
	# The ping-pongs again with both processes pinned before they start, as
	# mpirun --bind-to core does: the Go runtime then sizes itself for one
	# CPU (GOMAXPROCS 1). Tool names "<IA>/taskset".
	if [ ${#PIN0[@]} -gt 0 ]; then
		for m in godat-shm godat-tcp; do
			if APPPAT_SUFFIX=/taskset timeout 100 "${PIN0[@]}" "$B/apppat" dat "$m" pp >"$TMP/app" 2>"$TMP/app.err"; then
				cat "$TMP/app" >>"$RES"
			else
				note "apppat dat $m pp under taskset failed:"
				cat "$TMP/app.err" >&2
				status "$m/taskset" fail
				failed=1
			fi
		done
	fi
	[ $FI = 1 ] || return 0
	n=$(iters 10000)
	for w in $(seq "$BENCH_WINDOWS"); do
		p=$(port)
		if serve_and_run "$TMP/fitcp" "${PIN0[@]}" "$FI_PINGPONG" -p tcp -e msg -B "$p" -I "$n" -S 8 -- \
			"${PIN1[@]}" "$FI_PINGPONG" -p tcp -e msg -P "$p" -I "$n" -S 8 127.0.0.1; then
			awk 'NF == 8 && $1 ~ /^[0-9]/ { print "fi-tcp pp 8", $7 }' "$TMP/fitcp" >>"$RES"
		else
			note "fi_pingpong -p tcp -S 8 failed:"
			tail -3 "$TMP/fitcp" >&2
			status fi-tcp fail
			failed=1
		fi
	done
}

# Threads and idle CPU of a process with 100 connections (issue 17), once.
run_idle() {
	local ia
	for ia in godat-shm godat-tcp; do
		if timeout 60 "$B/apppat" idle "$ia" 100 >"$TMP/idle" 2>"$TMP/idle.err"; then
			cat "$TMP/idle" >>"$RES"
		else
			note "apppat idle $ia failed:"
			cat "$TMP/idle.err" >&2
			status "idle-$ia" fail
			failed=1
		fi
	done
}

note "processes pinned to CPUs ${BENCH_CPUS:-(none: one CPU)}"
note "measuring ($REPEAT rounds of godat, floors, libfabric, UCX, application patterns; ~${BENCH_TIME}s per figure)"
[ $FI = 1 ] || status fi-tcp missing
for r in $(seq "$REPEAT"); do
	run_godat
	run_base
	run_floors
	run_fi
	run_ucx
	run_app
done
run_idle

# TCP rows (issue 5): godat-tcp beside plain TCP sockets and libfabric's tcp
# provider, same path (loopback), one run each; the stream figures also go
# to the results as tool "tb-<name>" for issue 17's bandwidth goal.
tcp_measure() {
	local out=$TMP/tcp
	: >"$out"
	timeout 120 "$B/tcp_bench" plain >>"$out" 2>"$TMP/tcp.err" ||
		{ note "tcp_bench plain failed"; status tb-plain fail; failed=1; }
	timeout 120 "$B/tcp_bench" dat godat-tcp >>"$out" 2>>"$TMP/tcp.err" ||
		{ note "tcp_bench godat-tcp failed"; status tb-godat-tcp fail; failed=1; }
	TCP_BENCH_POLL=1 timeout 120 "$B/tcp_bench" dat godat-tcp >>"$out" 2>>"$TMP/tcp.err" ||
		{ note "tcp_bench godat-tcp/poll failed"; status tb-godat-tcp/poll fail; failed=1; }
	if [ $FI = 1 ]; then
		local p
		p=$(port)
		if serve_and_run "$TMP/fitcp8" "${PIN0[@]}" "$FI_PINGPONG" -p tcp -e msg -B "$p" -S 8 -I 20000 -- \
			"${PIN1[@]}" "$FI_PINGPONG" -p tcp -e msg -P "$p" -S 8 -I 20000 127.0.0.1; then
			awk 'NF == 8 && $1 ~ /^[0-9]/ { print "fi-tcp lat8", 2 * $7 }' "$TMP/fitcp8" >>"$out"
		fi
		p=$(port)
		if serve_and_run "$TMP/fitcp1m" "${PIN0[@]}" "$FI_PINGPONG" -p tcp -e msg -B "$p" -S 1048576 -I 500 -- \
			"${PIN1[@]}" "$FI_PINGPONG" -p tcp -e msg -P "$p" -S 1048576 -I 500 127.0.0.1; then
			awk 'NF == 8 && $1 ~ /^[0-9]/ { print "fi-tcp bw1m", $6 }' "$TMP/fitcp1m" >>"$out"
		fi
	fi
	awk '$2 == "lat8" { print "tb-" $1, $2, 8, $3 } $2 == "bw1m" { print "tb-" $1, $2, 1048576, $3 }' "$out" >>"$RES"
}
tcp_measure

[ -n "${BENCH_RESULTS:-}" ] && cp "$RES" "$BENCH_RESULTS"
awk -v repeat="$REPEAT" -v windows="$BENCH_WINDOWS" -v btime="$BENCH_TIME" -v cpus="$(nproc)" \
	-v kernel="$(uname -r)" -v baseline="${BENCH_BASELINE_LIBDIR:-}" -f "$HERE/table.awk" "$RES"

tcp_rows() {
	local out=$TMP/tcp
	echo
	echo "TCP over loopback (8-byte round trip in us; 1 MiB stream in MB/s; ratio against plain TCP):"
	awk '{ v[$1 " " $2] = $3 }
	END {
		pl = v["plain lat8"]; pb = v["plain bw1m"]
		printf "  %-22s %12s %8s %12s %8s\n", "", "lat8 us", "ratio", "bw1m MB/s", "ratio"
		n = split("plain godat-tcp godat-tcp/poll fi-tcp", names, " ")
		for (i = 1; i <= n; i++) {
			k = names[i]
			l = (k " lat8") in v ? sprintf("%.2f", v[k " lat8"]) : "n/a"
			b = (k " bw1m") in v ? sprintf("%.0f", v[k " bw1m"]) : "n/a"
			lr = (((k " lat8") in v) && pl > 0) ? sprintf("%.2fx", v[k " lat8"] / pl) : ""
			br = (((k " bw1m") in v) && pb > 0) ? sprintf("%.2fx", v[k " bw1m"] / pb) : ""
			printf "  %-22s %12s %8s %12s %8s\n", k, l, lr, b, br
		}
		if (pl > 0 && (("godat-tcp lat8") in v))
			printf "  goal: godat-tcp 8-byte latency <= 1.2x plain: %s\n", (v["godat-tcp lat8"] / pl <= 1.2 ? "PASS" : "MISS")
		if (pb > 0 && (("godat-tcp bw1m") in v))
			printf "  goal: godat-tcp 1 MiB bandwidth >= 0.8x plain: %s\n", (v["godat-tcp bw1m"] / pb >= 0.8 ? "PASS" : "MISS")
	}' "$out"
}
tcp_rows

# Receive-buffer memory with and without an SRQ (issue 4).
echo
echo "Receive-buffer memory, N connections, own receive queues (rq) vs one SRQ:"
timeout 300 "$B/srq_mem" godat-shm | sed 's/^/  /' || { note "srq_mem failed"; failed=1; }

# An empty dat_evd_dequeue against the connections feeding the EVD (issue
# 12): one poll of the EVD's completion queue, whatever their number.
echo
echo "Empty dat_evd_dequeue, ns per call, N connected endpoints completing into the EVD (ratio against N = 1):"
for ia in godat-shm godat-tcp; do
	if timeout 300 "$B/evd_scale" "$ia" 1 64 1024 >"$TMP/evd_scale" 2>"$TMP/evd_scale.err"; then
		awk -v ia="$ia" '$1 == "evd_scale" { v[$2] = $3; order[++n] = $2 }
		END {
			for (i = 1; i <= n; i++)
				printf "  %-10s N = %-5s %8.1f ns  %5.2fx\n", ia, order[i], v[order[i]], v[order[i]] / v[1]
			printf "  goal: %s N = 1024 within 2x of N = 1: %s\n", ia, (v[1024] / v[1] <= 2 ? "PASS" : "MISS")
		}' "$TMP/evd_scale"
	else
		note "evd_scale $ia failed:"
		cat "$TMP/evd_scale.err" >&2
		failed=1
	fi
done
exit $failed
