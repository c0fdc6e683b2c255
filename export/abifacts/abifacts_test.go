package abifacts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const sample = "kind\tname\tparent\tsize\toffset_or_value\tctype\n" +
	"# a comment\n" +
	"type\tDAT_HANDLE\tdat/dat.h\t8\t8\tDAT_PVOID\n" +
	"type\tDAT_PVOID\tdat/dat.h\t8\t8\tvoid *\n" +
	"type\tDAT_EP_HANDLE\tdat/dat.h\t8\t8\tDAT_HANDLE\n" +
	"struct\tDAT_CONTEXT\tdat/dat.h\t8\t8\tunion dat_context\n" +
	"enum\tDAT_INVALID_ARG1\tDAT_RETURN_SUBTYPE\t4\t0x24\tDAT_RETURN_SUBTYPE\n" +
	"func\tdat_ep_free\tdat/dat.h\t4\t1\tDAT_RETURN (DAT_EP_HANDLE)\n" +
	"param\t0:ep_handle\tdat_ep_free\t8\t0\tDAT_EP_HANDLE\n"

func TestParse(t *testing.T) {
	f, err := Parse(strings.NewReader(sample))
	require.NoError(t, err)
	require.Len(t, f.Rows, 7)
	require.Equal(t, uint64(0x24), f.Enums["DAT_INVALID_ARG1"])
	require.Equal(t, "union dat_context", f.Structs["DAT_CONTEXT"])
	fn := f.Func("dat_ep_free")
	require.NotNil(t, fn)
	require.Equal(t, "dat/dat.h", fn.Header)
	require.Equal(t, []Param{{Name: "ep_handle", CType: "DAT_EP_HANDLE"}}, fn.Params)
	require.Nil(t, f.Func("dat_nothing"))
	require.Equal(t, []string{"DAT_EP_HANDLE", "DAT_HANDLE", "DAT_PVOID", "void *"}, f.Resolve("DAT_EP_HANDLE"))
}

func TestParseErrors(t *testing.T) {
	head := "kind\tname\tparent\tsize\toffset_or_value\tctype\n"
	for _, bad := range []string{
		"enum\tX\tT\t4\tnot-a-number\tT\n",
		"param\t0:x\tdat_f\t8\t0\tint\n",                                  // before its func
		"func\tdat_f\th\t4\t1\tint (int)\nparam\t1:x\tdat_f\t8\t0\tint\n", // index skips 0
		"enum\tX\tT\t4\n",                                                 // short row
	} {
		_, err := Parse(strings.NewReader(head + bad))
		require.Error(t, err, "%q", bad)
	}
}

// The repository's DAT 1.2 table parses, with every function's parameters.
func TestRepositoryTable(t *testing.T) {
	f, err := Read("../../ctest/abi/dat12-ofed-layout.tsv")
	require.NoError(t, err)
	require.Len(t, f.Funcs, 72)
	require.Len(t, f.FuncTypes, 72)
	require.Len(t, f.Func("dat_lmr_create").Params, 11)
	require.Equal(t, "completion_flags", f.Func("dat_ep_post_send").Params[4].Name)
}
