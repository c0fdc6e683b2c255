#!/bin/sh
# nordma.sh COMMAND [ARG...] - runs COMMAND as on a machine without rdma-core:
# in a mount namespace of its own where libibverbs.so.1 and librdmacm.so.1
# (wherever the loader finds them) read as empty files, so dlopen fails.
# The C suite runs this way (ctest/run.sh): libdat links neither library
# (ctest/symbols.sh), and its software transports must not need them.
# GODAT_NORDMA is set for COMMAND: "hidden" when the libraries are hidden,
# "absent" when the loader knows neither, "present" when they could not be
# hidden (not root, no unshare); a nested call runs COMMAND directly.
[ -z "${GODAT_NORDMA:-}" ] || exec "$@"
libs=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libibverbs.so.1" || $1 == "librdmacm.so.1" {print $NF}')
if [ -z "$libs" ]; then
	export GODAT_NORDMA=absent
	exec "$@"
fi
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	export GODAT_NORDMA=hidden
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare -m sh -c 'for l in $0; do mount --bind /dev/null "$(readlink -f "$l")" || exit 125; done; exec "$@"' "$libs" "$@"
fi
export GODAT_NORDMA=present
exec "$@"
