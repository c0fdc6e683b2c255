#!/bin/sh
# Checks that libdat exports exactly the DAT 1.2 functions, each at version
# DAT_1.2, and nothing else, that the SONAME is libdat.so.1, and that it
# depends on no rdma-core library (the verbs backend dlopens them: neither
# its NEEDED entries nor ldd name libibverbs or librdmacm).
set -eu
lib=$1 map=$2
want=$(sed -n 's/^\t\t\(dat[s_][a-z_0-9]*\);$/\1@@DAT_1.2/p' "$map" | sort)
got=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '$2 != "A" {print $3}' | sort)
fail=0
if [ "$want" != "$got" ]; then
	echo "symbols: export list differs from $map:"
	diff -u /dev/fd/3 /dev/fd/4 3<<EOF3 4<<EOF4 || true
$want
EOF3
$got
EOF4
	fail=1
fi
n=$(printf '%s\n' "$got" | grep -c . || true)
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libdat.so.1" ]; then
	echo "symbols: SONAME is '$soname', want libdat.so.1"
	fail=1
fi
verbs=$({ readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; ldd "$lib"; } | grep -E 'libibverbs|librdmacm|libmlx|librxe' || true)
if [ -n "$verbs" ]; then
	echo "symbols: $lib depends on rdma-core (it must dlopen it):"
	echo "$verbs"
	fail=1
fi
if [ "$fail" = 0 ]; then
	echo "symbols: $n exported, all @@DAT_1.2, SONAME $soname, no rdma-core dependency: 1 passed, 0 failed"
else
	echo "symbols: 0 passed, 1 failed"
	exit 1
fi
