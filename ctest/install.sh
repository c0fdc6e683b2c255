#!/bin/sh
# install.sh REPO - checks `make install` as a user would run it.
#
# A copy of the source tree (without build/ and .git) is built and installed
# with PREFIX=<tmp>/prefix, so the library's compiled-in sysconfdir is that
# prefix's etc/ and the repository's own build/ is never touched. Then:
# the installed files and symlinks, the installed dat.pc through pkg-config,
# a consumer (ctest/examples/child_exec.c) built only from
# `pkg-config --cflags --libs dat` that runs against the installed library
# and finds the installed dat.conf with and without DAT_OVERRIDE, the
# installed datinfo (it finds that library and that dat.conf), the man pages
# (they render without warnings), and a staged install (PREFIX=/usr
# DESTDIR=<tmp>/stage).
#
# Prints "install: N passed, M failed"; exits non-zero on any failure.
# Every step is bounded by timeout(1).

set -u

REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 2
T=$(mktemp -d /tmp/godat-install-XXXXXX) || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
P=$T/prefix
SRC=$T/src
LOG=$T/log

pass=0
fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "install: FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
	what=$1; shift
	if "$@" >"$LOG" 2>&1; then ok; else bad "$what"; sed 's/^/    /' "$LOG" | tail -20; fi
}
summary() {
	echo "install: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit $?
}

# make must not inherit settings from an enclosing make or the caller's
# environment (the Makefile takes PREFIX and friends with ?=).
MAKE_ENV="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PREFIX -u DESTDIR -u LIBDIR -u INCLUDEDIR -u SYSCONFDIR"

# --- 1. install with PREFIX=<tmp>/prefix from a copy of the sources ----------
mkdir -p "$SRC"
check "copy the source tree" sh -c "cd '$REPO' && tar --exclude=./build --exclude=./.git -cf - . | tar -C '$SRC' -xf -"
if ! timeout 600 $MAKE_ENV make -C "$SRC" install PREFIX="$P" >"$LOG" 2>&1; then
	bad "make install PREFIX=$P"
	tail -30 "$LOG" | sed 's/^/    /'
	summary
fi
ok

# --- 2. the installed files --------------------------------------------------
check "lib/libdat.so.1.2.0 is an executable regular file" \
	sh -c "[ -f '$P/lib/libdat.so.1.2.0' ] && [ ! -L '$P/lib/libdat.so.1.2.0' ] && [ -x '$P/lib/libdat.so.1.2.0' ]"
check "lib/libdat.so.1 -> libdat.so.1.2.0" \
	sh -c "[ -L '$P/lib/libdat.so.1' ] && [ \"\$(readlink '$P/lib/libdat.so.1')\" = libdat.so.1.2.0 ]"
check "lib/libdat.so -> libdat.so.1" \
	sh -c "[ -L '$P/lib/libdat.so' ] && [ \"\$(readlink '$P/lib/libdat.so')\" = libdat.so.1 ]"
if command -v readelf >/dev/null 2>&1; then
	check "the installed library's SONAME is libdat.so.1" \
		sh -c "readelf -d '$P/lib/libdat.so.1.2.0' | grep -q 'SONAME.*\\[libdat.so.1\\]'"
