#!/bin/bash
# pairs.sh: uDAPL client/server pairs over the verbs IA, two processes on
# one RDMA device (run inside the verbs VM by guest-check.sh's pairs step;
# rxe loops traffic between two processes on its device back itself).
# The pair program is ctest/tcp/xfer.c, the one the TCP tests use between
# network namespaces (ctest/tcp/netns.sh), here over IA at ADDR:
#   basic        one server, one basic client: private data, RDMA write,
#                send, RDMA read, two connections broken on purpose by
#                remote access violations, 100 ping-pongs, 8 x 1 MiB echoes,
#                graceful disconnect; the server's END lines checked;
#   kill_server  the server SIGKILLed while a client streams 256 KiB
#                echoes: the client sees the connection end, reconnects to a
#                restarted server and runs basic;
#   kill_client  the client SIGKILLed mid-stream: the server sees the
#                connection end and serves the next client (basic).
# A dead peer: the kernel's rdma_cm disconnects its ids for it (a DREQ),
# which the survivor cannot tell from an orderly disconnect, so either
# BROKEN or DISCONNECTED ends the connection (vm/verbs-xfail.txt,
# Peer/Killed*). Every wait is bounded.
#
#   vm/pairs.sh BINDIR IA ADDR
set -u
BIN=${1:?usage: pairs.sh BINDIR IA ADDR}
IA=${2:?usage: pairs.sh BINDIR IA ADDR}
ADDR=${3:?usage: pairs.sh BINDIR IA ADDR}
XFER=$BIN/xfer
export XFER_NO_ACCESS_EVENT=1
TMP=$(mktemp -d)
PIDS=
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# run OUTFILE ARGS...: xfer in the background.
run() {
	out=$1
	shift
	"$XFER" "$@" >"$out" 2>&1 &
	LAST=$!
	PIDS="$PIDS $LAST"
}

# waitfor FILE PATTERN SECONDS [PID]: PATTERN in FILE (stop once PID is gone).
waitfor() {
	local i=0
	while [ "$i" -lt $(($3 * 20)) ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		if [ $# -gt 3 ] && ! kill -0 "$4" 2>/dev/null; then
			grep -q "$2" "$1" 2>/dev/null && return 0
			echo "pairs: pid $4 ended without '$2' in $1:"
			sed 's/^/    /' "$1"
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "pairs: no '$2' within $3 s in $1:"
	sed 's/^/    /' "$1"
	return 1
}

# finish PID SECONDS: the process exits 0 within the bound.
finish() {
	local i=0
	while kill -0 "$1" 2>/dev/null; do
		if [ "$i" -ge $(($2 * 20)) ]; then
			kill -9 "$1" 2>/dev/null
			echo "pairs: pid $1 did not end within $2 s"
			return 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
	wait "$1"
}

# waitn FILE PATTERN N SECONDS: N lines of FILE match PATTERN.
waitn() {
	local i=0
	while [ "$i" -lt $(($4 * 20)) ]; do
		[ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "pairs: fewer than $3 lines '$2' within $4 s in $1:"
	sed 's/^/    /' "$1"
	return 1
}

qual() { sed -n 's/^QUAL //p' "$1" | head -n1; }

# ends FILE REGEX...: the server's END lines, in order, match these.
ends() {
	local f=$1 got
	shift
	got=$(sed -n 's/^END //p' "$f" | tr '\n' ',')
	want=$(printf '%s,' "$@")
	[[ $got =~ ^$want$ ]] && return 0
	echo "pairs: server END lines in $f: '$got', want '$want'"
	return 1
}
BASIC=("BROKEN ACCESS" "BROKEN ACCESS" DISCONNECTED)
DEAD="(BROKEN|DISCONNECTED)"
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

n=0
basic() {
	n=$((n + 1))
	run "$TMP/s$n" server "$IA" any 3
	local s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 60 "$s" || return 1
	run "$TMP/c$n" client "$IA" "$ADDR" "$(qual "$TMP/s$n")" basic
	finish "$LAST" 120 || { sed 's/^/    /' "$TMP/c$n"; return 1; }
	grep '^client:' "$TMP/c$n" | sed 's/^/    /'
	waitfor "$TMP/s$n" '^END DISCONNECTED' 20 && finish "$s" 20 && ends "$TMP/s$n" "${BASIC[@]}"
}

kill_server() {
	n=$((n + 1))
	local q=$((0x5eed00000000 + 20000 + $$ % 20000)) s c t0
	run "$TMP/s$n" server "$IA" "$q" 1
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 60 "$s" || return 1
	run "$TMP/c$n" client "$IA" "$ADDR" "$q" survive
	c=$LAST
	waitfor "$TMP/c$n" STREAMING 60 "$c" || return 1
	t0=$(now_ms)
	kill -9 "$s"
	waitfor "$TMP/c$n" '^EVENT \(BROKEN\|DISCONNECTED\)' 30 "$c" || return 1
	echo "    client saw $(grep '^EVENT' "$TMP/c$n") about $(($(now_ms) - t0)) ms after the SIGKILL"
	run "$TMP/s$n.2" server "$IA" "$q" 3
	waitfor "$TMP/c$n" RECONNECTED 60 "$c" && finish "$c" 60 &&
		waitfor "$TMP/s$n.2" '^END DISCONNECTED' 20 && finish "$LAST" 20 && ends "$TMP/s$n.2" "${BASIC[@]}"
}

kill_client() {
	n=$((n + 1))
	local s q t0
	run "$TMP/s$n" server "$IA" any 4
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 60 "$s" || return 1
	q=$(qual "$TMP/s$n")
	run "$TMP/c$n" client "$IA" "$ADDR" "$q" stream
	waitfor "$TMP/c$n" STREAMING 60 "$LAST" || return 1
	t0=$(now_ms)
	kill -9 "$LAST"
	waitfor "$TMP/s$n" '^END ' 30 "$s" || return 1
	echo "    server saw $(grep '^END' "$TMP/s$n") about $(($(now_ms) - t0)) ms after the SIGKILL"
	run "$TMP/c$n.2" client "$IA" "$ADDR" "$q" basic
	finish "$LAST" 120 && waitn "$TMP/s$n" '^END ' 4 20 && finish "$s" 20 &&
		ends "$TMP/s$n" "$DEAD" "${BASIC[@]}"
}

pass=0 failn=0
for t in basic kill_server kill_client; do
	if "$t"; then
		echo "pairs: ok   $t"
		pass=$((pass + 1))
	else
		echo "pairs: FAIL $t"
		failn=$((failn + 1))
	fi
done
echo "pairs: $pass passed, $failn failed"
[ "$failn" -eq 0 ]
