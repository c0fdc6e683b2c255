#!/bin/sh
# fuzz.sh TIME - runs every Go fuzz target of the repository (a func
# FuzzXxx in a _test.go file under core/, rdma/ or export/) for TIME each
# (go test's -fuzztime: a duration such as 60s, or a count such as 40000x),
# in a network namespace of its own (tools/privnet.sh: FuzzTCPStream talks
# TCP on loopback). go test fuzzes one target per invocation, so each
# package's test binary is built once with the fuzzing instrumentation
# (go test -c -fuzz) and run once per target, from the package's directory
# (its testdata/fuzz seeds) with go test's cache of found inputs. Prints one
# line per target: executions, their rate, and the corpus size (seeds,
# testdata/fuzz and what runs found). A finding fails the run; the input is
# written under the package's testdata/fuzz/FuzzXxx/, where it stays as a
# seed once the bug is fixed.
set -u
time=${1:-5s}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache=$($GO env GOCACHE)/fuzz
fail=0
for pkg in $(grep -l '^func Fuzz' $(find core rdma export -name '*_test.go') | xargs -n1 dirname | sort -u); do
	bin=$tmp/$(echo "$pkg" | tr / _).test
	if ! $GO test -c -fuzz=. -o "$bin" "./$pkg"; then
		echo "$pkg: the fuzzing build FAILED"
		fail=1
		continue
	fi
	imp=$($GO list "./$pkg")
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$pkg"/*_test.go); do
		log=$tmp/log
		if (cd "$pkg" && "$root/tools/privnet.sh" "$bin" -test.run '^$' -test.fuzz "^$name\$" \
			-test.fuzztime "$time" -test.fuzzminimizetime 2s -test.fuzzcachedir "$cache/$imp") >"$log" 2>&1; then
			# The last progress line: fuzz: elapsed: 5s, execs: N (R/sec), new interesting: I (total: T)
			sed -n 's/^fuzz: elapsed: \([0-9]*\)s, execs: \([0-9]*\) .*(total: \([0-9]*\)).*/\1 \2 \3/p' "$log" | tail -1 |
				{ read -r s n c && echo "$pkg $name: $n execs in ${s}s ($((n / (s > 0 ? s : 1)))/s), corpus $c"; } ||
				{ cat "$log"; echo "$pkg $name: no progress line"; }
		else
			cat "$log"
			echo "$pkg $name: FAILED"
			fail=1
		fi
	done
done
exit $fail
