package dat12

import (
	"testing"

	"github.com/stretchr/testify/require"

	"godat/core"
	"godat/export/abifacts"
)

// facts are the DAT 1.2 ABI facts the tables are checked against.
func facts(t *testing.T) *abifacts.Facts {
	t.Helper()
	f, err := abifacts.Read("../../ctest/abi/dat12-ofed-layout.tsv")
	require.NoError(t, err)
	return f
}

// subtypeNames is the DAT 1.2 subtype each core minor code stands for.
var subtypeNames = map[core.Sub]string{
	core.SubNone:                     "DAT_NO_SUBTYPE",
	core.SubInterrupted:              "DAT_SUB_INTERRUPTED",
	core.SubResourceMemory:           "DAT_RESOURCE_MEMORY",
	core.SubResourceDevice:           "DAT_RESOURCE_DEVICE",
	core.SubResourceTEP:              "DAT_RESOURCE_TEP",
	core.SubResourceTEVD:             "DAT_RESOURCE_TEVD",
	core.SubResourceProtectionDomain: "DAT_RESOURCE_PROTECTION_DOMAIN",
	core.SubResourceMemoryRegion:     "DAT_RESOURCE_MEMORY_REGION",
	core.SubResourceErrorHandler:     "DAT_RESOURCE_ERROR_HANDLER",
	core.SubResourceCredits:          "DAT_RESOURCE_CREDITS",
	core.SubResourceSRQ:              "DAT_RESOURCE_SRQ",
	core.SubHandleIA:                 "DAT_INVALID_HANDLE_IA",
	core.SubHandleEP:                 "DAT_INVALID_HANDLE_EP",
	core.SubHandleLMR:                "DAT_INVALID_HANDLE_LMR",
	core.SubHandleRMR:                "DAT_INVALID_HANDLE_RMR",
	core.SubHandlePZ:                 "DAT_INVALID_HANDLE_PZ",
	core.SubHandlePSP:                "DAT_INVALID_HANDLE_PSP",
	core.SubHandleRSP:                "DAT_INVALID_HANDLE_RSP",
	core.SubHandleCR:                 "DAT_INVALID_HANDLE_CR",
	core.SubHandleCNO:                "DAT_INVALID_HANDLE_CNO",
	core.SubHandleEVDCR:              "DAT_INVALID_HANDLE_EVD_CR",
	core.SubHandleEVDRequest:         "DAT_INVALID_HANDLE_EVD_REQUEST",
	core.SubHandleEVDRecv:            "DAT_INVALID_HANDLE_EVD_RECV",
	core.SubHandleEVDConn:            "DAT_INVALID_HANDLE_EVD_CONN",
	core.SubHandleEVDAsync:           "DAT_INVALID_HANDLE_EVD_ASYNC",
	core.SubHandleSRQ:                "DAT_INVALID_HANDLE_SRQ",
	core.SubStateEPUnconnected:       "DAT_INVALID_STATE_EP_UNCONNECTED",
	core.SubStateEPActConnPending:    "DAT_INVALID_STATE_EP_ACTCONNPENDING",
	core.SubStateEPPassConnPending:   "DAT_INVALID_STATE_EP_PASSCONNPENDING",
	core.SubStateEPTentConnPending:   "DAT_INVALID_STATE_EP_TENTCONNPENDING",
	core.SubStateEPConnected:         "DAT_INVALID_STATE_EP_CONNECTED",
	core.SubStateEPDisconnected:      "DAT_INVALID_STATE_EP_DISCONNECTED",
	core.SubStateEPReserved:          "DAT_INVALID_STATE_EP_RESERVED",
	core.SubStateEPComplPending:      "DAT_INVALID_STATE_EP_COMPLPENDING",
	core.SubStateEPDiscPending:       "DAT_INVALID_STATE_EP_DISCPENDING",
	core.SubStateEPProviderControl:   "DAT_INVALID_STATE_EP_PROVIDERCONTROL",
	core.SubStateEPNotReady:          "DAT_INVALID_STATE_EP_NOTREADY",
	core.SubStateEPRecvWatermark:     "DAT_INVALID_STATE_EP_RECV_WATERMARK",
	core.SubStateEPPZ:                "DAT_INVALID_STATE_EP_PZ",
	core.SubStateEPEVDRequest:        "DAT_INVALID_STATE_EP_EVD_REQUEST",
	core.SubStateEPEVDRecv:           "DAT_INVALID_STATE_EP_EVD_RECV",
	core.SubStateEPEVDConnect:        "DAT_INVALID_STATE_EP_EVD_CONNECT",
	core.SubStateEPUnconfigured:      "DAT_INVALID_STATE_EP_UNCONFIGURED",
	core.SubStateEPUnconfReserved:    "DAT_INVALID_STATE_EP_UNCONFRESERVED",
	core.SubStateEPUnconfPassive:     "DAT_INVALID_STATE_EP_UNCONFPASSIVE",
	core.SubStateEPUnconfTentative:   "DAT_INVALID_STATE_EP_UNCONFTENTATIVE",
	core.SubStateCNOInUse:            "DAT_INVALID_STATE_CNO_IN_USE",
	core.SubStateCNODead:             "DAT_INVALID_STATE_CNO_DEAD",
	core.SubStateEVDOpen:             "DAT_INVALID_STATE_EVD_OPEN",
	core.SubStateEVDEnabled:          "DAT_INVALID_STATE_EVD_ENABLED",
	core.SubStateEVDDisabled:         "DAT_INVALID_STATE_EVD_DISABLED",
	core.SubStateEVDWaitable:         "DAT_INVALID_STATE_EVD_WAITABLE",
	core.SubStateEVDUnwaitable:       "DAT_INVALID_STATE_EVD_UNWAITABLE",
	core.SubStateEVDInUse:            "DAT_INVALID_STATE_EVD_IN_USE",
	core.SubStateEVDConfigNotify:     "DAT_INVALID_STATE_EVD_CONFIG_NOTIFY",
	core.SubStateEVDConfigSolicited:  "DAT_INVALID_STATE_EVD_CONFIG_SOLICITED",
	core.SubStateEVDConfigThreshold:  "DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD",
	core.SubStateEVDWaiter:           "DAT_INVALID_STATE_EVD_WAITER",
	core.SubStateEVDAsync:            "DAT_INVALID_STATE_EVD_ASYNC",
	core.SubStateIAInUse:             "DAT_INVALID_STATE_IA_IN_USE",
	core.SubStateLMRInUse:            "DAT_INVALID_STATE_LMR_IN_USE",
	core.SubStateLMRFree:             "DAT_INVALID_STATE_LMR_FREE",
	core.SubStatePZInUse:             "DAT_INVALID_STATE_PZ_IN_USE",
	core.SubStatePZFree:              "DAT_INVALID_STATE_PZ_FREE",
	core.SubStateSRQOperational:      "DAT_INVALID_STATE_SRQ_OPERATIONAL",
	core.SubStateSRQError:            "DAT_INVALID_STATE_SRQ_ERROR",
	core.SubStateSRQInUse:            "DAT_INVALID_STATE_SRQ_IN_USE",
	core.SubPrivilegesRead:           "DAT_PRIVILEGES_READ",
	core.SubPrivilegesWrite:          "DAT_PRIVILEGES_WRITE",
	core.SubPrivilegesRDMARead:       "DAT_PRIVILEGES_RDMA_READ",
	core.SubPrivilegesRDMAWrite:      "DAT_PRIVILEGES_RDMA_WRITE",
	core.SubProtectionRead:           "DAT_PROTECTION_READ",
	core.SubProtectionWrite:          "DAT_PROTECTION_WRITE",
	core.SubProtectionRDMARead:       "DAT_PROTECTION_RDMA_READ",
	core.SubProtectionRDMAWrite:      "DAT_PROTECTION_RDMA_WRITE",
	core.SubAddressUnsupported:       "DAT_INVALID_ADDRESS_UNSUPPORTED",
	core.SubAddressUnreachable:       "DAT_INVALID_ADDRESS_UNREACHABLE",
	core.SubAddressMalformed:         "DAT_INVALID_ADDRESS_MALFORMED",
	core.SubNameNotRegistered:        "DAT_NAME_NOT_REGISTERED",
	core.SubMajorNotFound:            "DAT_MAJOR_NOT_FOUND",
	core.SubMinorNotFound:            "DAT_MINOR_NOT_FOUND",
	core.SubThreadSafetyNotFound:     "DAT_THREAD_SAFETY_NOT_FOUND",
}

