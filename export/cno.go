package main

/*
#include "godat.h"

static void godat_call_agent(uintptr_t fn, uintptr_t instance, DAT_EVD_HANDLE evd)
{
	((DAT_AGENT_FUNC)fn)((DAT_PVOID)instance, evd);
}
*/
import "C"

import (
	"unsafe"

	"godat/core"
)

// agentOf reads an OS wait proxy agent: instance data, then function. An
// agent with instance data but no function cannot be invoked and is
// refused (argument n).
func agentOf(a *C.DAT_OS_WAIT_PROXY_AGENT, n int) ([2]uint64, error) {
	if a == nil {
		return [2]uint64{}, nil
	}
	v := *(*[2]uint64)(unsafe.Pointer(a))
	if v[0] != 0 && v[1] == 0 {
		return v, core.ErrArg(n)
	}
	return v, nil
}

// callAgent is core.AgentFunc: it runs the consumer's agent function.
func callAgent(agent [2]uint64, evd *core.EVD) {
	defer func() {
		if r := recover(); r != nil {
			core.Logf(core.LevelError, "dat_cno: OS wait proxy agent: %v", r)
		}
	}()
	C.godat_call_agent(C.uintptr_t(agent[1]), C.uintptr_t(agent[0]), handleOf(evd))
}

//export go_dat_cno_create
func go_dat_cno_create(h C.godat_handle, agent *C.DAT_OS_WAIT_PROXY_AGENT, out *C.DAT_CNO_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cno_create", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	a, err := agentOf(agent, 2)
	if err != nil {
		return datReturn(err)
	}
	c, err := ia.CreateCNO(a)
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(c)
	return C.DAT_SUCCESS
}

//export go_dat_cno_modify_agent
func go_dat_cno_modify_agent(h C.godat_handle, agent *C.DAT_OS_WAIT_PROXY_AGENT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cno_modify_agent", h)
	c, err := lookup[*core.CNO](h, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(err)
	}
	a, err := agentOf(agent, 2)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(c.ModifyAgent(a))
}

//export go_dat_cno_query
func go_dat_cno_query(h C.godat_handle, mask C.DAT_CNO_PARAM_MASK, out *C.DAT_CNO_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cno_query", h)
	c, err := lookup[*core.CNO](h, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_CNO_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	a, err := c.Agent()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_CNO_PARAM
	v.ia_handle = handleOf(c.IA())
	*(*[2]uint64)(unsafe.Pointer(&v.agent)) = a
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_cno_free
func go_dat_cno_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cno_free", h)
	c, err := lookup[*core.CNO](h, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(c.Free())
}

//export go_dat_cno_wait
func go_dat_cno_wait(h C.godat_handle, timeout C.DAT_TIMEOUT, out *C.DAT_EVD_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cno_wait", h)
	c, err := lookup[*core.CNO](h, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	evd, err := c.Wait(timeoutOf(timeout))
	if err != nil {
		if core.AsError(err).Kind == core.KindQueueEmpty {
			// The page: on a timeout evd_handle is set to a null handle.
			*out = nil
		}
		return datReturn(err)
	}
	*out = handleOf(evd)
	return C.DAT_SUCCESS
}
