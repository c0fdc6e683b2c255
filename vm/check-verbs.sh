#!/bin/bash
# check-verbs.sh: what `make check-verbs` runs (vm/README.md).
#
# 1. vm/verbs-vm.sh --prepare: the Debian packages, the cached kernel and
#    initramfs, the cached siw module.
# 2. `make verbs-guest`: every program the guest runs, built on the host (after
#    step 1, which installs the -dev packages they build against).
# 3. One boot that runs vm/guest-check.sh, its logs kept in build/vm/out.
#
# When this machine cannot boot the VM, verbs-vm.sh prints one "SKIP: ..."
# line and this exits 0, so that `make check` goes on; with
# VERBS_VM_REQUIRED=1 it exits 77 instead. VERBS_VM_SIW=0 leaves siw out;
# VERBS_CHECK_TIMEOUT bounds the guest's run (seconds, default 3600);
# VERBS_STEPS names the guest's steps (default: guest-check.sh's STEPS).

set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cd "$repo" || exit 1
make=${MAKE:-make}
out=$repo/build/vm/out
t0=${EPOCHREALTIME/./}
secs() { local t=$((${EPOCHREALTIME/./} - t0)); printf '%d.%d' $((t / 1000000)) $((t % 1000000 / 100000)); }

skipped() {
	[ -z "${VERBS_VM_REQUIRED:-}" ] || exit 77
	exit 0
}

siw=(--siw)
[ "${VERBS_VM_SIW:-1}" = 0 ] && siw=()

vm/verbs-vm.sh --prepare "${siw[@]}"
case $? in
0) ;;
77) skipped ;;
*) exit 1 ;;
esac
echo "check-verbs: prepared in $(secs) s"

$make --no-print-directory verbs-guest || exit 1

rm -rf "$out" && mkdir -p "$out" || exit 1
vm/verbs-vm.sh "${siw[@]}" --timeout "${VERBS_CHECK_TIMEOUT:-3600}" --out "$out" -- vm/guest-check.sh ${VERBS_STEPS:-}
rc=$?
[ $rc -eq 77 ] && skipped
echo "check-verbs: $(secs) s in all, logs in build/vm/out"
exit $rc
