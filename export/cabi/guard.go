package cabi

import (
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"godat/core"
)

// ABI is what the guard needs to know of an ABI's return codes. Success is
// 0 in every DAT ABI.
type ABI struct {
	// Internal is the ABI's DAT_INTERNAL_ERROR, with its error class: what
	// a call returns when it panicked.
	Internal uint32
	// Names names a return code's major and minor parts for the log line
	// of a failed call, as dat_strerror would.
	Names func(ret uint32) (major, minor string)
	// NameMax bounds the IA and provider names the log line quotes.
	NameMax int
}

// Call is one entry point of an ABI, as the guard reports it.
type Call struct {
	Name string
	ABI  *ABI
}

// Enter starts a call: from here a fault on the consumer's memory (a wild
// out-pointer, an input structure in an unmapped page) is a panic on this
// goroutine (debug.SetPanicOnFault), which Done turns into the call's
// internal error, instead of the runtime's fatal "unexpected fault
// address" that kills the program. It returns c, so that an entry point
// starts with `defer c.Enter().Done(...)`. The calls check their outputs
// before they change anything (ProbeOut): a fault then leaves no object
// created and no event taken.
func (c *Call) Enter() *Call {
	debug.SetPanicOnFault(true)
	return c
}

// fault is the runtime error of a memory fault under SetPanicOnFault,
// which says the address.
type fault interface{ Addr() uintptr }

// isFault reports whether a recovered panic is a memory fault.
func isFault(r any) bool {
	_, ok := r.(fault)
	return ok
}

// Done is deferred by every entry point whose object is a handle (obj;
// DoneName is for the calls whose object is a name). It turns a panic into
// the ABI's internal error, so no Go panic crosses into C, and with logging
// on (GODAT_LOG=debug, or a non-zero DAT_DBG_TYPE / DAPL_DBG_TYPE) it writes
// exactly one line for a call that does not succeed: the call, its object
// (handle value and type) and the reason (the return code's names, then the
// underlying cause if there is one). A successful call pays one comparison,
// a failing one with logging off one atomic load.
//
// It must be the deferred function itself: recover only stops a panic when
// the deferred call makes it.
func (c *Call) Done(ret *uint32, obj uintptr) {
	if r := recover(); r != nil {
		c.panicked(ret, Describe(obj), r)
		return
	}
	if *ret != 0 && core.LogEnabled(core.LevelDebug) {
		c.logFailure(*ret, Describe(obj))
	}
}

// DoneName is Done for the calls whose object is a name (the IA name of
// dat_ia_open, a provider's), or nothing (name nil): a NUL-terminated C
// string of at most ABI.NameMax bytes.
func (c *Call) DoneName(ret *uint32, name unsafe.Pointer) {
	if r := recover(); r != nil {
		obj := "" // the name itself may be what faulted
		if !isFault(r) {
			obj = c.describeName(name)
		}
		c.panicked(ret, obj, r)
		return
	}
	if *ret != 0 && core.LogEnabled(core.LevelDebug) {
		c.logFailure(*ret, c.describeName(name))
	}
}

// panicked makes a recovered panic the call's internal error, logged with
// the stack (always: it is a bug, ours or, for a fault, most likely a bad
// pointer argument).
func (c *Call) panicked(ret *uint32, obj string, r any) {
	causes.Delete(unix.Gettid())
	*ret = c.ABI.Internal
	major, _ := c.ABI.Names(*ret)
	if f, ok := r.(fault); ok {
		core.Logf(core.LevelError, "%s(%s): %s: the memory at %#x faulted (a bad pointer argument?)\n%s",
			c.Name, obj, major, f.Addr(), debug.Stack())
		return
	}
	core.Logf(core.LevelError, "%s(%s): %s: internal error: %v\n%s", c.Name, obj, major, r, debug.Stack())
}

// logFailure writes the line of a failed call.
func (c *Call) logFailure(ret uint32, obj string) {
	major, minor := c.ABI.Names(ret)
	var cause error
	if err, ok := causes.LoadAndDelete(unix.Gettid()); ok {
		cause = core.Cause(err.(error))
	}
	if cause != nil {
		core.Logf(core.LevelDebug, "%s(%s): %s %s: %v", c.Name, obj, major, minor, cause)
		return
	}
	core.Logf(core.LevelDebug, "%s(%s): %s %s", c.Name, obj, major, minor)
}

// causes holds, per OS thread, the error of the failing call that thread
// is in (see KeepCause); only while logging is on. A call from C into Go
// stays on its thread from entry to return (cgo locks it there), so the
// thread names the call.
var causes sync.Map // tid (int) -> error

// KeepCause keeps, while logging is on, an error that carries more than its
// DAT code (a cause core attached, or a Go error that is no DAT error at
// all) for the line Done writes when the call returns: the ABI's mapping
// sees the error but not the call, Done sees the call but not the error. A
// plain core.Error, such as the DAT_QUEUE_EMPTY of a polling
// dat_evd_dequeue, costs nothing more.
func KeepCause(err error) {
	if _, plain := err.(core.Error); !plain && core.LogEnabled(core.LevelDebug) {
		causes.Store(unix.Gettid(), err)
	}
}

// handleTypeNames name the object families in log lines.
var handleTypeNames = [core.TypeCount]string{
	core.TypeCR: "CR", core.TypeEP: "EP", core.TypeEVD: "EVD", core.TypeIA: "IA", core.TypeLMR: "LMR",
	core.TypePSP: "PSP", core.TypePZ: "PZ", core.TypeRMR: "RMR", core.TypeRSP: "RSP", core.TypeCNO: "CNO",
	core.TypeSRQ: "SRQ",
}

// Describe names a handle for a log line: its type and value, or why it
// names no object.
func Describe(h uintptr) string {
	if h == 0 {
		return "DAT_HANDLE_NULL"
	}
	if e := Handles.entry(h); e != nil {
		return fmt.Sprintf("%s %#x", handleTypeNames[e.typ], h)
	}
	return fmt.Sprintf("%#x, not a live handle", h)
}

// describeName quotes a C name for a log line.
func (c *Call) describeName(name unsafe.Pointer) string {
	if name == nil {
		return ""
	}
	return fmt.Sprintf("%q", CString(name, c.ABI.NameMax))
}

// forcePanic is set by the test hook GODAT_TEST_PANIC so a C test can check
// that a panic becomes DAT_INTERNAL_ERROR instead of killing the program.
var forcePanic = core.Getenv("GODAT_TEST_PANIC") == "1"

// TestPanic panics when the test hook asks for it.
func TestPanic(call string) {
	if forcePanic {
		panic(fmt.Sprintf("forced panic in %s", call))
	}
}
