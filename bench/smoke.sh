#!/bin/sh
# smoke.sh BUILD_BENCH_DIR: check's run of the benchmark programs (make
# benchsmoke). Each runs to its end over each IA with a short measurement
# time; they check every completion's status and length and bound every
# wait, so a pattern that breaks a connection or loses a completion fails
# here. Timings are printed by `make bench` only, never looked at here.
B=$1
export BENCH_TIME=0.05 BENCH_WINDOWS=1
pass=0 fail=0
run() {
	if out=$(timeout 120 "$@" 2>&1 >/dev/null); then
		pass=$((pass + 1))
		echo "benchsmoke: ok   $*"
	else
		fail=$((fail + 1))
		echo "benchsmoke: FAIL $*"
		printf '%s\n' "$out" | tail -5
	fi
}
for ia in godat-shm godat-tcp godat; do
	run "$B/datbench" -i "$ia"
done
for ia in godat-shm godat-tcp; do
	run "$B/apppat" dat "$ia"
done
run "$B/tcp_bench" dat godat-tcp
run env TCP_BENCH_POLL=1 "$B/tcp_bench" dat godat-tcp
# A process pinned before it starts: the Go runtime has one P.
run env GOMAXPROCS=1 TCP_BENCH_POLL=1 "$B/tcp_bench" dat godat-tcp
echo "benchsmoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
