// Package cabi is the part of a DAT library that does not depend on the
// DAT ABI it exports: the handle table, the C memory an object owns, the
// panic guard and the failure log line of every entry point. The DAT 1.2
// library (package main in export/, with its conversions in export/dat12)
// uses it, and a DAT 2.0 library would use it unchanged.
//
// cgo types are per package, so nothing here takes or returns a C type of
// an ABI header: C memory crosses the package boundary as unsafe.Pointer,
// handles as uintptr and return codes as uint32.
package cabi

/*
#cgo CFLAGS: -O2
*/
import "C"
