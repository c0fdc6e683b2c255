// Package dat12 is the DAT 1.2 side of the library's conversions: DAT 1.2
// structs to and from core's types, and the tables that map core's
// numbering (error classes and minor codes, argument roles, event numbers,
// completion statuses, flags) to DAT 1.2's. The wrappers of package main
// (export/) use it; a DAT 2.0 library would have its own such package and
// share package cabi.
//
// cgo types are per package: the C structs of the wrappers reach these
// functions as unsafe.Pointer, return codes leave as uint32.
package dat12

/*
#cgo CFLAGS: -I${SRCDIR}/../../include -O2
*/
import "C"