// Every core minor code maps to the DAT 1.2 subtype of its name, with the
// value the ABI facts give that name, and no two to the same code.
func TestSubtypeTable(t *testing.T) {
	f := facts(t)
	seen := map[uint32]core.Sub{}
	for s := core.Sub(0); int(s) < core.SubCount; s++ {
		name, ok := subtypeNames[s]
		require.True(t, ok, "core.Sub %d has no DAT 1.2 name here", s)
		v, ok := f.Enums[name]
		require.True(t, ok, "%s is not in the ABI facts", name)
		require.Equal(t, uint32(v), subCodes[s], "core.Sub %d (%s)", s, name)
		prev, dup := seen[subCodes[s]]
		require.False(t, dup, "%s and core.Sub %d share a code", name, prev)
		seen[subCodes[s]] = s
	}
}

// kindNames is the DAT 1.2 return type each core class stands for.
var kindNames = map[core.Kind]string{
	core.KindAbort: "DAT_ABORT", core.KindConnQualInUse: "DAT_CONN_QUAL_IN_USE",
	core.KindInsufficientResources: "DAT_INSUFFICIENT_RESOURCES", core.KindInternalError: "DAT_INTERNAL_ERROR",
	core.KindInvalidHandle: "DAT_INVALID_HANDLE", core.KindInvalidParameter: "DAT_INVALID_PARAMETER",
	core.KindInvalidState: "DAT_INVALID_STATE", core.KindLengthError: "DAT_LENGTH_ERROR",
	core.KindModelNotSupported: "DAT_MODEL_NOT_SUPPORTED", core.KindProviderNotFound: "DAT_PROVIDER_NOT_FOUND",
	core.KindPrivilegesViolation: "DAT_PRIVILEGES_VIOLATION", core.KindProtectionViolation: "DAT_PROTECTION_VIOLATION",
	core.KindQueueEmpty: "DAT_QUEUE_EMPTY", core.KindQueueFull: "DAT_QUEUE_FULL",
	core.KindTimeoutExpired: "DAT_TIMEOUT_EXPIRED", core.KindProviderAlreadyRegistered: "DAT_PROVIDER_ALREADY_REGISTERED",
	core.KindProviderInUse: "DAT_PROVIDER_IN_USE", core.KindInvalidAddress: "DAT_INVALID_ADDRESS",
	core.KindInterruptedCall: "DAT_INTERRUPTED_CALL", core.KindConnQualUnavailable: "DAT_CONN_QUAL_UNAVAILABLE",
	core.KindNotImplemented: "DAT_NOT_IMPLEMENTED",
}

