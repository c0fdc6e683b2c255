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
	"godat/export/cabi"
	"godat/export/dat12"
)

// callAgent is core.AgentFunc: it runs the consumer's agent function.
func callAgent(agent [2]uint64, evd *core.EVD) {
	defer func() {
		if r := recover(); r != nil {
			core.Logf(core.LevelError, "dat_cno: OS wait proxy agent: %v", r)
		}
	}()
	C.godat_call_agent(C.uintptr_t(agent[1]), C.uintptr_t(agent[0]), handleOf(evd))
}

func cnoOf(h C.godat_handle) (*core.CNO, error) {
	return lookup[*core.CNO](h, core.TypeCNO, core.SubHandleCNO)
}

var callCNOCreate = dat12.NewCall("dat_cno_create", dat12.Args{})

//export go_dat_cno_create
func go_dat_cno_create(h C.godat_handle, agent *C.DAT_OS_WAIT_PROXY_AGENT, out *C.DAT_CNO_HANDLE) (ret C.DAT_RETURN) {
	c := callCNOCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	cabi.ProbeOut(out)
	a, err := dat12.Agent(unsafe.Pointer(agent), 2)
	if err != nil {
		return datReturn(c, err)
	}
	cno, err := ia.CreateCNO(a)
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, cno)
	return C.DAT_SUCCESS
}

var callCNOModifyAgent = dat12.NewCall("dat_cno_modify_agent", dat12.Args{})

//export go_dat_cno_modify_agent
func go_dat_cno_modify_agent(h C.godat_handle, agent *C.DAT_OS_WAIT_PROXY_AGENT) (ret C.DAT_RETURN) {
	c := callCNOModifyAgent
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cno, err := cnoOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	a, err := dat12.Agent(unsafe.Pointer(agent), 2)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, cno.ModifyAgent(a))
}

var callCNOQuery = dat12.NewCall("dat_cno_query", dat12.Args{})

//export go_dat_cno_query
func go_dat_cno_query(h C.godat_handle, mask C.DAT_CNO_PARAM_MASK, out *C.DAT_CNO_PARAM) (ret C.DAT_RETURN) {
	c := callCNOQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cno, err := cnoOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_CNO_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	a, err := cno.Agent()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutCNOParam(unsafe.Pointer(out), cno, a)
	return C.DAT_SUCCESS
}

var callCNOFree = dat12.NewCall("dat_cno_free", dat12.Args{})

//export go_dat_cno_free
func go_dat_cno_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callCNOFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cno, err := cnoOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, cno.Free())
}

var callCNOWait = dat12.NewCall("dat_cno_wait", dat12.Args{})

//export go_dat_cno_wait
func go_dat_cno_wait(h C.godat_handle, timeout C.DAT_TIMEOUT, out *C.DAT_EVD_HANDLE) (ret C.DAT_RETURN) {
	c := callCNOWait
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cno, err := cnoOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	cabi.ProbeOut(out)
	evd, err := cno.Wait(dat12.Timeout(uint32(timeout)))
	if err != nil {
		if core.AsError(err).Kind == core.KindQueueEmpty {
			// The page: on a timeout evd_handle is set to a null handle.
			handleOut(out, 0)
		}
		return datReturn(c, err)
	}
	putHandle(out, evd)
	return C.DAT_SUCCESS
}
