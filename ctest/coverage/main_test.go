package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const sampleTest = `static void pz_free_in_use(void **state) {}
static void not_listed(void **state) {}
int main(void) {
	const struct CMUnitTest tests[] = { cmocka_unit_test(pz_free_in_use) };
}
`

func runCheck(t *testing.T, table string) (int, string) {
	dir := t.TempDir()
	tsv := filepath.Join(dir, "retvals.tsv")
	require.NoError(t, os.WriteFile(tsv, []byte("dat_pz_free\tDAT_SUCCESS\ndat_pz_free\tDAT_INVALID_STATE\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "test_dat_pz_free.c"), []byte(sampleTest), 0o644))
	md := filepath.Join(dir, "COVERAGE.md")
	require.NoError(t, os.WriteFile(md, []byte(table), 0o644))
	var out strings.Builder
	return checkAll(tsv, md, dir, &out), out.String()
}

func TestCheckAcceptsCompleteTable(t *testing.T) {
	rc, out := runCheck(t, "| dat_pz_free | DAT_SUCCESS | unprovokable: reason |\n"+
		"| dat_pz_free | DAT_INVALID_STATE | `test_dat_pz_free.c:pz_free_in_use` |\n")
	require.Equal(t, 0, rc, out)
	require.Contains(t, out, "1 with a test case, 1 unprovokable")
}

func TestCheckRejectsMissingRowsAndUnknownCases(t *testing.T) {
	for name, table := range map[string]string{
		"missing row":      "| dat_pz_free | DAT_SUCCESS | unprovokable: reason |\n",
		"unlisted case":    "| dat_pz_free | DAT_SUCCESS | unprovokable: x |\n| dat_pz_free | DAT_INVALID_STATE | test_dat_pz_free.c:not_listed |\n",
		"no such case":     "| dat_pz_free | DAT_SUCCESS | unprovokable: x |\n| dat_pz_free | DAT_INVALID_STATE | test_dat_pz_free.c:nope |\n",
		"empty reason":     "| dat_pz_free | DAT_SUCCESS | unprovokable: |\n| dat_pz_free | DAT_INVALID_STATE | test_dat_pz_free.c:pz_free_in_use |\n",
		"not a page value": "| dat_pz_free | DAT_SUCCESS | unprovokable: x |\n| dat_pz_free | DAT_INVALID_STATE | test_dat_pz_free.c:pz_free_in_use |\n| dat_pz_free | DAT_QUEUE_FULL | unprovokable: x |\n",
		"TODO":             "| dat_pz_free | DAT_SUCCESS | TODO |\n| dat_pz_free | DAT_INVALID_STATE | test_dat_pz_free.c:pz_free_in_use |\n",
	} {
		rc, out := runCheck(t, table)
		require.Equal(t, 1, rc, "%s: %s", name, out)
	}
}
