package main

/*
#include "godat.h"
*/
import "C"

import (
	"godat/export/cabi"
	"godat/export/dat12"
)

var callStrerror = dat12.NewCall("dat_strerror", dat12.Args{})

//export go_dat_strerror
func go_dat_strerror(value C.DAT_RETURN, major, minor **C.char) (ret C.DAT_RETURN) {
	c := callStrerror
	defer c.Enter().DoneName((*uint32)(&ret), nil)
	mj, mn, ok := dat12.Strerror(uint32(value))
	if major == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	cabi.HandleOut(major, uintptr(mj))
	if minor != nil {
		cabi.HandleOut(minor, uintptr(mn))
	}
	if !ok {
		return datReturn(c, dat12.ArgAt(1))
	}
	return C.DAT_SUCCESS
}
