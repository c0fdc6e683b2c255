#!/bin/sh
# privnet.sh COMMAND [ARG...] - runs COMMAND in a network namespace of its
# own, with loopback up and nothing else, when it can (root, and unshare(1)
# works here); otherwise runs it where it is. make check's tests use it so
# that they behave alike on every machine (an address with no route is
# unreachable, not answered by a gateway) and listen on no host address.
# GODAT_PRIVNET is set for COMMAND either way, so a nested call (or a
# script that calls this on itself) runs its command directly.
if [ -z "${GODAT_PRIVNET:-}" ] && [ "$(id -u)" = 0 ] &&
	unshare -n true 2>/dev/null && command -v ip >/dev/null; then
	export GODAT_PRIVNET=1
	exec unshare -n sh -c 'ip link set lo up && exec "$@"' privnet "$@"
fi
export GODAT_PRIVNET=1
exec "$@"
