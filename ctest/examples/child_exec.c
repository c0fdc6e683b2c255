/* child_exec: the documented remedy for fork(). A program that a forked
 * child exec()s starts a fresh Go runtime and may open its own IA. It opens
 * the IA named by its argument (godat-shm without one), creates and frees a
 * PZ and closes the IA; it exits 0 when all
 * of that succeeded and otherwise names the failing call and exits 1.
 * test_fork.c runs it from a child of a process that has an IA open. */
#include <stdio.h>
#include <dat/udat.h>

static int failed(const char *call, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "child_exec: %s: 0x%08x %s %s\n", call, (unsigned)r, maj, min);
	return 1;
}

int main(int argc, char **argv)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	DAT_RETURN r;
	char *name = argc > 1 ? argv[1] : "godat-shm"; /* DAT_NAME_PTR is char * */

	r = dat_ia_open(name, 16, &async, &ia);
	if (r != DAT_SUCCESS)
		return failed("dat_ia_open", r);
	r = dat_pz_create(ia, &pz);
	if (r != DAT_SUCCESS)
		return failed("dat_pz_create", r);
	r = dat_pz_free(pz);
	if (r != DAT_SUCCESS)
		return failed("dat_pz_free", r);
	r = dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG);
	if (r != DAT_SUCCESS)
		return failed("dat_ia_close", r);
	return 0;
}
