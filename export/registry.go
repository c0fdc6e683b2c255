package main

/*
#include "godat.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"godat/core"
	"godat/export/cabi"
	"godat/export/dat12"
)

// The dynamic registry: providers that announced themselves through
// dat_registry_add_provider. Names are kept so duplicates are refused and
// dat_registry_list_providers shows them; opening an IA through an external
// provider table is not supported (dat_ia_open reports the name as not
// registered and logs why).
var dynamicRegistry = struct {
	sync.Mutex
	byName map[string]dynamicProvider
}{byName: map[string]dynamicProvider{}}

type dynamicProvider struct {
	provider uintptr
	info     C.DAT_PROVIDER_INFO
}

const maxDynamicProviders = 256

// providerName is the IA name in a provider's info, for the log line of a
// failed call (nil when there is no info).
func providerName(info *C.DAT_PROVIDER_INFO) *C.char {
	if info == nil {
		return nil
	}
	return &info.ia_name[0]
}

var callRegistryAddProvider = dat12.NewCall("dat_registry_add_provider", dat12.Args{})

//export go_dat_registry_add_provider
func go_dat_registry_add_provider(p *C.DAT_PROVIDER, info *C.DAT_PROVIDER_INFO) (ret C.DAT_RETURN) {
	c := callRegistryAddProvider
	defer c.Enter().DoneName((*uint32)(&ret), unsafe.Pointer(providerName(info)))
	if p == nil {
		return datReturn(c, dat12.ArgAt(1))
	}
	if info == nil || info.ia_name[0] == 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	name := cabi.CString(unsafe.Pointer(&info.ia_name[0]), C.DAT_NAME_MAX_LENGTH)
	r := &dynamicRegistry
	r.Lock()
	defer r.Unlock()
	if _, dup := r.byName[name]; dup {
		return datReturn(c, core.E(core.KindProviderAlreadyRegistered, core.SubNone))
	}
	if len(r.byName) >= maxDynamicProviders {
		return datReturn(c, core.ErrNoMemory)
	}
	r.byName[name] = dynamicProvider{provider: uintptr(unsafe.Pointer(p)), info: *info}
	return C.DAT_SUCCESS
}

var callRegistryRemoveProvider = dat12.NewCall("dat_registry_remove_provider", dat12.Args{})

//export go_dat_registry_remove_provider
func go_dat_registry_remove_provider(p *C.DAT_PROVIDER, info *C.DAT_PROVIDER_INFO) (ret C.DAT_RETURN) {
	c := callRegistryRemoveProvider
	defer c.Enter().DoneName((*uint32)(&ret), unsafe.Pointer(providerName(info)))
	if p == nil {
		return datReturn(c, dat12.ArgAt(1))
	}
	if info == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	name := cabi.CString(unsafe.Pointer(&info.ia_name[0]), C.DAT_NAME_MAX_LENGTH)
	r := &dynamicRegistry
	r.Lock()
	defer r.Unlock()
	d, ok := r.byName[name]
	if !ok || d.provider != uintptr(unsafe.Pointer(p)) {
		return datReturn(c, dat12.ArgAt(1))
	}
	delete(r.byName, name)
	return C.DAT_SUCCESS
}

var callRegistryListProviders = dat12.NewCall("dat_registry_list_providers", dat12.Args{})

//export go_dat_registry_list_providers
func go_dat_registry_list_providers(max C.DAT_COUNT, n *C.DAT_COUNT, list **C.DAT_PROVIDER_INFO) (ret C.DAT_RETURN) {
	c := callRegistryListProviders
	defer c.Enter().DoneName((*uint32)(&ret), nil)
	if n == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	reg, err := core.LoadRegistry(core.RegistryPaths(sysconfdir))
	if err != nil {
		return datReturn(c, err)
	}
	var infos []C.DAT_PROVIDER_INFO
	for _, e := range reg.Entries() {
		if e.Kernel {
			continue
		}
		var i C.DAT_PROVIDER_INFO
		dat12.PutProviderInfo(unsafe.Pointer(&i), e)
		infos = append(infos, i)
	}
	dynamicRegistry.Lock()
	for _, d := range dynamicRegistry.byName {
		infos = append(infos, d.info)
	}
	dynamicRegistry.Unlock()
	if reg.Path() == "" {
		// dat_registry_list_providers(3DAT): DAT_INTERNAL_ERROR, "The
		// DAT static registry is missing" (no dat.conf at all).
		core.Logf(core.LevelWarn, "dat_registry_list_providers: no static registry (%q)", core.RegistryPaths(sysconfdir))
		*n = C.DAT_COUNT(len(infos))
		return datReturn(c, core.ErrInternal)
	}
	// The page makes a list shorter than the registry DAT_INVALID_PARAMETER;
	// every reference (OFED compat-dapl, illumos libdat, OFED dapl 2.x)
	// fills max_to_return entries instead and succeeds, reporting how many
	// it wrote, and programs depend on it (an MPI asks for 8). Only no room
	// at all is refused, and the references blame argument 1 for it.
	if max == 0 {
		*n = C.DAT_COUNT(len(infos))
		return datReturn(c, dat12.ArgAt(1))
	}
	if max < 0 || list == nil {
		*n = C.DAT_COUNT(len(infos))
		return datReturn(c, dat12.ArgAt(3))
	}
	k := min(int(max), len(infos))
	dst := unsafe.Slice(list, k)
	for i := range dst {
		if dst[i] == nil {
			*n = C.DAT_COUNT(len(infos))
			return datReturn(c, dat12.ArgAt(3))
		}
	}
	for i := range dst {
		*dst[i] = infos[i]
	}
	*n = C.DAT_COUNT(k)
	return C.DAT_SUCCESS
}
