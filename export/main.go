// Command export is libdat.so.1: the DAT 1.2 C ABI over the Go core. It is
// built with -buildmode=c-shared; the C entry points are in api.c (written
// by tools/apigen from the DAT 1.2 ABI facts: go generate ./export) and call
// the go_dat_* functions exported here. Each wrapper looks up handles,
// checks its arguments, calls core and returns the DAT code of the outcome;
// package dat12 converts the DAT 1.2 structs and numbering, and package
// cabi holds the handle table, the C memory helpers and the panic guard,
// which a DAT 2.0 library would share.
package main

//go:generate go run ../tools/apigen -o api.c ../ctest/abi/dat12-ofed-layout.tsv api_extra.tsv

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR} -I${SRCDIR}/cabi -O2
#include <stdlib.h>
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	_ "github.com/ianlancetaylor/cgosymbolizer" // Go tracebacks name C frames

	"godat/core"
)

func init() { core.SetEnvSource(cgetenv) }

// cgetenv reads the process environment as the C program sees it now.
func cgetenv(name string) (string, bool) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	v := C.getenv(cs)
	if v == nil {
		return "", false
	}
	return C.GoString(v), true
}

// sysconfdir is where `make install` puts dat.conf; set with -ldflags -X.
var sysconfdir = "/usr/local/etc"

func main() {}
