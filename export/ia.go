package main

/*
#include "godat.h"
*/
import "C"

import (
	"fmt"
	"path/filepath"
	"strings"
	"unsafe"

	"godat/core"
	"godat/export/cabi"
	"godat/export/dat12"
	"godat/rdma"
)

// builtinLibs are the library names in dat.conf that mean "this library".
var builtinLibs = map[string]bool{"libdat.so.1": true, "libdat.so": true, "libdat.so.1.2.0": true, "godat": true}

// backendOf picks the transport backend a dat.conf entry names: the
// software provider for transport=shm, tcp and auto (and by default), the
// verbs backend for transport=verbs, and for transport=verbs-or-auto the
// verbs backend with the software provider's auto transport as the
// fallback when this host has no verbs libraries or no such device (the
// conventional OFED names in dat.conf use it). Backends register
// themselves (backends.go imports them); an entry naming one that is not
// built in opens nothing.
func backendOf(e core.RegistryEntry, cfg *core.IAConfig) error {
	if !builtinLibs[filepath.Base(e.LibPath)] {
		core.Logf(core.LevelWarn, "dat_ia_openv: %s: provider library %q is not built in (external providers are not supported)", e.IAName, e.LibPath)
		return core.ErrNameNotRegistered
	}
	params, err := core.ParseIAParams(e.IAParams)
	if err != nil {
		core.Logf(core.LevelWarn, "dat_ia_openv: %s (%s:%d): bad provider parameters: %v", e.IAName, e.File, e.Line, err)
		return core.ErrNameNotRegistered
	}
	switch params["transport"] {
	case "verbs":
		cfg.Backend, cfg.Params = "verbs", params
	case "verbs-or-auto":
		// Each backend gets the keys it knows: the device keys are the
		// verbs backend's, timeout= is the TCP wire's.
		cfg.Backend, cfg.Params = "verbs", rdma.Params{}
		cfg.Fallback, cfg.FallbackParams = "soft", rdma.Params{"transport": "auto"}
		for k, v := range params {
			switch k {
			case "transport":
			case "dev", "port", "netdev":
				cfg.Params[k] = v
			case "timeout":
				cfg.FallbackParams[k] = v
			default:
				cfg.Params[k], cfg.FallbackParams[k] = v, v
			}
		}
	default:
		cfg.Backend, cfg.Params = "soft", params
	}
	return nil
}

// transportName names the transport an IA opened on in the "opened" log
// line that datinfo reads: the soft device's own name (soft-shm, soft-tcp,
// soft-auto), or verbs-<device> for an RDMA device.
func transportName(ia *core.IA) string {
	n := ia.Device().Query().Name
	if ia.Backend() == "verbs" {
		return "verbs-" + n
	}
	return n
}

var callIAOpenv = dat12.NewCall("dat_ia_openv", dat12.Args{core.ArgQLen: 2})

//export go_dat_ia_openv
func go_dat_ia_openv(name *C.char, qlen C.DAT_COUNT, asyncEVD *C.DAT_EVD_HANDLE, iaOut *C.DAT_IA_HANDLE,
	major, minor C.DAT_UINT32, threadSafe C.DAT_BOOLEAN) (ret C.DAT_RETURN) {
	c := callIAOpenv
	defer c.Enter().DoneName((*uint32)(&ret), unsafe.Pointer(name))
	cabi.TestPanic("dat_ia_openv")
	switch {
	case name == nil:
		return datReturn(c, dat12.ArgAt(1))
	}
	asked, terminated := cabi.CStringMax(unsafe.Pointer(name), C.DAT_NAME_MAX_LENGTH)
	switch {
	case !terminated:
		return datReturn(c, dat12.ArgAt(1))
	case asyncEVD == nil:
		return datReturn(c, dat12.ArgAt(3))
	case iaOut == nil:
		return datReturn(c, dat12.ArgAt(4))
	case threadSafe != C.DAT_TRUE && threadSafe != C.DAT_FALSE:
		return datReturn(c, dat12.ArgAt(7))
	}
	var given *core.EVD
	given0 := handleIn(asyncEVD)
	cabi.ProbeOut(asyncEVD)
	cabi.ProbeOut(iaOut)
	noAsync := given0 == 1 // DAT_EVD_ASYNC_EXISTS
	if given0 != 0 && !noAsync {
		evd, err := lookup[*core.EVD](given0, core.TypeEVD, core.SubHandleEVDAsync)
		if err != nil {
			return datReturn(c, err)
		}
		given = evd
	} else if qlen <= 0 && !noAsync {
		return datReturn(c, dat12.ArgAt(2))
	}
	reg, err := core.LoadRegistry(core.RegistryPaths(sysconfdir))
	if err != nil {
		return datReturn(c, err)
	}
	// dat_ia_open(3DAT): a RO_AWARE_ prefix only says the program copes
	// with relaxed ordering; it is removed before the name is looked up.
	iaName, _ := strings.CutPrefix(asked, "RO_AWARE_")
	entry, err := reg.Lookup(iaName, int(major), int(minor))
	if err != nil {
		return datReturn(c, err)
	}
	cfg := core.IAConfig{Name: entry.IAName,
		Origin: fmt.Sprintf("%s:%d", entry.File, entry.Line), AsyncQLen: int(qlen),
		AsyncEVD: given, NoAsync: noAsync, Handles: cabi.Handles, Agent: callAgent}
	if err := backendOf(entry, &cfg); err != nil {
		return datReturn(c, err)
	}
	ia, err := core.OpenIA(cfg)
	if err != nil {
		return datReturn(c, err)
	}
	// datinfo reports the transport and the entry in use from this line.
	core.Logf(core.LevelDebug, "dat_ia_openv: %s (%s:%d): opened %s, address %s",
		entry.IAName, entry.File, entry.Line, transportName(ia), ia.Device().Addr())
	putHandle(iaOut, ia)
	handleOut(asyncEVD, asyncHandle(ia))
	return C.DAT_SUCCESS
}

