#!/bin/sh
# Runs the C suite once per IA: every test program (BINDIR/test_*) and the
# pingpong example with GODAT_TEST_IA set to the IA (the programs open it as
# "the IA under test"), then, once, the two-namespace TCP script, which
# writes its own dat.conf. Each program is bounded (timeout). Every failure
# is named with its IA as it happens and again in the summary; the exit
# status is 1 when anything failed.
#
# usage: run.sh BINDIR IA...     (the environment carries PKG_CONFIG_PATH,
#                                 DAT_OVERRIDE and any sanitizer options;
#                                 CTEST_TAG, e.g. asan, prefixes the IA in
#                                 every line that names one; CTEST_LOGDIR
#                                 sends each program's output to
#                                 DIR/PROGRAM.IA.log instead of stdout)
set -u
[ $# -gt 1 ] || { echo "usage: run.sh BINDIR IA..." >&2; exit 2; }

# The suite runs in a network namespace of its own when it can (root):
# tools/privnet.sh. Elsewhere the cases that need an unreachable address
# say SKIP when a route exists (noroute.h).
[ -n "${GODAT_PRIVNET:-}" ] || exec "$(dirname "$0")/../tools/privnet.sh" "$0" "$@"
# And as on a machine without rdma-core (tools/nordma.sh hides its libraries):
# the software transports must not need them. CTEST_RDMA=1 keeps them, for
# a run over a verbs IA (the verbs VM).
[ -n "${GODAT_NORDMA:-}${CTEST_RDMA:-}" ] || exec "$(dirname "$0")/../tools/nordma.sh" "$0" "$@"

BIN=$1
shift
HERE=$(cd "$(dirname "$0")" && pwd)
export GODAT_CTEST_BIN="$BIN"
tag=${CTEST_TAG:+$CTEST_TAG }

failed=""
summary=""
total_fail=0
start_all=$(date +%s)

# run LABEL IA LIMIT PROGRAM [ARGS]: runs one program, counts it.
run() {
	label=$1 ia=$2 limit=$3
	shift 3
	if [ -n "${CTEST_LOGDIR:-}" ]; then
		# One log per program and IA (the verbs VM reads the cases).
		GODAT_TEST_IA=$ia timeout "$limit" "$@" >"$CTEST_LOGDIR/${label##*/}.$ia.log" 2>&1
	else
		GODAT_TEST_IA=$ia timeout "$limit" "$@"
	fi
	rc=$?
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
	else
		why="exit $rc"
		[ $rc -eq 124 ] && why="timed out after ${limit}s"
		echo "FAILED: $label [$tag$ia] ($why)"
		fail=$((fail + 1))
		failed="$failed
  $label [$tag$ia] ($why)"
	fi
}

for ia in "$@"; do
	pass=0 fail=0
	t0=$(date +%s)
	echo "=== C suite over $ia${CTEST_TAG:+ ($CTEST_TAG)}"
	for t in "$BIN"/test_*; do
		run "$(basename "$t")" "$ia" 300 "$t"
	done
	run pingpong "$ia" 120 "$BIN/pingpong" "$ia"
	line="ctest programs [$tag$ia]: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
	echo "$line"
	summary="$summary
$line"
	total_fail=$((total_fail + fail))
done

# Between hosts: its own namespaces and IAs, so once, not per IA
# (CTEST_NETNS=0 leaves it out: the verbs VM runs the suite over its
# device only).
if [ "${CTEST_NETNS:-1}" != 0 ]; then
	pass=0 fail=0
	run tcp/netns.sh "own IAs" 300 "$HERE/tcp/netns.sh" "$BIN"
	line="ctest programs [${tag}netns, own IAs]: $pass passed, $fail failed"
	echo "$line"
	summary="$summary
$line"
	total_fail=$((total_fail + fail))
fi

echo
echo "=== C suite summary${CTEST_TAG:+ ($CTEST_TAG)} ($(($(date +%s) - start_all)) s)$summary"
if [ "$total_fail" -ne 0 ]; then
	echo "failed programs:$failed"
	exit 1
fi
