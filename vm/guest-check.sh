#!/bin/bash
# guest-check.sh: the check-verbs suite. Runs INSIDE the verbs VM (make
# check-verbs starts it through vm/verbs-vm.sh), so that one boot serves
# every step.
#
#   vm/guest-check.sh [-v] [STEP...]     (default: every step in STEPS)
#
# Each step runs bounded by STEP_TIMEOUT seconds (default 300), its output
# going to $VERBS_VM_OUT/<step>.log, shown when the step fails (always with
# -v). One line per step: "ok STEP (secs): note", "FAIL STEP (secs)" or
# "skip STEP: reason"; then "check-verbs: N passed, N failed, N skipped".
# Exit status 0 when no step failed.
#
# Adding a step: write a function step_NAME (its exit status is the verdict;
# anything it writes to "$NOTE" is appended to its ok line; exit status 77 with
# a reason in "$NOTE" is a skip) and add NAME to STEPS. Every process costs
# about 50 ms under TCG: prefer one test binary to many small commands.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
OUT=${VERBS_VM_OUT:?guest-check.sh runs inside the VM: use make check-verbs}
DEV=${VERBS_VM_DEV:-rxe0}
ADDR=${VERBS_VM_ADDR:-10.66.0.1}
GIDX=${VERBS_VM_GID_INDEX:-1}
SMOKE=$repo/build/vm/verbs_smoke
GOTEST=$repo/build/vm/verbs.test
XFAIL=$here/verbs-xfail.txt
CXFAIL=$here/ctest-verbs-xfail.txt
CBIN=$repo/build/ctest

STEPS=(devinfo rc_pingpong rping smoke_rxe go_verbs ia_query ctest_verbs pairs memlock smoke_siw)
# ctest_verbs (the whole C suite over godat-verbs) is the long step: about
# 20 min under TCG; make check-verbs-ctest runs it alone.

# Steps that take longer than STEP_TIMEOUT (seconds).
: "${STEP_TIMEOUT_go_verbs:=1200}"
: "${STEP_TIMEOUT_ctest_verbs:=2700}"