// asyncHandle is the IA's async EVD, or DAT_EVD_OUT_OF_SCOPE for an IA
// opened with DAT_EVD_ASYNC_EXISTS (its async EVD is elsewhere).
func asyncHandle(ia *core.IA) C.godat_handle {
	if e := ia.AsyncEVD(); e != nil {
		return C.godat_handle(core.Base(e).Handle())
	}
	return 2 // DAT_EVD_OUT_OF_SCOPE
}

var callIAClose = dat12.NewCall("dat_ia_close", dat12.Args{})

//export go_dat_ia_close
func go_dat_ia_close(h C.godat_handle, flags C.DAT_CLOSE_FLAGS) (ret C.DAT_RETURN) {
	c := callIAClose
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	if flags != C.DAT_CLOSE_ABRUPT_FLAG && flags != C.DAT_CLOSE_GRACEFUL_FLAG {
		return datReturn(c, dat12.ArgAt(2))
	}
	return datReturn(c, ia.Close(flags == C.DAT_CLOSE_GRACEFUL_FLAG))
}

var callDATSGetIAHandle = dat12.NewCall("dats_get_ia_handle", dat12.Args{})

//export go_dats_get_ia_handle
func go_dats_get_ia_handle(h C.godat_handle, out *C.DAT_IA_HANDLE) (ret C.DAT_RETURN) {
	c := callDATSGetIAHandle
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	putHandle(out, ia)
	return C.DAT_SUCCESS
}

var callIAQuery = dat12.NewCall("dat_ia_query", dat12.Args{})

//export go_dat_ia_query
func go_dat_ia_query(h C.godat_handle, asyncEVD *C.DAT_EVD_HANDLE, iaMask C.DAT_IA_ATTR_MASK, iaAttr *C.DAT_IA_ATTR,
	provMask C.DAT_PROVIDER_ATTR_MASK, provAttr *C.DAT_PROVIDER_ATTR) (ret C.DAT_RETURN) {
	c := callIAQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	switch {
	case iaMask&^C.DAT_IA_ALL != 0:
		return datReturn(c, dat12.ArgAt(3))
	case iaMask != 0 && iaAttr == nil:
		return datReturn(c, dat12.ArgAt(4))
	case provMask&^C.DAT_PROVIDER_FIELD_ALL != 0:
		return datReturn(c, dat12.ArgAt(5))
	case provMask != 0 && provAttr == nil:
		return datReturn(c, dat12.ArgAt(6))
	}
	// The attributes first: an IA closed under the call fails it before
	// any out-parameter is written.
	if iaAttr != nil {
		if err := dat12.PutIAAttr(unsafe.Pointer(iaAttr), ia); err != nil {
			return datReturn(c, err)
		}
	}
	if asyncEVD != nil {
		handleOut(asyncEVD, asyncHandle(ia))
	}
	if provAttr != nil {
		dat12.PutProviderAttr(unsafe.Pointer(provAttr), ia)
	}
	return C.DAT_SUCCESS
}
