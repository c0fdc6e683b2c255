package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// Backends wrap their sentinels with detail; the DAT code must survive.
func TestMapTransportErrorWrapped(t *testing.T) {
	clearLogEnv(t) // logging off: the errors are the bare sentinels
	wrapped := fmt.Errorf("soft: listen: too many open files: %w", rdma.ErrNoResources)
	require.Equal(t, ErrNoMemory, mapTransportError(wrapped))
	require.Equal(t, ErrConnQualInUse, mapTransportError(rdma.ErrServiceInUse))
	require.Equal(t, ErrLength, mapTransportError(ErrLength))
	require.Equal(t, ErrInternal, mapTransportError(fmt.Errorf("unexpected")))
	require.NoError(t, mapTransportError(nil))
}

// The post calls report the page's codes for backend post failures.
func TestPostError(t *testing.T) {
	require.Equal(t, Error{Kind: KindInsufficientResources, Sub: SubResourceTEP}, postError(rdma.ErrQueueFull, false))
	require.Equal(t, Error{Kind: KindProtectionViolation, Sub: SubProtectionRead}, postError(rdma.ErrProtection, false))
	require.Equal(t, Error{Kind: KindPrivilegesViolation, Sub: SubPrivilegesWrite}, postError(rdma.ErrPrivileges, true))
	require.Equal(t, Error{Kind: KindInvalidParameter, Arg: ArgLocalIOV}, postError(rdma.ErrInvalid, false))
	require.NoError(t, postError(nil, false))
}

func TestTrimSGL(t *testing.T) {
	sgl := []rdma.SGE{{Length: 4}, {Length: 4}, {Length: 4}}
	got := trimSGL(sgl, 6)
	require.Equal(t, []rdma.SGE{{Length: 4}, {Length: 2}}, got)
}

// With logging on, a mapped transport error keeps its cause for the line
// that says why the call failed; its DAT code is unchanged. With logging
// off nothing is attached.
func TestBecauseKeepsCauseOnlyWhenLogging(t *testing.T) {
	clearLogEnv(t)
	raw := fmt.Errorf("soft: listen: %w", rdma.ErrServiceInUse)
	require.Equal(t, ErrConnQualInUse, mapTransportError(raw))
	require.Nil(t, Cause(ErrConnQualInUse))

	captureLog(t, LevelDebug)
	err := mapTransportError(raw)
	require.Equal(t, Error{Kind: KindConnQualInUse, Sub: SubNone}, AsError(err))
	require.ErrorIs(t, err, ErrConnQualInUse)
	require.Same(t, raw, Cause(err))
	require.Nil(t, Cause(ErrQueueEmpty), "a plain DAT error has no cause")
	other := fmt.Errorf("not a DAT error")
	require.Same(t, other, Cause(other), "a Go error is its own cause")
	require.Equal(t, ErrInternal, AsError(other))
	require.True(t, LogEnabled(LevelDebug))
	SetLogLevel(LevelWarn)
	require.False(t, LogEnabled(LevelDebug))
	require.Equal(t, ErrConnQualInUse, mapTransportError(raw))
}

// An invalid argument names its role, not a position; every role has a
// name for messages.
func TestArgRoles(t *testing.T) {
	require.Equal(t, Error{Kind: KindInvalidParameter, Arg: ArgLocalIOV}, AsError(ErrArg(ArgLocalIOV)))
	require.Equal(t, "invalid parameter: local IOV", ErrArg(ArgLocalIOV).Error())
	for a := Arg(1); int(a) < ArgCount; a++ {
		require.NotEmpty(t, a.String(), "role %d", a)
	}
	require.Equal(t, "argument 200", Arg(200).String())
}
