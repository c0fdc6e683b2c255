package main

import (
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/core"
	"godat/export/abifacts"
	"godat/export/dat12"
)

// roleParams are the DAT 1.2 parameter names each argument role may stand
// for.
var roleParams = [core.ArgCount][]string{
	core.ArgQLen:            {"asynch_evd_min_qlen", "evd_min_qlen", "srq_max_recv_dto"},
	core.ArgEVDFlags:        {"evd_flags"},
	core.ArgThreshold:       {"Threshold"},
	core.ArgEvent:           {"event"},
	core.ArgPrivateData:     {"private_data_size"},
	core.ArgConnQual:        {"handoff"},
	core.ArgEPAttr:          {"ep_attributes", "ep_param"},
	core.ArgPZ:              {"ep_param", "pz_handle"},
	core.ArgEVD:             {"ep_param"},
	core.ArgSegmentCount:    {"num_segments"},
	core.ArgLocalIOV:        {"local_iov", "local_segments", "lmr_triplet"},
	core.ArgCompletionFlags: {"completion_flags"},
	core.ArgMemPriv:         {"privileges", "mem_priv"},
	core.ArgRegion:          {"region_description"},
	core.ArgLength:          {"length"},
	core.ArgPSPFlags:        {"psp_flags"},
	core.ArgSoftWatermark:   {"soft_high_watermark"},
	core.ArgHardWatermark:   {"hard_high_watermark"},
	core.ArgSRQAttr:         {"srq_attr"},
	core.ArgLowWatermark:    {"low_watermark"},
}

// Every entry point has one Call, and every argument position a Call's
// table gives a role is, by the DAT 1.2 ABI facts, the parameter that role
// names in that function.
func TestCallArgPositions(t *testing.T) {
	f, err := abifacts.Read("../ctest/abi/dat12-ofed-layout.tsv")
	require.NoError(t, err)
	var names []string
	for _, c := range dat12.Calls() {
		names = append(names, c.Name)
		fn := f.Func(c.Name)
		if c.Name == "dats_get_ia_handle" {
			continue // not in the facts: our header's extension (api_extra.tsv)
		}
		require.NotNil(t, fn, "%s is not in the ABI facts", c.Name)
		for a := core.Arg(1); int(a) < core.ArgCount; a++ {
			pos := c.Position(a)
			if pos == 0 {
				continue
			}
			require.LessOrEqual(t, pos, len(fn.Params), "%s: %v at %d", c.Name, a, pos)
			param := fn.Params[pos-1].Name
			require.Contains(t, roleParams[a], param, "%s: %v at %d is %s", c.Name, a, pos, param)
		}
	}
	for _, fn := range f.Funcs {
		require.Contains(t, names, fn.Name, "no Call for %s", fn.Name)
	}
	sorted := slices.Sorted(slices.Values(names))
	require.Len(t, slices.Compact(sorted), len(names), "a call described twice")
	require.Len(t, names, len(f.Funcs)+1)
}

// The C fast path of dat_evd_dequeue (godat_fast_dat_evd_dequeue,
// export/godat.h) answers DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE): the
// Go wrapper's empty answer must be that same value.
func TestDequeueEmptyIsTheFastPaths(t *testing.T) {
	f, err := abifacts.Read("../ctest/abi/dat12-ofed-layout.tsv")
	require.NoError(t, err)
	v, ok := f.Enums["DAT_QUEUE_EMPTY"]
	require.True(t, ok)
	classError := ^uint64(0)
	for _, r := range f.Rows {
		if r.Kind == "const" && r.Name == "DAT_CLASS_ERROR" {
			classError, err = strconv.ParseUint(r.Value, 0, 64)
			require.NoError(t, err)
		}
	}
	require.NotEqual(t, ^uint64(0), classError, "no DAT_CLASS_ERROR row")
	require.Equal(t, classError|v, uint64(dequeueEmpty))
}
