#!/bin/bash
# verbs-vm.sh: run one command inside a QEMU VM that has real kernel verbs
# (Soft-RoCE, rdma_rxe, and optionally Soft-iWARP, siw) and return its output
# and exit status. vm/README.md says how it works and why.
#
#   vm/verbs-vm.sh [OPTIONS] -- CMD ARGS...
#   vm/verbs-vm.sh --prepare          install and build the cache, boot nothing
#
# The guest runs Debian's stock kernel (linux-image-amd64) with the host's root
# filesystem shared read-only; CMD runs chrooted into it, in the caller's
# working directory, with $VERBS_VM_OUT a writable folder shared with the host.
#
# Exit status: CMD's own; 77 with one "SKIP: <reason>" line on stdout when this
# machine cannot boot the VM; 124 when CMD outlived --timeout; 125 when the VM
# booted but the RDMA devices could not be set up or the guest died under CMD.

set -u

SKIP=77
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
build=${VERBS_VM_BUILD:-$repo/build/vm}

# What the harness needs from Debian. rdma-core, ibverbs-providers (the rxe and
# siw user-space drivers), the utilities and perftest run inside the guest from
# the host's root; the -dev packages build test programs on the host;
# xz-utils extracts the kernel (busybox's xz lacks the x86 BCJ filter).
PKGS=(qemu-system-x86 linux-image-amd64 busybox-static kmod iproute2 cpio xz-utils
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	libibverbs-dev librdmacm-dev)

# Modules for the guest, dependencies added by modprobe --show-depends. rxe
# asks the crypto API for crc32 and siw for crc32c: the generic ones, since
# the accelerated ones are emulated instruction by instruction under TCG.
MODS=(virtio_mmio 9pnet_virtio 9p virtio_console dummy veth
	ib_core ib_uverbs rdma_rxe rdma_cm rdma_ucm ib_umad crc32_generic crc32c_generic)

timeout_s=600
# Generous: with a load average of 24 on 2 cores the guest took 50 s to boot.
boot_timeout_s=300
out=
keep=
prepare=
install=1
console=
siw=
envs=()

usage() {
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	cat >&2 <<'EOF'
Options:
  --timeout SECS       bound on CMD, from the end of the boot (default 600)
  --boot-timeout SECS  bound on the boot (default 300); past it: SKIP
  --out DIR            the writable results folder (default: a temporary one)
  --env NAME[=VALUE]   pass a variable to CMD (GODAT_*, DAT_*, DAPL_*, GO*,
                       PATH, LANG, LC_ALL and TERM are passed anyway)
  --siw                also add siw0 (Soft-iWARP, built out of tree and cached)
  --console            copy the guest console to stderr
  --keep               keep the control folder (console log) and say where
  --no-install         never apt-get install; SKIP when something is missing
  --prepare            install and build the cache, then exit 0 (or SKIP)
EOF
	exit 2
}

log() { echo "verbs-vm: $*" >&2; }
skip() {
	echo "SKIP: verbs VM: $*"
	exit $SKIP
}

while [ $# -gt 0 ]; do
	case "$1" in
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--boot-timeout) boot_timeout_s=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--env) envs+=("${2:?}"); shift 2 ;;
	--siw) siw=1; shift ;;
	--console) console=1; shift ;;
	--keep) keep=1; shift ;;
	--no-install) install=; shift ;;
	--prepare) prepare=1; shift ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) echo "verbs-vm: unknown option $1" >&2; usage ;;
	esac
done
[ -n "$prepare" ] || [ $# -gt 0 ] || usage
case "$timeout_s$boot_timeout_s" in *[!0-9]*) echo "verbs-vm: timeouts are whole seconds" >&2; exit 2 ;; esac

mkdir -p "$build" || skip "cannot create $build"

# ---- packages ---------------------------------------------------------------

