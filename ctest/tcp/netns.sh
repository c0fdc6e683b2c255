#!/bin/sh
# TCP between two hosts, played by two network namespaces this script
# creates: a veth pair gd0<->gd0, 10.77.0.1/24 + fd77::1/64 in namespace A,
# 10.77.0.2/24 + fd77::2/64 in namespace B, nothing else. The xfer
# scenarios run server in A, client in B, over a dat.conf of our own
# (IA addresses by interface name and by IPv6 literal, timeout=3):
#   IPv4 and IPv6 exchanges, auto IAs (which must pick TCP: the peer is in
#   another network namespace), the server or the client SIGKILLed in the
#   middle of a transfer (the survivor sees the end and reconnects to a
#   restarted peer), and a silent partition (the link goes down under a
#   transfer: BROKEN within the timeout, then reconnect once it is back).
#   A basic client breaks two connections on purpose with remote access
#   violations before its last one (xfer.c): a server serves three
#   connections per basic client, and its END lines are checked in order.
# Then, with the repository's dat.conf as shipped (DAT_OVERRIDE names the
# file itself, unchanged), the entries a user gets: a godat-tcp and a godat
# server in A must report A's veth address (10.77.0.1) from dat_ia_query and
# serve a client in B that connects to that address, which in turn reports
# 10.77.0.2 (IA, EP and, at the server, dat_cr_query); and a godat client in
# A reaches a godat server in A, at 10.77.0.1 and at 127.0.0.1, through
# shared memory (no TCP connection on the server's port, while a godat-tcp
# client in A makes one).
# Everything is removed on exit. Without root (or without ip(8)) the test
# is skipped with a message.
#
# usage: netns.sh BINDIR    (BINDIR holds the xfer program; the shipped
#                            dat.conf is ../../dat.conf from this script)
set -u
BIN=${1:?usage: netns.sh BINDIR}
XFER=$BIN/xfer
HERE=$(cd "$(dirname "$0")" && pwd)
SHIPPED=$HERE/../../dat.conf

if [ "$(id -u)" != 0 ]; then
	echo "netns: SKIP: needs root to create network namespaces (run make check as root)"
	exit 0
fi
if ! command -v ip >/dev/null 2>&1; then
	echo "netns: SKIP: ip(8) from iproute2 is not installed"
	exit 0
fi

A=godatA$$
B=godatB$$
TMP=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! ip netns add "$A" 2>"$TMP/err"; then
	echo "netns: SKIP: cannot create a network namespace: $(cat "$TMP/err")"
	exit 0
fi
ip netns add "$B" &&
	ip link add gd0 netns "$A" type veth peer name gd0 netns "$B" &&
	ip -n "$A" addr add 10.77.0.1/24 dev gd0 &&
	ip -n "$B" addr add 10.77.0.2/24 dev gd0 &&
	ip -n "$A" -6 addr add fd77::1/64 dev gd0 nodad &&
	ip -n "$B" -6 addr add fd77::2/64 dev gd0 nodad &&
	ip -n "$A" link set lo up && ip -n "$B" link set lo up &&
	ip -n "$A" link set gd0 up && ip -n "$B" link set gd0 up || {
	echo "netns: FAIL: could not set up the namespaces"
	exit 1
}

cat >"$TMP/dat.conf" <<'EOF'
ns-tcp   u1.2 threadsafe default libdat.so.1 godat.1.0 "transport=tcp,addr=gd0,timeout=3" ""
ns-auto  u1.2 threadsafe default libdat.so.1 godat.1.0 "transport=auto,addr=gd0,timeout=3" ""
ns-tcp6a u1.2 threadsafe default libdat.so.1 godat.1.0 "transport=tcp,addr=fd77::1,timeout=3" ""
ns-tcp6b u1.2 threadsafe default libdat.so.1 godat.1.0 "transport=tcp,addr=fd77::2,timeout=3" ""
EOF
OWN=$TMP/dat.conf
export DAT_OVERRIDE="$OWN"

pass=0
failn=0
n=0

# run NS OUTFILE ARGS...: xfer in the background in namespace NS.
run() {
	ns=$1
	out=$2
	shift 2
	ip netns exec "$ns" "$XFER" "$@" >"$out" 2>&1 &
	LAST=$!
	PIDS="$PIDS $LAST"
}

