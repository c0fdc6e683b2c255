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

// PutCRParam writes the DAT_CR_PARAM of cr at out; the address and private
// data it points at live in the CR's C memory.
func PutCRParam(out unsafe.Pointer, cr *core.CR, q core.CRParams) {
	var v C.DAT_CR_PARAM
	if m := cabi.CMemOf(cr); m != nil {
		v.remote_ia_address_ptr = (*C.DAT_SOCK_ADDR)(cabi.PutSockaddr(unsafe.Add(m, cabi.CMemRemoteAddr), q.RemoteAddr))
		p, n := cabi.PutPrivate(m, q.PrivateData)
		v.private_data_size = C.DAT_COUNT(n)
		v.private_data = C.DAT_PVOID(p)
	}
	v.remote_port_qual = C.DAT_PORT_QUAL(q.RemoteQual)
	v.local_ep_handle = handle(q.EP)
	*(*C.DAT_CR_PARAM)(out) = v
}