ensure_packages() {
	command -v dpkg-query >/dev/null || skip "not a Debian system (no dpkg-query): cannot install qemu and the Debian kernel"
	local missing=() p
	declare -A have=()
	while read -r p; do have[$p]=1; done < <(dpkg-query -W -f='${db:Status-Status} ${Package}\n' "${PKGS[@]}" 2>/dev/null | sed -n 's/^installed //p')
	for p in "${PKGS[@]}"; do
		[ -n "${have[$p]:-}" ] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ -n "$install" ] || skip "missing Debian packages: ${missing[*]}"
	[ "$(id -u)" = 0 ] || skip "missing Debian packages (${missing[*]}) and not root to install them"
	command -v apt-get >/dev/null || skip "missing Debian packages (${missing[*]}) and no apt-get"
	log "installing ${missing[*]} (log: $build/apt.log)"
	local apt=(apt-get -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends install "${missing[@]}")
	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >"$build/apt.log" 2>&1; then
		# An old or empty package list is the usual cause: refresh it once.
		apt-get -q -o DPkg::Lock::Timeout=600 update >>"$build/apt.log" 2>&1
		DEBIAN_FRONTEND=noninteractive "${apt[@]}" >>"$build/apt.log" 2>&1 ||
			skip "apt-get install ${missing[*]} failed (see $build/apt.log)"
	fi
}

# ---- the guest kernel -------------------------------------------------------

# The kernel that linux-image-amd64 depends on, not the host's (uname -r):
# the host kernel has no RDMA support. VERBS_VM_KERNEL overrides.
guest_kernel() {
	local v=${VERBS_VM_KERNEL:-}
	if [ -z "$v" ]; then
		v=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
			sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
	fi
	[ -n "$v" ] || skip "cannot tell which kernel linux-image-amd64 installs"
	[ -r "/boot/vmlinuz-$v" ] || skip "no /boot/vmlinuz-$v"
	[ -d "/lib/modules/$v" ] || skip "no /lib/modules/$v"
	modprobe -S "$v" --show-depends rdma_rxe >/dev/null 2>&1 || skip "kernel $v has no rdma_rxe module"
	kver=$v
}

# u32 FILE OFFSET: a little-endian unsigned integer from FILE.
u32() { od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }

# extract_vmlinux BZIMAGE OUT: the uncompressed ELF kernel, which QEMU boots
# through its PVH entry (3 s faster than the bzImage under TCG). The payload's
# place comes from the x86 boot protocol header (setup_sects at 0x1f1,
# payload_offset and payload_length at 0x248 and 0x24c).
extract_vmlinux() {
	local img=$1 dst=$2 setup off len magic
	setup=$(od -An -t u1 -j $((0x1f1)) -N 1 "$img" | tr -d ' ')
	off=$(($((setup + 1)) * 512 + $(u32 "$img" $((0x248)))))
	len=$(u32 "$img" $((0x24c)))
	magic=$(od -An -t x1 -j "$off" -N 4 "$img" | tr -d ' ')
	# shellcheck disable=SC2054 # commas inside dd's operands
	local payload=(dd if="$img" bs=1M iflag=skip_bytes,count_bytes skip="$off" count="$len" status=none)
	case "$magic" in
	fd377a58) "${payload[@]}" | xz -dc --single-stream >"$dst" ;;
	28b52ffd) "${payload[@]}" | zstd -dcq >"$dst" ;;
	1f8b*) "${payload[@]}" | gzip -dc >"$dst" 2>/dev/null ;;
	*) return 1 ;;
	esac
	[ "$(od -An -c -N 4 "$dst" | tr -d ' ')" = '177ELF' ]
}

# build_initramfs DIR: busybox, /init and the modules in load order.
build_initramfs() {
	local d=$1 t=$1/root a path params name
	mkdir -p "$t"/{bin,sbin,proc,sys,dev,ctl,newroot,lib/modules} || return 1
	cp /bin/busybox "$t/bin/busybox" || return 1
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$t/bin/$a"
	done
	install -m 0755 "$here/init" "$t/init" || return 1
	# The kernel's own module requests (request_module) run /sbin/modprobe in
	# the initramfs: hand them to the host's modprobe, which finds the guest
	# kernel's modules in the host's /lib/modules once the root is mounted.
	printf '#!/bin/sh\nexec chroot /newroot /sbin/modprobe "$@"\n' >"$t/sbin/modprobe"
	chmod 0755 "$t/sbin/modprobe"
	: >"$t/modules.list"
	# Each module once, in an order where its dependencies come first.
	modprobe -S "$kver" --show-depends -a "${MODS[@]}" |
		awk '$1 == "insmod" && !seen[$2]++ { $1 = ""; sub(/^ /, ""); print }' >"$d/deps" || return 1
	while read -r path params; do
		name=${path##*/}
		case "$name" in
		*.ko) cp "$path" "$t/lib/modules/$name" ;;
		*.ko.xz) name=${name%.xz}; xz -dc "$path" >"$t/lib/modules/$name" ;;
		*.ko.zst) name=${name%.zst}; zstd -dcq "$path" >"$t/lib/modules/$name" ;;
		*) return 1 ;;
		esac || return 1
		echo "$name${params:+ $params}" >>"$t/modules.list"
	done <"$d/deps"
	[ -s "$t/modules.list" ] || return 1
	(cd "$t" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) >"$d/initrd.cpio"
}