# wait_until TRIES CMD...: CMD every 50 ms until it succeeds, at most TRIES times.
wait_until() {
	local n=$1
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

tcp_listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
cm_listening() { rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN.*src-addr $ADDR:$1 "; }

# ---- steps ------------------------------------------------------------------

# The Soft-RoCE device is there and its port is up.
step_devinfo() {
	local info
	info=$(ibv_devinfo -d "$DEV") || return 1
	echo "$info"
	grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$info" || { echo "port not PORT_ACTIVE"; return 1; }
	grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$info" || { echo "link layer not Ethernet"; return 1; }
	echo "$DEV port 1 PORT_ACTIVE, Ethernet" >"$NOTE"
}

# libibverbs' RC ping-pong between two processes on the device (GID index 1:
# RoCE v2 over the IPv4 address). Its out-of-band exchange is TCP.
step_rc_pingpong() {
	local port=18515 n=200 spid
	ibv_rc_pingpong -d "$DEV" -g "$GIDX" -p $port -n $n -s 64 >"$OUT/rc_pingpong.server" 2>&1 &
	spid=$!
	wait_until 200 tcp_listening $port || { echo "server never listened"; kill $spid; return 1; }
	ibv_rc_pingpong -d "$DEV" -g "$GIDX" -p $port -n $n -s 64 "$ADDR" || { kill $spid; return 1; }
	wait $spid || { echo "server failed:"; cat "$OUT/rc_pingpong.server"; return 1; }
	cat "$OUT/rc_pingpong.server"
	grep -o "$n iters in .* usec/iter" "$OUT/rc_pingpong.server" >"$NOTE" || return 1
}

# librdmacm's rping, 100 pings of 64 bytes with the data verified.
step_rping() {
	local port=7471 spid
	rping -s -a "$ADDR" -p $port -C 100 -S 64 -V >"$OUT/rping.server" 2>&1 &
	spid=$!
	wait_until 200 cm_listening $port || { echo "server never listened"; kill $spid; return 1; }
	rping -c -a "$ADDR" -p $port -C 100 -S 64 -V || { kill $spid; return 1; }
	wait $spid || { echo "server failed:"; cat "$OUT/rping.server"; return 1; }
	echo "100 x 64 B verified" >"$NOTE"
}

# Our own program: rdma_cm, PD, CQ with a completion channel, RC QP,
# send/recv, RDMA write and read, disconnect (vm/smoke/verbs_smoke.c).
step_smoke_rxe() {
	"$SMOKE" -a "$ADDR" -d "$DEV" -n 50 || return 1
	echo "50 x send/recv, RDMA write, RDMA read on $DEV" >"$NOTE"
}

# The verbs backend's Go tests (rdma/verbs: the rdmatest conformance suite
# over rxe0, and the backend's own), one test binary built on the host. The
# failures vm/verbs-xfail.txt names are the device's or the contract's (each
# line says why): any other failure fails the step; an expected failure
# that passes is noted. PortEvents takes vm0 down and up again.
step_go_verbs() {
	local out=$OUT/go_verbs.out rc rc2
	# The tests that wait for an event rxe never raises run apart, with a
	# shorter bound than the suite's 30 s: they fail all the same, sooner.
	local slow='^TestConformance$/^(Errors|Async)$/^(RemoteAccess|QPAccessErr)$'
	# Registered memory is locked memory; root is exempt on rxe, not on siw.
	ulimit -l unlimited 2>/dev/null
	GODAT_VERBS_PARAMS=addr=$ADDR GODAT_VERBS_PORT_TEST=1 "$GOTEST" -test.v -test.count=1 -test.skip "$slow" >"$out" 2>&1
	rc=$?
	GODAT_VERBS_PARAMS=addr=$ADDR GODAT_RDMATEST_BOUND=10s "$GOTEST" -test.v -test.count=1 -test.run "$slow" >"$out.slow" 2>&1
	rc2=$?
	cat "$out" "$out.slow"
	go_verdict "$out" $rc "$out.slow" $rc2
}

# go_verdict LOG RC [LOG RC...]: the verdict on `go test -v` logs, their
# leaf tests' failures checked against $XFAIL; the counts go to $NOTE.
go_verdict() {
	local log rc name status p matched
	local -a pats=() unexpected=() xpassed=()
	local -A judged=() # programs with a failed or crashed case
	local passed=0 xfailed=0 skipped=0
	mapfile -t pats < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$XFAIL" | awk '{print $1}')
	# Leaf tests and their final status: a name that no other result line
	# extends with "/".
	declare -A st=()
	local -a logs=() rcs=()
	while [ $# -gt 0 ]; do
		logs+=("$1") rcs+=("$2")
		shift 2
	done
	for log in "${logs[@]}"; do
		while read -r status name; do st[$name]=$status; done < <(sed -n 's/^ *--- \(PASS\|FAIL\|SKIP\): \([^ ]*\) .*/\1 \2/p' "$log")
	done
	for name in "${!st[@]}"; do
		for p in "${!st[@]}"; do [[ $p == "$name"/* ]] && continue 2; done
		matched=
		for p in "${pats[@]}"; do [[ $name == $p ]] && matched=1 && break; done
		case ${st[$name]} in
		PASS) passed=$((passed + 1)); [ -n "$matched" ] && xpassed+=("$name") ;;
		SKIP) skipped=$((skipped + 1)) ;;
		FAIL) if [ -n "$matched" ]; then xfailed=$((xfailed + 1)); else unexpected+=("$name"); fi ;;
		esac
	done
	echo "$passed passed, $xfailed failed as vm/verbs-xfail.txt expects, $skipped skipped${xpassed[*]:+; passed though expected to fail: ${xpassed[*]}}" >"$NOTE"
	if [ ${#unexpected[@]} -gt 0 ]; then
		echo "unexpected failures: ${unexpected[*]}"
		return 1
	fi
	# A panic or a timeout ends a binary without its final PASS or FAIL.
	local i
	for i in "${!logs[@]}"; do
		grep -q '^\(PASS\|FAIL\)$' "${logs[$i]}" || { echo "${logs[$i]}: the test binary did not finish (exit status ${rcs[$i]})"; return 1; }
	done
	[ "$passed" -gt 0 ]
}

# The C man-page suite (ctest/run.sh: every test program and the pingpong
# example) over the verbs IA, godat-verbs of the repository's dat.conf (the
# first RDMA device with an active port: rxe0), its own network namespace
# and the hiding of rdma-core left out. Each program's cmocka output is
# read case by case: the failures vm/ctest-verbs-xfail.txt names (each
# with the device's reason) are expected, any other fails the step.
step_ctest_verbs() {
	local logs=$OUT/ctest_verbs rc
	rm -rf "$logs" && mkdir -p "$logs" || return 1
	ulimit -l unlimited 2>/dev/null
	CTEST_RDMA=1 GODAT_PRIVNET=1 CTEST_NETNS=0 CTEST_LOGDIR=$logs DAT_OVERRIDE=$repo/dat.conf \
		"$repo/ctest/run.sh" "$CBIN" godat-verbs | tee "$logs/run.out"
	rc=${PIPESTATUS[0]}
	ctest_verdict "$logs" godat-verbs $rc
}

# ctest_verdict DIR IA RC: the verdict on run.sh's per-program logs
# (DIR/PROGRAM.IA.log) case by case against $CXFAIL; counts to $NOTE.
ctest_verdict() {
	local dir=$1 ia=$2 rc=$3 log prog status name p matched
	local -a pats=() unexpected=() xpassed=()
	local -A judged=() # programs with a failed or crashed case
	local passed=0 xfailed=0 skipped=0 programs=0
	mapfile -t pats < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$CXFAIL" | awk '{print $1}')
	for log in "$dir"/*."$ia".log; do
		prog=$(basename "$log" ".$ia.log")
		programs=$((programs + 1))
		# cmocka: "[ RUN ] c", then "[ OK ] c", "[ FAILED ] c" or
		# "[ SKIPPED ] c" (the summary repeats the failed and skipped
		# ones); a case that ran without a verdict crashed or hung the
		# program. A case of a child process (pattern.h's roles, their
		# output in the same log) runs inside its parent's case: one
		# without a verdict before its parent's verdict was ended by the
		# parent (a peer SIGKILLed on purpose) and the parent's verdict
		# judges it, so it is not counted. A program without cmocka
		# (pingpong) is one case, its verdict run.sh's "FAILED:" line.
		while read -r status name; do
			matched=
			for p in "${pats[@]}"; do [[ $prog/$name == $p ]] && matched=1 && break; done
			case $status in
			OK) passed=$((passed + 1)); [ -n "$matched" ] && xpassed+=("$prog/$name") ;;
			SKIPPED) skipped=$((skipped + 1)) ;;
			*) judged[$prog]=1
				if [ -n "$matched" ]; then xfailed=$((xfailed + 1)); else unexpected+=("$prog/$name($status)"); fi ;;
			esac
		done < <(awk -v prog="$prog" -v ia="$ia" -v out="$dir/run.out" '
			function verdict(c, st,   k) {
				v[c] = st
				for (k = depth; k > 0 && stack[k] != c; k--) {}
				if (k == 0) return
				for (; depth > k; depth--) if (!(stack[depth] in v)) inner[stack[depth]] = 1
				depth--
			}
			/^\[ RUN      \] / { if (!($NF in seen)) order[++n] = $NF; seen[$NF] = 1; stack[++depth] = $NF; next }
			/^\[       OK \] / { verdict($NF, "OK"); next }
			/^\[  SKIPPED \] [0-9]+ test/ || /^\[  FAILED  \] [0-9]+ test/ { next }
			/^\[  SKIPPED \] / { verdict($NF, "SKIPPED"); next }
			/^\[  FAILED  \] / { verdict($NF, "FAILED"); next }
			END {
				for (i = 1; i <= n; i++) {
					if (!(order[i] in v) && (order[i] in inner)) continue
					print (order[i] in v ? v[order[i]] : "CRASHED"), order[i]
				}
				if (n == 0) {
					st = "OK"
					while ((getline l < out) > 0) if (index(l, "FAILED: " prog " [") == 1) st = "FAILED"
					print st, prog
				}
			}' "$log")
	done
	# A program that failed with every case OK (an exit status of its own);
	# one with a failed or crashed case is judged by that case.
	while read -r prog; do
		[ -n "${judged[$prog]:-}" ] && continue
		grep -q '^\[  \(FAILED\|ERROR\)' "$dir/$prog.$ia.log" 2>/dev/null && continue
		grep -q '^\[ RUN' "$dir/$prog.$ia.log" 2>/dev/null || continue
		unexpected+=("$prog(exit status with every case passed)")
	done < <(sed -n "s/^FAILED: \([^ ]*\) \[$ia\].*/\1/p" "$dir/run.out")
	echo "$programs programs: $passed cases passed, $xfailed failed as vm/ctest-verbs-xfail.txt expects, $skipped skipped${xpassed[*]:+; passed though expected to fail: ${xpassed[*]}}" >"$NOTE"
	if [ ${#unexpected[@]} -gt 0 ]; then
		echo "unexpected failures: ${unexpected[*]}"
		return 1
	fi
	[ "$passed" -gt 0 ] && [ "$programs" -gt 0 ]
}

# Client/server pairs, two processes on rxe0 over the verbs IA, a peer
# killed mid-transfer among them (vm/pairs.sh).
step_pairs() {
	ulimit -l unlimited 2>/dev/null
	DAT_OVERRIDE=$repo/dat.conf "$here/pairs.sh" "$CBIN" godat-verbs "$ADDR" || return 1
	echo "basic, server killed mid-transfer, client killed mid-transfer (xfer over godat-verbs)" >"$NOTE"
}

# dat_ia_query over the verbs IA reports the device's limits: datinfo -v
# godat-verbs against ibv_devinfo -v, attribute by attribute
# (vm/ia-query-check.py).
step_ia_query() {
	DAT_OVERRIDE=$repo/dat.conf "$repo/build/bin/datinfo" -v godat-verbs >"$OUT/ia_query.datinfo" 2>&1 || {
		cat "$OUT/ia_query.datinfo"
		return 1
	}
	ibv_devinfo -v -d "$DEV" >"$OUT/ia_query.devinfo" 2>&1 || return 1
	cat "$OUT/ia_query.datinfo"
	"$here/ia-query-check.py" "$OUT/ia_query.datinfo" "$OUT/ia_query.devinfo" | tee "$OUT/ia_query.cmp" || return 1
	tail -n1 "$OUT/ia_query.cmp" >"$NOTE"
}

# Registration beyond RLIMIT_MEMLOCK over the verbs IA (ctest/test_memlock.c):
# DAT_INSUFFICIENT_RESOURCES and a warn line naming the limit and how to
# raise it. Root holds CAP_IPC_LOCK, which lifts the limit: setpriv drops
# it, prlimit lowers the limit to 256 KiB.
step_memlock() {
	local kib=256 log=$OUT/memlock.out
	GODAT_TEST_IA=godat-verbs GODAT_TEST_MEMLOCK=$kib DAT_OVERRIDE=$repo/dat.conf \
		prlimit --memlock=$((kib * 1024)) setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- \
		"$CBIN/test_memlock" >"$log" 2>&1
	local rc=$?
	cat "$log"
	[ $rc -eq 0 ] || return 1
	grep -q '^\[  PASSED  \] 1 test' "$log" && ! grep -q SKIPPED "$log" || { echo "test_memlock did not run"; return 1; }
	echo "dat_lmr_create of 8 MiB under a $kib KiB RLIMIT_MEMLOCK without CAP_IPC_LOCK: DAT_INSUFFICIENT_RESOURCES, the limit and how to raise it logged" >"$NOTE"
}

# The same over Soft-iWARP when the harness could add siw0 (verbs-vm.sh --siw).
step_smoke_siw() {
	if [ -z "${VERBS_VM_SIW_DEV:-}" ]; then
		echo "no siw device: ${VERBS_VM_SIW_MISSING:-the VM was started without --siw}" >"$NOTE"
		return 77
	fi
	"$SMOKE" -a "$VERBS_VM_SIW_ADDR" -d "$VERBS_VM_SIW_DEV" -n 50 || return 1
	echo "50 x send/recv, RDMA write, RDMA read on $VERBS_VM_SIW_DEV" >"$NOTE"
}

# ---- runner -----------------------------------------------------------------

# guest-check.sh --step NAME: one step, as run (and bounded) by the loop below.
if [ "${1:-}" = --step ]; then
	NOTE=$OUT/$2.note
	"step_$2"
	exit
fi

verbose=
[ "${1:-}" = -v ] && verbose=1 && shift
[ $# -gt 0 ] && STEPS=("$@")
for s in "${STEPS[@]}"; do
	declare -F "step_$s" >/dev/null || { echo "guest-check: no step $s" >&2; exit 2; }
done
[ -x "$SMOKE" ] || { echo "FAIL: $SMOKE is not built (make check-verbs builds it)"; exit 1; }
[ -x "$GOTEST" ] || { echo "FAIL: $GOTEST is not built (make check-verbs builds it)"; exit 1; }

passed=0 failed=0 skipped=0
for s in "${STEPS[@]}"; do
	log=$OUT/$s.log
	rm -f "$OUT/$s.note"
	t0=${EPOCHREALTIME/./}
	tv=STEP_TIMEOUT_$s
	tmo=${!tv:-${STEP_TIMEOUT:-300}}
	timeout -k 5 "$tmo" "$0" --step "$s" >"$log" 2>&1
	rc=$?
	t=$((${EPOCHREALTIME/./} - t0))
	secs=$(printf '%d.%d s' $((t / 1000000)) $((t % 1000000 / 100000)))
	note=$(cat "$OUT/$s.note" 2>/dev/null)
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok $s ($secs)${note:+: $note}"
		[ -z "$verbose" ] || sed 's/^/    /' "$log"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "skip $s: $note"
	else
		failed=$((failed + 1))
		[ $rc -eq 124 ] && note="timed out after $tmo s"
		echo "FAIL $s ($secs, exit status $rc)${note:+: $note}"
		if [ -n "$verbose" ]; then sed 's/^/    /' "$log"; else tail -n 40 "$log" | sed 's/^/    /'; fi
	fi
done
echo "check-verbs: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
