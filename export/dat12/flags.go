package dat12

/*
#include <dat/udat.h>
*/
import "C"

import "godat/core"

// DAT 1.2 flag words and core's flags, bit for bit. Each conversion from C
// refuses (ok false) a bit DAT 1.2 does not define; the caller reports the
// argument the word came in.

// flagBit pairs a DAT 1.2 flag bit with core's.
type flagBit[G ~uint32] struct {
	c uint32
	g G
}

// fromC converts a DAT 1.2 flag word by its table; ok false when f has a
// bit the table does not define.
func fromC[G ~uint32](bits []flagBit[G], f uint32) (g G, ok bool) {
	for _, b := range bits {
		if f&b.c != 0 {
			g |= b.g
			f &^= b.c
		}
	}
	return g, f == 0
}

// toC is the inverse of fromC.
func toC[G ~uint32](bits []flagBit[G], g G) (f uint32) {
	for _, b := range bits {
		if g&b.g != 0 {
			f |= b.c
		}
	}
	return f
}

// completionFlagBits pairs the DAT 1.2 completion flags with core's.
var completionFlagBits = []flagBit[core.CompletionFlags]{
	{C.DAT_COMPLETION_SUPPRESS_FLAG, core.CompletionSuppress},
	{C.DAT_COMPLETION_SOLICITED_WAIT_FLAG, core.CompletionSolicitedWait},
	{C.DAT_COMPLETION_UNSIGNALLED_FLAG, core.CompletionUnsignalled},
	{C.DAT_COMPLETION_BARRIER_FENCE_FLAG, core.CompletionBarrierFence},
	{C.DAT_COMPLETION_EVD_THRESHOLD_FLAG, core.CompletionEVDThreshold},
}

// CompletionFlags converts DAT_COMPLETION_FLAGS: every post converts one,
// so the words of the low bits come from a table made once.
func CompletionFlags(f uint32) (core.CompletionFlags, bool) {
	if f < uint32(len(completionFlagWords)) {
		w := completionFlagWords[f]
		return w.g, w.ok
	}
	return fromC(completionFlagBits, f)
}

// completionFlagWords is fromC of every word below 32 (the bits DAT 1.2
// defines), computed from the table.
var completionFlagWords = func() (t [32]struct {
	g  core.CompletionFlags
	ok bool
}) {
	for f := range t {
		t[f].g, t[f].ok = fromC(completionFlagBits, uint32(f))
	}
	return t
}()

// completionFlagsToC is the inverse of CompletionFlags.
func completionFlagsToC(g core.CompletionFlags) C.DAT_COMPLETION_FLAGS {
	return C.DAT_COMPLETION_FLAGS(toC(completionFlagBits, g))
}

// memPrivBits pairs the DAT 1.2 memory privileges with core's.
var memPrivBits = []flagBit[core.MemPriv]{
	{C.DAT_MEM_PRIV_LOCAL_READ_FLAG, core.PrivLocalRead},
	{C.DAT_MEM_PRIV_REMOTE_READ_FLAG, core.PrivRemoteRead},
	{C.DAT_MEM_PRIV_LOCAL_WRITE_FLAG, core.PrivLocalWrite},
	{C.DAT_MEM_PRIV_REMOTE_WRITE_FLAG, core.PrivRemoteWrite},
}

// MemPriv converts DAT_MEM_PRIV_FLAGS.
func MemPriv(f uint32) (core.MemPriv, bool) { return fromC(memPrivBits, f) }

// memPrivToC is the inverse of MemPriv.
func memPrivToC(g core.MemPriv) C.DAT_MEM_PRIV_FLAGS {
	return C.DAT_MEM_PRIV_FLAGS(toC(memPrivBits, g))
}

// PSPFlags converts DAT_PSP_FLAGS.
func PSPFlags(f uint32) (core.PSPFlags, bool) {
	switch f {
	case C.DAT_PSP_CONSUMER_FLAG:
		return core.PSPConsumer, true
	case C.DAT_PSP_PROVIDER_FLAG:
		return core.PSPProvider, true
	}
	return 0, false
}

// pspFlagsToC is the inverse of PSPFlags.
func pspFlagsToC(g core.PSPFlags) C.DAT_PSP_FLAGS {
	if g == core.PSPProvider {
		return C.DAT_PSP_PROVIDER_FLAG
	}
	return C.DAT_PSP_CONSUMER_FLAG
}