# The cache: build/vm/cache/<kernel>-<hash of this script and init>/. A
# changed script or kernel builds anew (about 2 s); older entries go.
prepare_cache() {
	local key lock tmp
	key=$(cat "$here/verbs-vm.sh" "$here/init" | sha256sum | cut -c1-12)
	cache=$build/cache/$kver-$key
	[ -s "$cache/vmlinux" ] && [ -s "$cache/initrd.cpio" ] && return 0
	mkdir -p "$build/cache"
	exec {lock}>"$build/cache/.lock"
	flock "$lock"
	if ! { [ -s "$cache/vmlinux" ] && [ -s "$cache/initrd.cpio" ]; }; then
		tmp=$build/cache/.new.$$
		rm -rf "$tmp" && mkdir -p "$tmp"
		extract_vmlinux "/boot/vmlinuz-$kver" "$tmp/vmlinux" ||
			{ rm -rf "$tmp"; skip "cannot extract an ELF vmlinux from /boot/vmlinuz-$kver"; }
		build_initramfs "$tmp" || { rm -rf "$tmp"; skip "cannot build the initramfs for $kver"; }
		rm -rf "$tmp/root" "$tmp/deps"
		find "$build/cache" -mindepth 1 -maxdepth 1 -name "*-*" ! -name '.*' -exec rm -rf {} +
		mv "$tmp" "$cache"
	fi
	exec {lock}>&-
}

ensure_packages
guest_kernel
prepare_cache
siw_ko=
siw_missing=
if [ -n "$siw" ]; then
	if siw_ko=$("$here/siw-build.sh" "$kver" "$build/siw" 2>"$build/siw.log"); then
		:
	else
		siw_missing=$(tail -n 1 "$build/siw.log")
		siw_ko=
	fi
fi
[ -n "$prepare" ] && exit 0

command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"

# ---- accelerator ------------------------------------------------------------

# KVM when it can run this kernel, else TCG. kvm_pvm is a nested hypervisor
# that runs only specially built guests: Debian's kernel hangs or dies under
# it, so it means TCG at once. VERBS_VM_ACCEL=kvm|tcg overrides.
accel=tcg
if [ -n "${VERBS_VM_ACCEL:-}" ]; then
	accel=$VERBS_VM_ACCEL
elif [ ! -e /sys/module/kvm_pvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	accel=kvm
fi

# use_accel ACCEL: QEMU's arguments and the kernel command line for ACCEL.
use_accel() {
	accel=$1
	cmdline="console=ttyS0 rdinit=/init panic=-1 loglevel=4 pci=off"
	if [ "$accel" = kvm ]; then
		accel_args=(-accel kvm -cpu host)
	else
		# shellcheck disable=SC2054 # a comma inside QEMU's option
		accel_args=(-accel tcg,thread=multi -cpu max)
		# A busy host can make the guest's TSC calibration fail under TCG,
		# and microvm has no fallback timer: give it the host's TSC rate
		# (the guest's TSC runs at it under TCG).
		local khz
		khz=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p; s/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -n 1)
		[ -n "$khz" ] || khz=$(sed -n 's/^cpu MHz[^:]*: *\([0-9.]*\).*/\1/p' /proc/cpuinfo | head -n 1)
		[ -n "$khz" ] && cmdline+=" tsc_early_khz=$(awk -v m="$khz" 'BEGIN { printf "%d", m * 1000 }') no_timer_check tsc=reliable"
	fi
	cmdline+=${VERBS_VM_APPEND:+ $VERBS_VM_APPEND}
}

# ---- the run ----------------------------------------------------------------

cwd=$(pwd -P)
# Per-run folders, named after this process; those of runs killed before
# their cleanup (SIGKILL) go now.
for d in "$build"/run.* "$build"/out.*; do
	[ -d "$d" ] && ! kill -0 "${d##*.}" 2>/dev/null && rm -rf "$d"