func TestKindTable(t *testing.T) {
	f := facts(t)
	require.Len(t, kindCodes, len(kindNames)+1, "a core class without a DAT 1.2 code")
	for k, name := range kindNames {
		v, ok := f.Enums[name]
		require.True(t, ok, "%s is not in the ABI facts", name)
		require.Equal(t, uint32(v), kindCodes[k], name)
	}
}

func TestErrorMapping(t *testing.T) {
	c := NewCall("dat_test", Args{core.ArgLocalIOV: 3, core.ArgCompletionFlags: 5})
	for _, tc := range []struct {
		err  error
		want uint32
	}{
		{nil, 0},
		{core.ErrArg(core.ArgLocalIOV), 0x80000000 | 0x60000 | 0x26},        // DAT_INVALID_ARG3
		{core.ErrArg(core.ArgCompletionFlags), 0x80000000 | 0x60000 | 0x28}, // DAT_INVALID_ARG5
		{core.ErrArg(core.ArgMemPriv), 0x80000000 | 0x60000},                // not in this call: no subtype
		{ArgAt(10), 0x80000000 | 0x60000 | 0x2d},
		{ArgAt(11), 0x80000000 | 0x60000},
		{core.ErrHandle(core.SubHandleEP), 0x80000000 | 0x50000 | 0x0c},
		{core.ErrState(core.SubStateEPUnconnected), 0x80000000 | 0x70000 | 0x2e},
		{core.ErrAddressMalformed, 0x80000000 | 0x120000 | 0x61},
		{core.ErrNotImplemented, 0xffff0000},
		{core.E(core.Kind(200), core.SubNone), 0x80000000 | 0x40000},
	} {
		require.Equal(t, tc.want, c.Return(tc.err), "%v", tc.err)
	}
	require.Equal(t, 3, c.Position(core.ArgLocalIOV))
	require.Equal(t, 0, c.Position(core.ArgMemPriv))
}
