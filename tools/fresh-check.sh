#!/usr/bin/env bash
# fresh-check.sh [REPO] - runs the README's two commands, `make example` and
# `make check`, as a new user would: in a fresh Debian 12 root, from a clean
# clone of REPO's committed HEAD (uncommitted changes are not seen).
#
# The root is made with mmdebstrap (minbase, plus make and git: a user who
# cloned the project has both) from the Debian mirror this machine's apt
# uses. The Go toolchain is this machine's /usr/local/go, bind-mounted
# read-only where the Go distribution installs it, and is not on PATH: the
# Makefile must find it. Everything runs as root under chroot, in new mount,
# PID and network namespaces: the tests' loopback addresses and abstract
# sockets are private, and slirp4netns gives the namespace a user-mode route
# out so that `make check` can apt-get its packages and go can fetch modules.
#
# Needs root. Installs mmdebstrap and slirp4netns on this machine when they
# are missing. Prints how long each command took; exits non-zero when either
# fails. The root is deleted afterwards (after checking nothing is mounted in
# it); the logs stay in REPO/build/fresh/. This machine's local CA
# certificates (/usr/local/share/ca-certificates: a network that intercepts
# TLS) are copied into the root, as a site would configure a new machine, so
# that go can fetch modules once `make check` has installed ca-certificates. Not part of `make check`: it runs
# `make check` itself, from scratch, and takes long.
set -euo pipefail

REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "fresh-check: needs root (mmdebstrap, chroot, namespaces)" >&2
	exit 2
fi
if [ ! -x /usr/local/go/bin/go ]; then
	echo "fresh-check: needs the Go distribution in /usr/local/go" >&2
	exit 2
fi
need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v slirp4netns >/dev/null || need+=(slirp4netns)
command -v ip >/dev/null || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# The Debian suites this machine's apt uses (main only, as a fresh install).
mapfile -t sources < <(apt-get indextargets --format '$(ORIGIN) $(SITE) $(RELEASE)' |
	awk '$1 == "Debian" && $3 ~ /^bookworm/ { print "deb " $2 " " $3 " main" }' | sort -u)
if [ ${#sources[@]} -eq 0 ]; then
	sources=("deb http://deb.debian.org/debian bookworm main")
fi

LOGS=$REPO/build/fresh
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log
T=$(mktemp -d /tmp/godat-fresh-XXXXXX)
ROOT=$T/root
SLIRP=
cleanup() {
	[ -n "$SLIRP" ] && kill "$SLIRP" 2>/dev/null
	# The namespaces' mounts die with them; never delete through a mount
	# (the Go toolchain is bind-mounted in there).
	if grep -qF " $T/" /proc/self/mountinfo; then
		echo "fresh-check: $T still has mounts; not deleting it" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

echo "fresh-check: bootstrapping Debian bookworm (minbase + make, git) from: ${sources[*]}"
t0=$SECONDS
mmdebstrap --quiet --mode=root --variant=minbase --include=make,git bookworm "$ROOT" "${sources[@]}"
echo "fresh-check: root ready in $((SECONDS - t0)) s"
git clone -q --no-hardlinks "$REPO" "$ROOT/src"
git -C "$ROOT/src" checkout -q --detach "$(git -C "$REPO" rev-parse HEAD)"
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
	mkdir -p "$ROOT/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
echo "fresh-check: clean clone of $(git -C "$REPO" rev-parse --short HEAD) in /src"

# Runs inside the new namespaces, outside the chroot, as PID 1 there.
inner=$(cat <<'INNER'
set -eu
root=$1
# slirp4netns writes one byte to the fifo once it has configured tap0.
ready=$(timeout 120 head -c1 <"$2" || true)
if [ "$ready" != 1 ] || ! ip route | grep -q '^default'; then
	echo "fresh-check: slirp4netns did not give the namespace a route out" >&2
	exit 1
fi
ip link set lo up
# The root must be a mount point, as / is on a machine: ip netns add makes
# / a slave mount.
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t tmpfs -o mode=0755 tmpfs "$root/dev"
mknod -m 666 "$root/dev/null" c 1 3
mknod -m 666 "$root/dev/zero" c 1 5
mknod -m 666 "$root/dev/full" c 1 7
mknod -m 666 "$root/dev/random" c 1 8
mknod -m 666 "$root/dev/urandom" c 1 9
mknod -m 666 "$root/dev/tty" c 5 0
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
mkdir "$root/dev/shm" "$root/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mkdir -p "$root/usr/local/go"
mount --bind /usr/local/go "$root/usr/local/go"
mount -o remount,bind,ro "$root/usr/local/go"
echo "nameserver 10.0.2.3" > "$root/etc/resolv.conf"
exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c '
	cd /src
	command -v go >/dev/null && { echo "fresh-check: go is on PATH in the fresh root" >&2; exit 1; }
	rc=0
	for cmd in example check; do
		start=$(date +%s)
		if make $cmd > /fresh-$cmd.log 2>&1; then r=0; else r=$?; rc=1; fi
		echo "$cmd $r $(( $(date +%s) - start ))" >> /fresh-times
	done
	exit $rc
'
INNER
)

echo "fresh-check: running make example, then make check, in the fresh root (logs: $LOGS)"
mkfifo "$T/ready"
unshare --mount --net --pid --fork --kill-child bash -c "$inner" inner "$ROOT" "$T/ready" &
NS=$!
slirp4netns --configure --mtu=65520 --disable-host-loopback --ready-fd=3 "$NS" tap0 \
	>"$LOGS/slirp.log" 2>&1 3>"$T/ready" &
SLIRP=$!
rc=0
wait "$NS" || rc=$?

for cmd in example check; do
	[ -f "$ROOT/fresh-$cmd.log" ] && cp "$ROOT/fresh-$cmd.log" "$LOGS/make-$cmd.log"
done
echo "fresh-check: last lines of make check:"
tail -25 "$LOGS/make-check.log" 2>/dev/null | sed 's/^/    /'
pass=0
fail=0
if [ -f "$ROOT/fresh-times" ]; then
	while read -r cmd r s; do
		if [ "$r" = 0 ]; then
			verdict=passed
			pass=$((pass + 1))
		else
			verdict="FAILED (exit $r)"
			fail=$((fail + 1))
		fi
		printf 'fresh-check: make %-7s %s in %d min %02d s\n' "$cmd" "$verdict" $((s / 60)) $((s % 60))
	done <"$ROOT/fresh-times"
fi
[ $((pass + fail)) -eq 2 ] || echo "fresh-check: the fresh root did not run both commands (exit $rc)"
echo "fresh-check: $pass passed, $fail failed"
[ "$rc" -eq 0 ] && [ "$pass" -eq 2 ]