# waitfor FILE PATTERN SECONDS [PID]: (and stop waiting once PID is gone)
waitfor() {
	i=0
	while [ "$i" -lt $(($3 * 10)) ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		if [ $# -gt 3 ] && ! kill -0 "$4" 2>/dev/null; then
			grep -q "$2" "$1" 2>/dev/null && return 0
			echo "netns: pid $4 ended without '$2' in $1:"
			sed 's/^/    /' "$1"
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "netns: no '$2' within $3 s in $1:"
	sed 's/^/    /' "$1"
	return 1
}

# finish PID SECONDS: the process must exit 0 within the bound.
finish() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		if [ "$i" -ge $(($2 * 10)) ]; then
			kill -9 "$1" 2>/dev/null
			echo "netns: pid $1 did not end within $2 s"
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
	wait "$1"
}

qual() { sed -n 's/^QUAL //p' "$1" | head -n1; }

# ends FILE END...: the server's END lines in FILE are exactly these.
ends() {
	f=$1
	shift
	got=$(sed -n 's/^END //p' "$f" | tr '\n' ',')
	want=$(printf '%s,' "$@")
	[ "$got" = "$want" ] && return 0
	echo "netns: server END lines in $f: '$got', want '$want'"
	return 1
}

# basic_ends FILE [END...]: the server's END lines are the given ones, then
# those of a basic client, which makes three connections (xfer.c): the
# first two end with its remote access violations, which break them, the
# third in order.
basic_ends() {
	f=$1
	shift
	ends "$f" "$@" "BROKEN ACCESS" "BROKEN ACCESS" DISCONNECTED
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# pair SERVER_IA CLIENT_IA SERVER_ADDR
pair() {
	n=$((n + 1))
	run "$A" "$TMP/s$n" server "$1" any 3
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 10 || return 1
	run "$B" "$TMP/c$n" client "$2" "$3" "$(qual "$TMP/s$n")" basic
	finish "$LAST" 60 || { sed 's/^/    /' "$TMP/c$n"; return 1; }
	grep '^client:' "$TMP/c$n" | sed 's/^/    /'
	waitfor "$TMP/s$n" '^END DISCONNECTED' 10 && finish "$s" 20 && basic_ends "$TMP/s$n"
}

kill_server() {
	n=$((n + 1))
	q=$((0x5eed00000000 + 20000 + $$ % 20000))
	run "$A" "$TMP/s$n" server ns-tcp "$q" 1
	waitfor "$TMP/s$n" '^QUAL ' 10 || return 1
	s=$LAST
	run "$B" "$TMP/c$n" client ns-tcp 10.77.0.1 "$q" survive
	c=$LAST
	waitfor "$TMP/c$n" STREAMING 20 || return 1
	t0=$(now_ms)
	kill -9 "$s"
	waitfor "$TMP/c$n" '^EVENT \(BROKEN\|DISCONNECTED\)' 10 || return 1
	echo "    client saw $(grep '^EVENT' "$TMP/c$n") about $(($(now_ms) - t0)) ms after the SIGKILL"
	run "$A" "$TMP/s$n.2" server ns-tcp "$q" 3
	waitfor "$TMP/c$n" RECONNECTED 40 && finish "$c" 20 &&
		waitfor "$TMP/s$n.2" '^END DISCONNECTED' 10 && finish "$LAST" 20 && basic_ends "$TMP/s$n.2"
}

kill_client() {
	n=$((n + 1))
	run "$A" "$TMP/s$n" server ns-tcp any 4
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 10 || return 1
	q=$(qual "$TMP/s$n")
	run "$B" "$TMP/c$n" client ns-tcp 10.77.0.1 "$q" stream
	waitfor "$TMP/c$n" STREAMING 20 || return 1
	t0=$(now_ms)
	kill -9 "$LAST"
	waitfor "$TMP/s$n" '^END BROKEN' 10 || return 1
	echo "    server saw END BROKEN about $(($(now_ms) - t0)) ms after the SIGKILL"
	run "$B" "$TMP/c$n.2" client ns-tcp 10.77.0.1 "$q" basic
	finish "$LAST" 60 && waitfor "$TMP/s$n" '^END DISCONNECTED' 10 && finish "$s" 20 &&
		basic_ends "$TMP/s$n" BROKEN
}

# The link under a transfer goes down: nothing more arrives, no FIN, no
# RST. Both sides must call the connection BROKEN within the timeout (3 s
# here), and reconnect once the link is back.
partition() {
	n=$((n + 1))
	run "$A" "$TMP/s$n" server ns-tcp any 4
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 10 || return 1
	run "$B" "$TMP/c$n" client ns-tcp 10.77.0.1 "$(qual "$TMP/s$n")" survive
	c=$LAST
	waitfor "$TMP/c$n" STREAMING 20 || return 1
	t0=$(now_ms)
	ip -n "$A" link set gd0 down
	waitfor "$TMP/c$n" '^EVENT BROKEN' 30 || return 1
	echo "    client saw BROKEN $(($(now_ms) - t0)) ms after the link went down (timeout=3)"
	waitfor "$TMP/s$n" '^END BROKEN' 30 || return 1
	echo "    server saw BROKEN $(($(now_ms) - t0)) ms after the link went down"
	ip -n "$A" link set gd0 up
	waitfor "$TMP/c$n" RECONNECTED 40 && finish "$c" 20 &&
		waitfor "$TMP/s$n" '^END DISCONNECTED' 10 && finish "$s" 20 && basic_ends "$TMP/s$n" BROKEN
}

# The veth addresses of A and B: the only non-loopback ones there.
AADDR=10.77.0.1
BADDR=10.77.0.2

# lines FILE KEY WANT: every "KEY ..." line of FILE says WANT, and there is one.
lines() {
	got=$(sed -n "s/^$2 //p" "$1" | sort -u | tr '\n' ' ')
	[ "$got" = "$3 " ] && return 0
	echo "netns: $2 lines in $1: '$got', want '$3'"
	return 1
}

# shipped IA: the shipped IA named IA between the namespaces: the server
# in A learns its address from dat_ia_query, the client in B connects to
# it and to the qualifier, and runs basic.
shipped() {
	n=$((n + 1))
	run "$A" "$TMP/s$n" server "$1" any 3
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 10 || return 1
	addr=$(sed -n 's/^ADDR //p' "$TMP/s$n")
	echo "    server ($1) in A: dat_ia_query reports $addr"
	ok=0
	if [ "$addr" != "$AADDR" ]; then
		echo "netns: the server's IA address is '$addr', want $AADDR (gd0, the only non-loopback address of A)"
		ok=1
		addr=$AADDR # see whether the listener is there at least
	fi
	run "$B" "$TMP/c$n" client "$1" "$addr" "$(qual "$TMP/s$n")" basic
	finish "$LAST" 60 || { sed 's/^/    /' "$TMP/c$n"; kill -9 "$s" 2>/dev/null; return 1; }
	grep '^client:' "$TMP/c$n" | sed 's/^/    /'
	waitfor "$TMP/s$n" '^END DISCONNECTED' 10 && finish "$s" 20 && basic_ends "$TMP/s$n" &&
		lines "$TMP/c$n" ADDR "$BADDR" && lines "$TMP/c$n" LOCAL "$BADDR" && lines "$TMP/s$n" PEER "$BADDR" &&
		return $ok
}

# waitn FILE PATTERN N SECONDS: FILE has N lines that match.
waitn() {
	i=0
	while [ "$i" -lt $(($4 * 10)) ]; do
		[ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "netns: not $3 lines '$2' within $4 s in $1:"
	sed 's/^/    /' "$1"
	return 1
}

# tcp_conns NS PORT: the TCP connections of namespace NS on PORT.
tcp_conns() {
	ip netns exec "$1" ss -Htn state established "( sport = :$2 or dport = :$2 )"
}

# shipped_local: a godat server and clients in A, all with the shipped
# dat.conf. godat clients that connect to the server's address and to
# 127.0.0.1 stream through shared memory: no TCP connection on the port
# serving the qualifier. A godat-tcp client makes one (the check sees TCP).
shipped_local() {
	n=$((n + 1))
	port=$((21000 + $$ % 10000))
	q=$((0x5eed00010000 + port)) # served on TCP port q mod 65536 (README)
	run "$A" "$TMP/s$n" server godat "$q" 3
	s=$LAST
	waitfor "$TMP/s$n" '^QUAL ' 10 || return 1
	k=0
	for c in "godat $AADDR shm" "godat 127.0.0.1 shm" "godat-tcp $AADDR tcp"; do
		set -- $c
		k=$((k + 1))
		run "$A" "$TMP/c$n.$k" client "$1" "$2" "$q" stream
		cl=$LAST
		waitfor "$TMP/c$n.$k" STREAMING 20 "$cl" || { kill -9 "$s" "$cl" 2>/dev/null; return 1; }
		conns=$(tcp_conns "$A" "$port")
		kill -9 "$cl"
		waitn "$TMP/s$n" '^END BROKEN$' "$k" 10 || { kill -9 "$s" 2>/dev/null; return 1; }
		if [ "$3" = shm ] && [ -n "$conns" ]; then
			echo "netns: $1 client to $2 in the server's namespace used TCP (port $port):"
			echo "$conns" | sed 's/^/    /'
			kill -9 "$s" 2>/dev/null
			return 1
		fi
		if [ "$3" = tcp ] && [ -z "$conns" ]; then
			echo "netns: $1 client to $2: no TCP connection on port $port seen (the check is blind)"
			kill -9 "$s" 2>/dev/null
			return 1
		fi
		echo "    $1 client to $2: $3"
	done
	finish "$s" 20
}

check() {
	name=$1
	shift
	if "$@"; then
		echo "netns: ok   $name"
		pass=$((pass + 1))
	else
		echo "netns: FAIL $name"
		failn=$((failn + 1))
	fi
}

check "IPv4 exchange between namespaces (IA address by interface name)" pair ns-tcp ns-tcp 10.77.0.1
check "IPv6 exchange between namespaces" pair ns-tcp6a ns-tcp6b fd77::1
check "auto IAs in two namespaces use TCP" pair ns-auto ns-auto 10.77.0.1
check "server SIGKILLed mid-transfer; client reconnects to the restarted server" kill_server
check "client SIGKILLed mid-transfer; server serves the next client" kill_client
check "silent partition detected within the timeout; reconnect after it heals" partition

export DAT_OVERRIDE="$SHIPPED"
echo "netns: the shipped dat.conf: $SHIPPED"
check "shipped godat-tcp: a client in B reaches a server in A at its dat_ia_query address" shipped godat-tcp
check "shipped godat: a client in B reaches a server in A at its dat_ia_query address, over TCP" shipped godat
check "shipped godat: clients in A reach a server in A through shared memory at 10.77.0.1 and 127.0.0.1" shipped_local
export DAT_OVERRIDE="$OWN"

echo "netns: $pass passed, $failn failed"
[ "$failn" -eq 0 ]
