package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
)

// Agent reads the DAT_OS_WAIT_PROXY_AGENT at p: instance data, then
// function (zero for NULL). An agent with instance data but no function
// cannot be invoked and is refused (argument n).
func Agent(p unsafe.Pointer, n int) ([2]uint64, error) {
	if p == nil {
		return [2]uint64{}, nil
	}
	v := *(*[2]uint64)(p)
	if v[0] != 0 && v[1] == 0 {
		return v, ArgAt(n)
	}
	return v, nil
}

// PutCNOParam writes the DAT_CNO_PARAM of c, whose agent is agent, at out.
func PutCNOParam(out unsafe.Pointer, c *core.CNO, agent [2]uint64) {
	var v C.DAT_CNO_PARAM
	v.ia_handle = handle(c.IA())
	*(*[2]uint64)(unsafe.Pointer(&v.agent)) = agent
	cabi.PutStruct(out, &v)
}
