#!/bin/sh
# deps.sh - the Debian packages that building and testing godat need, in one
# place: `make example` and `make check` run it first (and so does CI,
# through `make check`).
#
#   tools/deps.sh          install what is missing when run as root; when
#                          not root, print the apt-get line to run and fail
#   tools/deps.sh --list   print the package list, one a line
#
# The Go toolchain is not a Debian package here (Debian 12's Go is older than
# go.mod asks for): go on PATH, or the Go distribution's /usr/local/go, 1.26 or
# later; the Makefile's GOTOOLCHAIN=auto has it fetch the toolchain go.mod names.
set -eu

# Why each is needed:
#   make gcc g++ libc6-dev binutils  cgo, the C tests, headers as C++, nm/readelf
#   pkg-config                       every C program finds libdat through dat.pc
#   libcmocka-dev                    the C tests
#   iproute2                         ip(8): the TCP tests between namespaces
#   man-db                           man -l checks the installed man pages
#   ca-certificates                  go fetches the modules of go.sum over https
#   libibverbs-dev librdmacm-dev     the headers rdma/verbs compiles against (go test
#                                    ./rdma/...); the libraries are dlopened, never linked
PACKAGES="make gcc g++ libc6-dev binutils pkg-config libcmocka-dev iproute2 man-db ca-certificates libibverbs-dev librdmacm-dev"

if [ "${1:-}" = --list ]; then
	for p in $PACKAGES; do echo "$p"; done
	exit 0
fi

if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "deps: no Go toolchain: neither go on PATH nor /usr/local/go/bin/go;" >&2
	echo "deps: install the Go distribution (1.26 or later; go.mod names the toolchain) into /usr/local/go" >&2
	exit 1
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system; make sure these are installed: $PACKAGES" >&2
	exit 0
fi

missing=
for p in $PACKAGES; do
	st=$(dpkg-query -W -f '${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case $st in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages; as root, run:" >&2
	echo "    apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # a list of package names
apt-get install -y -qq --no-install-recommends $missing
