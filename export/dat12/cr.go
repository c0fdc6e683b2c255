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
// data it points at live in the CR's C memory, held while they are
// written. A CR freed meanwhile (accepted, rejected, its IA closed) is an
// invalid handle, and out is left alone.
func PutCRParam(out unsafe.Pointer, cr *core.CR, q core.CRParams) error {
	m, ok := cabi.HoldCMem(cr)
	if !ok {
		return core.ErrHandle(core.SubHandleCR)
	}
	defer m.Drop()
	var v C.DAT_CR_PARAM
	v.remote_ia_address_ptr = (*C.DAT_SOCK_ADDR)(cabi.PutSockaddr(unsafe.Add(m.Ptr(), cabi.CMemRemoteAddr), q.RemoteAddr))
	p, n := cabi.PutPrivate(m.Ptr(), q.PrivateData)
	v.private_data_size = C.DAT_COUNT(n)
	v.private_data = C.DAT_PVOID(p)
	v.remote_port_qual = C.DAT_PORT_QUAL(q.RemoteQual)
	v.local_ep_handle = handle(q.EP)
	cabi.PutStruct(out, &v)
	return nil
}
