// Command export is libdat.so.1: the DAT 1.2 C ABI over the Go core. It is
// built with -buildmode=c-shared; the C entry points are in api.c and call
// the go_dat_* functions exported here. This package is the only place with
// C types: each wrapper looks up handles, converts C structs, calls core,
// maps the error and recovers panics.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR} -O2
#include "godat.h"
*/
import "C"

import (
	_ "github.com/ianlancetaylor/cgosymbolizer" // Go tracebacks name C frames
)

// sysconfdir is where `make install` puts dat.conf; set with -ldflags -X.
var sysconfdir = "/usr/local/etc"

func main() {}
