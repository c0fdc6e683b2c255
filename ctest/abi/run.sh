#!/bin/sh
# ABI layout check: generates a C program from the DAT 1.2 layout table
# (one fact per row) with ctest/abigen, compiles it against include/dat and
# runs it.  The program prints a FAIL line per wrong row and ends with
# "N checked, M failed".
#
# usage: ctest/abi/run.sh [repo-root] [layout.tsv]
#   repo-root   default: two directories above this script
#   layout.tsv  default: ctest/abi/dat12-ofed-layout.tsv in the repo
# Environment: CC (default cc), GO (default go, else /usr/local/go/bin/go).
# Writes only under <repo-root>/build/ctest/.
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH= cd -- "${1:-$here/../..}" && pwd)
tsv=${2:-$root/ctest/abi/dat12-ofed-layout.tsv}
cc=${CC:-cc}
go=${GO:-}
if [ -z "$go" ]; then
	if command -v go >/dev/null 2>&1; then
		go=go
	else
		go=/usr/local/go/bin/go
	fi
fi

out=$root/build/ctest
mkdir -p "$out"

echo "abi: generating $out/abi_check.c from $tsv"
(cd "$root" && "$go" build -o "$out/abigen" ./ctest/abigen)
"$out/abigen" -o "$out/abi_check.c" "$tsv"

echo "abi: compiling"
"$cc" -std=c11 -Wall -Wextra -Werror -I "$root/include" \
	-o "$out/abi_check" "$out/abi_check.c"

echo "abi: running"
"$out/abi_check"