fi
# Every header of the source tree, and nothing else, under include/dat/.
nh=0
for h in "$REPO"/include/dat/*.h; do
	nh=$((nh + 1))
	check "include/dat/$(basename "$h") installed, same content" cmp "$h" "$P/include/dat/$(basename "$h")"
done
check "10 headers in the source tree ($nh)" [ "$nh" -eq 10 ]
check "exactly the $nh headers installed" [ "$(ls "$P/include/dat" | wc -l)" -eq "$nh" ]
check "include/dat/udat.h installed" [ -f "$P/include/dat/udat.h" ]
check "etc/dat.conf is the repository's dat.conf" cmp "$REPO/dat.conf" "$P/etc/dat.conf"
check "lib/pkgconfig/dat.pc installed" [ -f "$P/lib/pkgconfig/dat.pc" ]
check "bin/datinfo is an executable regular file" sh -c "[ -f '$P/bin/datinfo' ] && [ -x '$P/bin/datinfo' ]"
check "share/man/man1/datinfo.1 is the repository's" cmp "$REPO/man/datinfo.1" "$P/share/man/man1/datinfo.1"
check "share/man/man7/godat.7 is the repository's" cmp "$REPO/man/godat.7" "$P/share/man/man7/godat.7"
# The man pages render without a warning from man or groff.
for page in man1/datinfo.1 man7/godat.7; do
	if command -v man >/dev/null 2>&1; then
		check "man -l $page renders without warnings" \
			sh -c "out=\$(MANWIDTH=80 man -l --warnings '$P/share/man/$page' 2>&1 >/dev/null) && [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
		check "man -l $page prints its NAME section" sh -c "MANWIDTH=80 man -l '$P/share/man/$page' 2>/dev/null | grep -q '^NAME'"
	else
		bad "man(1) is not installed: cannot check $page (tools/deps.sh installs man-db)"
	fi
done

# --- 3. pkg-config on the installed dat.pc ----------------------------------
PC="env PKG_CONFIG_PATH=$P/lib/pkgconfig PKG_CONFIG_LIBDIR=$P/lib/pkgconfig pkg-config"
flags=$($PC --cflags --libs dat 2>"$LOG") || { bad "pkg-config --cflags --libs dat"; cat "$LOG"; }
echo "install: pkg-config --cflags --libs dat: $flags"
check "cflags name the installed include dir" sh -c "echo ' $flags ' | grep -q -- ' -I$P/include '"
check "libs name the installed lib dir" sh -c "echo ' $flags ' | grep -q -- ' -L$P/lib '"
check "libs set an rpath to the installed lib dir" sh -c "echo '$flags' | grep -q -- '-rpath,$P/lib'"
check "libs link -ldat" sh -c "echo ' $flags ' | grep -q -- ' -ldat '"
check "no path of the source tree in the flags" sh -c "! echo '$flags' | grep -q -- '$REPO\\|$SRC'"
check "pkg-config --modversion dat is 1.2.0" [ "$($PC --modversion dat 2>/dev/null)" = 1.2.0 ]
check "sysconfdir variable is the prefix's etc" [ "$($PC --variable=sysconfdir dat 2>/dev/null)" = "$P/etc" ]

# --- 4. a consumer built from pkg-config alone, run against the install ------
# shellcheck disable=SC2086 # $flags is a list of words
check "cc child_exec.c \$(pkg-config --cflags --libs dat)" \
	timeout 120 ${CC:-cc} -O2 -Wall -Wextra -Werror -std=gnu11 -o "$T/child_exec" "$REPO/ctest/examples/child_exec.c" $flags
if [ -x "$T/child_exec" ]; then
	if command -v ldd >/dev/null 2>&1; then
		check "the consumer resolves libdat.so.1 in the installed lib dir" \
			sh -c "env -u LD_LIBRARY_PATH ldd '$T/child_exec' | grep -q 'libdat.so.1 => $P/lib/libdat.so.1'"
	fi
	# The installed library's compiled-in sysconfdir holds dat.conf.
	check "child_exec runs with no DAT_OVERRIDE (finds $P/etc/dat.conf)" \
		timeout 30 env -u DAT_OVERRIDE -u LD_LIBRARY_PATH "$T/child_exec"
	check "child_exec runs with DAT_OVERRIDE=$P/etc/dat.conf" \
		timeout 30 env -u LD_LIBRARY_PATH DAT_OVERRIDE="$P/etc/dat.conf" "$T/child_exec"
	# datinfo, installed, finds the installed library and its registry.
	if command -v ldd >/dev/null 2>&1; then
		check "datinfo resolves libdat.so.1 in the installed lib dir" \
			sh -c "env -u LD_LIBRARY_PATH ldd '$P/bin/datinfo' | grep -q 'libdat.so.1 => $P/lib/libdat.so.1'"
	fi
	timeout 60 env -u DAT_OVERRIDE -u LD_LIBRARY_PATH "$P/bin/datinfo" >"$T/datinfo.out" 2>&1
	st=$?
	check "datinfo with no DAT_OVERRIDE exits 0" [ "$st" -eq 0 ]
	check "datinfo names $P/etc/dat.conf as the registry" grep -qx "registry: $P/etc/dat.conf" "$T/datinfo.out"
	check "datinfo says it is the library's sysconfdir" grep -q "^    $P/etc/dat.conf  *exists (libdat's sysconfdir)" "$T/datinfo.out"
	check "datinfo opens godat-shm from the installed dat.conf" grep -q "^$P/etc/dat.conf:[0-9]*: godat-shm: ok: opens (soft-shm" "$T/datinfo.out"
	check "datinfo -v godat-shm exits 0" timeout 60 env -u DAT_OVERRIDE -u LD_LIBRARY_PATH "$P/bin/datinfo" -v godat-shm
	check "datinfo -v no-such-ia exits 1" sh -c "timeout 60 env -u DAT_OVERRIDE -u LD_LIBRARY_PATH '$P/bin/datinfo' -v no-such-ia; [ \$? -eq 1 ]"
	# And the registry really is consulted: an empty one has no godat-shm.
	: >"$T/empty.conf"
	check "child_exec fails with an empty DAT_OVERRIDE registry" \
		sh -c "! timeout 30 env -u LD_LIBRARY_PATH DAT_OVERRIDE='$T/empty.conf' '$T/child_exec'"
else
	bad "child_exec was not built; its run checks skipped"
fi

# --- 5. a staged install: PREFIX=/usr DESTDIR=<tmp>/stage ---------------------
S=$T/stage
if timeout 600 $MAKE_ENV make -C "$SRC" install PREFIX=/usr DESTDIR="$S" >"$LOG" 2>&1; then
	ok
	for f in lib/libdat.so.1.2.0 lib/libdat.so.1 lib/libdat.so include/dat/udat.h etc/dat.conf lib/pkgconfig/dat.pc \
		bin/datinfo share/man/man1/datinfo.1 share/man/man7/godat.7; do
		check "staged usr/$f" sh -c "[ -e '$S/usr/$f' ] || [ -L '$S/usr/$f' ]"
	done
	check "staged dat.pc names the final prefix /usr" grep -qx 'prefix=/usr' "$S/usr/lib/pkgconfig/dat.pc"
	check "staged dat.pc does not mention DESTDIR" sh -c "! grep -q '$S' '$S/usr/lib/pkgconfig/dat.pc'"
	check "nothing staged outside usr/" [ "$(ls "$S")" = usr ]
else
	bad "make install PREFIX=/usr DESTDIR=$S"
	tail -30 "$LOG" | sed 's/^/    /'
fi

summary