done
ctl=$build/run.$$
mkdir "$ctl" || skip "cannot create $ctl"
own_out=
if [ -z "$out" ]; then
	out=$build/out.$$
	mkdir "$out" || skip "cannot create $out"
	own_out=1
fi
mkdir -p "$out" && out=$(cd "$out" && pwd -P) || skip "cannot use $out as the results folder"

qpid=
tails=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
		kill -TERM "$qpid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$qpid" 2>/dev/null
	fi
	# Whatever became of timeout(1), QEMU itself must not outlive us.
	[ -s "$ctl/qemu.pid" ] && kill -KILL "$(cat "$ctl/qemu.pid")" 2>/dev/null
	[ ${#tails[@]} -gt 0 ] && kill "${tails[@]}" 2>/dev/null
	if [ -n "$keep" ]; then
		log "kept $ctl (console.log: the guest console)"
	else
		rm -rf "$ctl"
	fi
	[ -n "$own_out" ] && rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# sq STRING: STRING quoted for the guest's busybox sh.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

{
	echo "VM_CWD=$(sq "$cwd")"
	echo "VM_OUT=$(sq "$out")"
	echo "VM_SIW=${siw_ko:+1}"
	# Host paths: inside the initramfs, busybox would take "ip" for its own.
	echo "VM_IP=$(sq "$(command -v ip)")"
	echo "VM_RDMA=$(sq "$(command -v rdma)")"
	echo "VM_MODPROBE=$(sq "$(command -v modprobe)")"
	[ -z "$siw_ko" ] || echo "VM_SIW_DEPS=$(sq "$(modinfo -F depends "$siw_ko" | tr , ' ')")"
} >"$ctl/env"
[ -n "$siw_ko" ] && cp "$siw_ko" "$ctl/siw.ko"

# The command, as a bash script run in the guest's chroot.
{
	echo "cd -- $(printf %q "$cwd") || exit 125"
	echo "ulimit -c 0"
	echo "export HOME=/root VERBS_VM=1 VERBS_VM_OUT=$(printf %q "$out")"
	echo "export VERBS_VM_DEV=rxe0 VERBS_VM_ADDR=10.66.0.1 VERBS_VM_GID_INDEX=1"
	if [ -n "$siw_ko" ]; then
		echo "export VERBS_VM_SIW_DEV=siw0 VERBS_VM_SIW_ADDR=10.66.1.1"
	elif [ -n "$siw" ]; then
		echo "export VERBS_VM_SIW_MISSING=$(printf %q "$siw_missing")"
	fi
	for v in $(compgen -e); do
		case "$v" in
		GODAT_* | DAT_* | DAPL_* | GO* | PATH | LANG | LC_ALL | TERM) echo "export $v=$(printf %q "${!v}")" ;;
		esac
	done
	for e in "${envs[@]}"; do
		case "$e" in
		*=*) echo "export $(printf %q "${e%%=*}")=$(printf %q "${e#*=}")" ;;
		*) [ -n "${!e+x}" ] && echo "export $e=$(printf %q "${!e}")" ;;
		esac
	done
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$ctl/cmd.sh"

# Times in microseconds, from bash itself: the wait loop forks nothing.
now() { echo "${EPOCHREALTIME/./}"; }
secs() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }
exec {nap}<> <(:)

