#!/bin/sh
# designcheck.sh [DESIGN.md] - every repository path the design names exists.
#
# A path is a backticked span without blanks that has a '/' (a package,
# directory or file: core/, rdma/soft/qp.go, ctest/test_dat_*.c) or ends in
# a source-like extension (a bare file name such as ep.go, found anywhere in
# the tree). Spans that are not repository paths are left alone: absolute
# paths, <dat/udat.h>-style includes, commands with options, abstract socket
# names (@...), identifiers (core.EnvVars). Globs must match something.
set -u
doc=${1:-DESIGN.md}
[ -f "$doc" ] || { echo "designcheck: $doc not found"; exit 1; }
root=$(cd "$(dirname "$doc")" && pwd)
pass=0
fail=0
list=$(mktemp)
trap 'rm -f "$list"' EXIT
grep -o '`[^`]*`' "$doc" | tr -d '`' | sort -u >"$list"
while IFS= read -r tok; do
	case $tok in
	*" "* | *"<"* | *">"* | *"("* | *")"* | *"="* | *"@"* | *'$'* | *"..."* | /* | -* | "") continue ;;
	esac
	case $tok in
	*/*) kind=path ;;
	*.go | *.c | *.h | *.sh | *.md | *.tsv | *.map | *.conf | *.in | *.awk) kind=name ;;
	*) continue ;;
	esac
	if [ $kind = path ]; then
		p=${tok%/}
		# shellcheck disable=SC2086 # the glob is meant to expand
		set -- "$root"/$p
		[ -e "$1" ]
	else
		find "$root" \( -name build -o -name .git \) -prune -o -name "$tok" -print | grep -q .
	fi
	if [ $? -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "designcheck: $doc names \`$tok\`, which does not exist"
		fail=$((fail + 1))
	fi
done <"$list"
echo "designcheck: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
