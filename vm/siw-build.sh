#!/bin/bash
# siw-build.sh KVER CACHEDIR: print the path of a Soft-iWARP module (siw.ko)
# for the Debian kernel KVER, building it once if needed.
#
# Debian builds its kernels without CONFIG_RDMA_SIW, but the driver is
# self-contained: it builds out of tree from linux-source-<major.minor> (the
# same Debian version as the kernel image) against linux-headers-KVER. The
# result is cached as CACHEDIR/<KVER>-<source version>-<hash of this
# script>/siw.ko. Progress goes to stderr; on failure the last line on stderr
# says why and the exit status is 1.

set -u
kver=${1:?usage: siw-build.sh KVER CACHEDIR}
cache=${2:?usage: siw-build.sh KVER CACHEDIR}
fail() {
	echo "$*" >&2
	exit 1
}

installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }

img_ver=$(dpkg-query -W -f='${Version}' "linux-image-$kver" 2>/dev/null) ||
	fail "siw: linux-image-$kver is not installed"
series=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
src=linux-source-$series
hdr=linux-headers-$kver

need=()
installed "$hdr" || need+=("$hdr")
if ! installed "$src"; then
	# The source of exactly this kernel when the archive still has it.
	if apt-cache show "$src=$img_ver" >/dev/null 2>&1; then need+=("$src=$img_ver"); else need+=("$src"); fi
fi
for t in gcc make; do command -v $t >/dev/null || need+=("$t"); done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || fail "siw: ${need[*]} not installed and not root to install them"
	echo "siw: installing ${need[*]}" >&2
	apt=(apt-get -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends install "${need[@]}")
	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >&2; then
		# An old or empty package list is the usual cause: refresh it once.
		apt-get -q -o DPkg::Lock::Timeout=600 update >&2
		DEBIAN_FRONTEND=noninteractive "${apt[@]}" >&2 || fail "siw: apt-get install ${need[*]} failed"
	fi
fi
src_ver=$(dpkg-query -W -f='${Version}' "$src")
[ "$src_ver" = "$img_ver" ] || echo "siw: warning: $src $src_ver is not the kernel's $img_ver" >&2

key=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
dir=$cache/$kver-$src_ver-$key
if [ -s "$dir/siw.ko" ]; then
	echo "$(cd "$dir" && pwd -P)/siw.ko"
	exit 0
fi

tarball=$(ls /usr/src/"$src".tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || fail "siw: no /usr/src/$src.tar.*"
[ -d "/lib/modules/$kver/build" ] || fail "siw: no /lib/modules/$kver/build"

mkdir -p "$cache" && cache=$(cd "$cache" && pwd -P) || fail "siw: cannot create $cache"
exec {lock}>"$cache/.lock"
flock "$lock"
dir=$cache/$kver-$src_ver-$key
[ -s "$dir/siw.ko" ] && { echo "$dir/siw.ko"; exit 0; }
tmp=$cache/.build.$$
rm -rf "$tmp" && mkdir -p "$tmp" || fail "siw: cannot create $tmp"
trap 'rm -rf "$tmp"' EXIT
echo "siw: extracting drivers/infiniband/sw/siw from $tarball" >&2
tar -xf "$tarball" -C "$tmp" --strip-components=4 --wildcards "$src/drivers/infiniband/sw/siw/*" ||
	fail "siw: cannot extract the siw sources from $tarball"
echo "siw: building against /lib/modules/$kver/build" >&2
make -C "/lib/modules/$kver/build" M="$tmp/siw" CONFIG_RDMA_SIW=m modules >"$tmp/make.log" 2>&1 ||
	{ tail -n 20 "$tmp/make.log" >&2; fail "siw: the module build failed"; }
[ "$(modinfo -F vermagic "$tmp/siw/siw.ko" | cut -d' ' -f1)" = "$kver" ] ||
	fail "siw: the module's vermagic is not $kver"
find "$cache" -mindepth 1 -maxdepth 1 -name "$kver-*" -exec rm -rf {} +
# Without its debug information (5 MB to 0.3): the guest reads it over 9p.
strip --strip-debug "$tmp/siw/siw.ko" || fail "siw: cannot strip siw.ko"
mkdir -p "$dir" && cp "$tmp/siw/siw.ko" "$dir/siw.ko" || fail "siw: cannot store the module in $dir"
echo "$dir/siw.ko"