# boot BOOT_TIMEOUT: run QEMU until it exits or a bound passes. Sets qrc (its
# exit status), t0, t_ready (when the guest's root was mounted) and why
# (boot-timeout, timeout or nothing).
boot() {
	local t
	rm -f "$ctl"/{ready,devices,done,status,boot-error,setup-error,qemu.pid}
	: >"$ctl/out"
	: >"$ctl/err"
	: >"$ctl/console.log"
	# The hard bound, should this script die without its cleanup. --foreground
	# keeps QEMU in our process group, so that killing the group kills it too.
	timeout --foreground -k 5 $(($1 + timeout_s + 30)) qemu-system-x86_64 \
		-M microvm,x-option-roms=off -smp 2 -m 2048 "${accel_args[@]}" \
		-nodefaults -no-user-config -display none -no-reboot \
		-pidfile "$ctl/qemu.pid" \
		-kernel "$cache/vmlinux" -initrd "$cache/initrd.cpio" -append "$cmdline" \
		-serial "file:$ctl/console.log" \
		-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-device,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=vmctl,path=$ctl,security_model=none" \
		-device virtio-9p-device,fsdev=vmctl,mount_tag=vmctl \
		-fsdev "local,id=vmout,path=$out,security_model=none" \
		-device virtio-9p-device,fsdev=vmout,mount_tag=vmout \
		-device virtio-serial-device \
		-chardev "file,id=out,path=$ctl/out,append=on" -device virtserialport,chardev=out,name=out \
		-chardev "file,id=err,path=$ctl/err,append=on" -device virtserialport,chardev=err,name=err \
		</dev/null >"$ctl/qemu.log" 2>&1 &
	qpid=$!
	# CMD's output, as it comes. tail --pid reads to the end once QEMU is gone.
	tail -q -n +1 -s 0.1 -f --pid="$qpid" "$ctl/out" &
	tails+=($!)
	tail -q -n +1 -s 0.1 -f --pid="$qpid" "$ctl/err" >&2 &
	tails+=($!)
	if [ -n "$console" ]; then
		tail -q -n +1 -s 0.1 -f --pid="$qpid" "$ctl/console.log" >&2 &
		tails+=($!)
	fi

	t0=$(now)
	t_ready=
	why=
	while kill -0 "$qpid" 2>/dev/null; do
		t=${EPOCHREALTIME/./}
		if [ -z "$t_ready" ]; then
			if [ -e "$ctl/ready" ]; then
				t_ready=$t
			elif [ $((t - t0)) -ge $(($1 * 1000000)) ]; then
				why=boot-timeout
				break
			fi
		elif [ $((t - t_ready)) -ge $((timeout_s * 1000000)) ]; then
			why=timeout
			break
		fi
		read -r -t 0.05 -u "$nap"
	done
	[ -z "$why" ] || kill -TERM "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
	qrc=$?
	wait "${tails[@]}" 2>/dev/null
	tails=()
}

use_accel "$accel"
if [ "$accel" = kvm ] && [ -z "${VERBS_VM_ACCEL:-}" ]; then
	# KVM boots this guest in a second or two where it works at all.
	boot $((boot_timeout_s < 30 ? boot_timeout_s : 30))
	if [ ! -e "$ctl/ready" ]; then
		log "KVM did not boot the guest (qemu exit status $qrc: $(head -n 1 "$ctl/qemu.log")); using TCG"
		use_accel tcg
		boot "$boot_timeout_s"
	fi
else
	boot "$boot_timeout_s"
fi

console_tail() {
	log "qemu exited with $qrc; last lines of the guest console:"
	tail -n "${1:-15}" "$ctl/console.log" | sed 's/^/verbs-vm:   /' >&2
	[ -s "$ctl/qemu.log" ] && sed 's/^/verbs-vm: qemu: /' "$ctl/qemu.log" >&2
}

if [ -s "$ctl/status" ]; then
	rc=$(cat "$ctl/status")
	# Guest uptimes: root mounted, devices ready, command done.
	log "$accel: guest root at $(cat "$ctl/ready") s, devices at $(cat "$ctl/devices") s, command done at $(cat "$ctl/done") s; exit status $rc after $(secs $(($(now) - t0))) s in all"
	exit "$rc"
fi
case "$why" in
timeout)
	echo "FAIL: verbs-vm: the command did not finish within $timeout_s s; killed the VM" >&2
	exit 124
	;;
boot-timeout)
	console_tail
	skip "the VM did not boot within $boot_timeout_s s ($accel)"
	;;
esac
if [ -s "$ctl/setup-error" ]; then
	console_tail
	echo "FAIL: verbs-vm: device setup: $(cat "$ctl/setup-error")" >&2
	exit 125
fi
if [ -e "$ctl/ready" ]; then
	console_tail 40
	echo "FAIL: verbs-vm: the guest died before the command finished" >&2
	exit 125
fi
console_tail
if [ -s "$ctl/boot-error" ]; then
	skip "the VM could not start its userland: $(cat "$ctl/boot-error")"
fi
why=$(grep -m 1 -o 'Kernel panic - .*' "$ctl/console.log")
[ -n "$why" ] || why=$(grep -m 1 -v '^\s*$' "$ctl/qemu.log")
skip "the VM did not boot ($accel, qemu exit status $qrc)${why:+: $why}"
