#!/bin/sh
# Header self-containment check: every public header in include/dat must
# compile on its own (and twice in a row) as C99 and as C++, with
# -Wall -Wextra -Werror -pedantic.  Two small usage programs also exercise
# the macros in both languages (compiled only, never linked).
#
# usage: ctest/headers/run.sh [repo-root]
#   repo-root   default: two directories above this script
# Environment: CC (default cc), CXX (default c++).
# Writes only under <repo-root>/build/ctest/headers/.
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH= cd -- "${1:-$here/../..}" && pwd)
cc=${CC:-cc}
cxx=${CXX:-c++}
out=$root/build/ctest/headers
inc=$root/include
mkdir -p "$out"

# The headers the DAT 1.2 API defines; any other header found is tested too.
required="udat.h dat.h dat_error.h dat_platform_specific.h udat_config.h
dat_vendor_specific.h udat_vendor_specific.h dat_registry.h
dat_redirection.h udat_redirection.h"

passed=0
failed=0

# compile NAME LANG SOURCE: compile SOURCE (a file) as LANG (c or c++).
compile() {
	name=$1 lang=$2 src=$3
	obj=$out/$name.$lang.o
	if [ "$lang" = c ]; then
		set -- "$cc" -std=c99 -pedantic -Wall -Wextra -Werror -x c
	else
		set -- "$cxx" -pedantic -Wall -Wextra -Werror -x c++
	fi
	if "$@" -I "$inc" -c -o "$obj" "$src" >"$out/$name.$lang.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $name ($lang)"
	else
		failed=$((failed + 1))
		echo "FAIL $name ($lang)"
		sed 's/^/     /' "$out/$name.$lang.log"
	fi
}

headers=$required
for h in "$inc"/dat/*.h; do
	[ -e "$h" ] || continue
	b=$(basename "$h")
	case " $(echo $required) " in
	*" $b "*) ;;
	*) headers="$headers $b" ;;
	esac
done

for h in $headers; do
	if [ ! -f "$inc/dat/$h" ]; then
		failed=$((failed + 1))
		echo "FAIL $h: missing from include/dat"
		continue
	fi
	tu=$out/${h%.h}.tu
	# Included twice (include guards), plus a declaration so that the
	# translation unit is never empty.
	printf '#include <dat/%s>\n#include <dat/%s>\ntypedef int dat_header_test_%s;\n' \
		"$h" "$h" "$(echo "${h%.h}" | tr -c 'A-Za-z0-9_\n' _)" >"$tu"
	compile "$h" c "$tu"
	compile "$h" c++ "$tu"
done

# Usage as a consumer and as a provider would write it.
cat >"$out/usage.tu" <<'USAGE'
#include <dat/udat.h>
#include <dat/dat_registry.h>

DAT_RETURN consumer_usage(void);
DAT_RETURN provider_usage(DAT_EP_HANDLE ep, DAT_LMR_TRIPLET *iov);

DAT_RETURN
consumer_usage(void)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_PROVIDER_ATTR pattr;
	DAT_IA_ATTR iattr;
	DAT_OS_WAIT_PROXY_AGENT agent = DAT_OS_WAIT_PROXY_AGENT_NULL;
	DAT_RETURN ret;
	char name[] = "ofa-v2-ib0";

	(void) agent;
	ret = dat_ia_open(name, 8, &async_evd, &ia);
	if (ret != DAT_SUCCESS)
		return DAT_GET_TYPE(ret) | DAT_GET_SUBTYPE(ret);
	if (DAT_IS_WARNING(ret))
		return ret;
	ret = dat_ia_query(ia, &async_evd, DAT_IA_FIELD_ALL, &iattr,
	    DAT_PROVIDER_FIELD_ALL, &pattr);
	if (ret == DAT_SUCCESS)
		ret = dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno);
	if (pattr.evd_stream_merging_supported[0][1] == DAT_TRUE)
		ret = dat_ia_close(ia, DAT_CLOSE_DEFAULT);
	return ret;
}

DAT_RETURN
provider_usage(DAT_EP_HANDLE ep, DAT_LMR_TRIPLET *iov)
{
	DAT_DTO_COOKIE cookie;

	cookie.as_64 = 1;
	return DAT_EP_POST_SEND(ep, 1, iov, cookie,
	    DAT_COMPLETION_DEFAULT_FLAG);
}
USAGE
compile usage c "$out/usage.tu"
compile usage c++ "$out/usage.tu"

echo "headers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
