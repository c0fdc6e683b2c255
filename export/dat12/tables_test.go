package dat12

import (
	"testing"

	"github.com/stretchr/testify/require"

	"godat/core"
)

// checkNames checks that table value v is what the ABI facts give name.
func checkNames[K comparable](t *testing.T, what string, names map[K]string, value func(K) uint64) {
	t.Helper()
	f := facts(t)
	for k, name := range names {
		want, ok := f.Enums[name]
		require.True(t, ok, "%s: %s is not in the ABI facts", what, name)
		require.Equal(t, want, value(k), "%s: %v (%s)", what, k, name)
	}
}

// Every core completion status and event number has its DAT 1.2 value, by
// the ABI facts.
func TestEventTables(t *testing.T) {
	statuses := map[core.DTOStatus]string{
		core.DTOSuccess: "DAT_DTO_SUCCESS", core.DTOFlushed: "DAT_DTO_ERR_FLUSHED",
		core.DTOLocalLength: "DAT_DTO_ERR_LOCAL_LENGTH", core.DTOLocalEP: "DAT_DTO_ERR_LOCAL_EP",
		core.DTOLocalProtection: "DAT_DTO_ERR_LOCAL_PROTECTION", core.DTOBadResponse: "DAT_DTO_ERR_BAD_RESPONSE",
		core.DTORemoteAccess: "DAT_DTO_ERR_REMOTE_ACCESS", core.DTORemoteResponder: "DAT_DTO_ERR_REMOTE_RESPONDER",
		core.DTOTransport: "DAT_DTO_ERR_TRANSPORT", core.DTOReceiverNotReady: "DAT_DTO_ERR_RECEIVER_NOT_READY",
		core.DTOPartialPacket: "DAT_DTO_ERR_PARTIAL_PACKET", core.DTORMROperationFailed: "DAT_RMR_OPERATION_FAILED",
	}
	require.Len(t, dtoStatuses, len(statuses))
	checkNames(t, "DTO status", statuses, func(s core.DTOStatus) uint64 { return uint64(dtoStatuses[s]) })

	events := map[core.EventNumber]string{
		core.EventDTOCompletion: "DAT_DTO_COMPLETION_EVENT", core.EventRMRBindCompletion: "DAT_RMR_BIND_COMPLETION_EVENT",
		core.EventConnectionRequest: "DAT_CONNECTION_REQUEST_EVENT", core.EventConnEstablished: "DAT_CONNECTION_EVENT_ESTABLISHED",
		core.EventConnPeerRejected: "DAT_CONNECTION_EVENT_PEER_REJECTED", core.EventConnNonPeerRejected: "DAT_CONNECTION_EVENT_NON_PEER_REJECTED",
		core.EventConnAcceptCompletionError: "DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR",
		core.EventConnDisconnected:          "DAT_CONNECTION_EVENT_DISCONNECTED", core.EventConnBroken: "DAT_CONNECTION_EVENT_BROKEN",
		core.EventConnTimedOut: "DAT_CONNECTION_EVENT_TIMED_OUT", core.EventConnUnreachable: "DAT_CONNECTION_EVENT_UNREACHABLE",
		core.EventAsyncEVDOverflow: "DAT_ASYNC_ERROR_EVD_OVERFLOW", core.EventAsyncIACatastrophic: "DAT_ASYNC_ERROR_IA_CATASTROPHIC",
		core.EventAsyncEPBroken: "DAT_ASYNC_ERROR_EP_BROKEN", core.EventAsyncTimedOut: "DAT_ASYNC_ERROR_TIMED_OUT",
		core.EventAsyncProviderInternalError: "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR", core.EventSoftware: "DAT_SOFTWARE_EVENT",
	}
	require.Len(t, eventNumbers, len(events)+1) // core numbers events from 1
	checkNames(t, "event", events, func(e core.EventNumber) uint64 { return uint64(eventNumbers[e]) })

	reasons := map[core.AsyncReason]string{
		core.ReasonEPTransferToError: "DAT_EP_TRANSFER_TO_ERROR", core.ReasonEPOtherError: "DAT_EP_OTHER_ERROR",
		core.ReasonSRQSoftHighWatermark: "DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT", core.ReasonEVDOverflow: "DAT_EVD_OVERFLOW_ERROR",
		core.ReasonSRQLowWatermark: "DAT_SRQ_LOW_WATERMARK_EVENT", core.ReasonIACatastrophic: "DAT_IA_CATASTROPHIC_ERROR",
		core.ReasonProviderInternalFailure: "DAT_IA_OTHER_ERROR",
	}
	require.Len(t, reasons, core.AsyncReasonCount-1)
	checkNames(t, "async reason", reasons, func(r core.AsyncReason) uint64 { return uint64(asyncReasons[r]) })
}

// EP states and handle types have their DAT 1.2 values.
func TestStateAndTypeTables(t *testing.T) {
	states := map[core.EPState]string{
		core.EPUnconnected: "DAT_EP_STATE_UNCONNECTED", core.EPUnconfiguredUnconnected: "DAT_EP_STATE_UNCONFIGURED_UNCONNECTED",
		core.EPReserved: "DAT_EP_STATE_RESERVED", core.EPUnconfiguredReserved: "DAT_EP_STATE_UNCONFIGURED_RESERVED",
		core.EPPassiveConnectionPending:   "DAT_EP_STATE_PASSIVE_CONNECTION_PENDING",
		core.EPUnconfiguredPassive:        "DAT_EP_STATE_UNCONFIGURED_PASSIVE",
		core.EPActiveConnectionPending:    "DAT_EP_STATE_ACTIVE_CONNECTION_PENDING",
		core.EPTentativeConnectionPending: "DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING",
		core.EPUnconfiguredTentative:      "DAT_EP_STATE_UNCONFIGURED_TENTATIVE", core.EPConnected: "DAT_EP_STATE_CONNECTED",
		core.EPDisconnectPending: "DAT_EP_STATE_DISCONNECT_PENDING", core.EPDisconnected: "DAT_EP_STATE_DISCONNECTED",
		core.EPCompletionPending: "DAT_EP_STATE_COMPLETION_PENDING",
	}
	require.Len(t, epStates, len(states))
	checkNames(t, "EP state", states, func(s core.EPState) uint64 { return uint64(EPState(s)) })
	types := map[core.HandleType]string{
		core.TypeCR: "DAT_HANDLE_TYPE_CR", core.TypeEP: "DAT_HANDLE_TYPE_EP", core.TypeEVD: "DAT_HANDLE_TYPE_EVD",
		core.TypeIA: "DAT_HANDLE_TYPE_IA", core.TypeLMR: "DAT_HANDLE_TYPE_LMR", core.TypePSP: "DAT_HANDLE_TYPE_PSP",
		core.TypePZ: "DAT_HANDLE_TYPE_PZ", core.TypeRMR: "DAT_HANDLE_TYPE_RMR", core.TypeRSP: "DAT_HANDLE_TYPE_RSP",
		core.TypeCNO: "DAT_HANDLE_TYPE_CNO", core.TypeSRQ: "DAT_HANDLE_TYPE_SRQ",
	}
	checkNames(t, "handle type", types, func(h core.HandleType) uint64 { return uint64(HandleType(h)) })
}

// flagCase is one DAT 1.2 flag and the core flag it stands for.
type flagCase[G ~uint8 | ~uint32] struct {
	name string
	g    G
}

// checkFlags checks a flag conversion both ways against the ABI facts, and
// that a bit DAT 1.2 does not define is refused.
func checkFlags[G ~uint8 | ~uint32](t *testing.T, cases []flagCase[G], from func(uint32) (G, bool), to func(G) uint32, undefined uint32) {
	t.Helper()
	f := facts(t)
	var all uint32
	var allG G
	for _, c := range cases {
		v, ok := f.Enums[c.name]
		require.True(t, ok, "%s is not in the ABI facts", c.name)
		g, ok := from(uint32(v))
		require.True(t, ok, c.name)
		require.Equal(t, c.g, g, c.name)
		require.Equal(t, uint32(v), to(c.g), c.name)
		all |= uint32(v)
		allG |= c.g
	}
	g, ok := from(all)
	require.True(t, ok)
	require.Equal(t, allG, g)
	_, ok = from(all | undefined)
	require.False(t, ok, "an undefined bit is refused")
}

func TestFlagConversions(t *testing.T) {
	checkFlags(t, []flagCase[core.CompletionFlags]{
		{"DAT_COMPLETION_SUPPRESS_FLAG", core.CompletionSuppress},
		{"DAT_COMPLETION_SOLICITED_WAIT_FLAG", core.CompletionSolicitedWait},
		{"DAT_COMPLETION_UNSIGNALLED_FLAG", core.CompletionUnsignalled},
		{"DAT_COMPLETION_BARRIER_FENCE_FLAG", core.CompletionBarrierFence},
		{"DAT_COMPLETION_EVD_THRESHOLD_FLAG", core.CompletionEVDThreshold},
	}, CompletionFlags, func(g core.CompletionFlags) uint32 { return uint32(completionFlagsToC(g)) }, 0x100)
	checkFlags(t, []flagCase[core.MemPriv]{
		{"DAT_MEM_PRIV_LOCAL_READ_FLAG", core.PrivLocalRead},
		{"DAT_MEM_PRIV_REMOTE_READ_FLAG", core.PrivRemoteRead},
		{"DAT_MEM_PRIV_LOCAL_WRITE_FLAG", core.PrivLocalWrite},
		{"DAT_MEM_PRIV_REMOTE_WRITE_FLAG", core.PrivRemoteWrite},
	}, MemPriv, func(g core.MemPriv) uint32 { return uint32(memPrivToC(g)) }, 0x4)
	checkFlags(t, []flagCase[core.EVDFlags]{
		{"DAT_EVD_SOFTWARE_FLAG", core.EVDSoftware}, {"DAT_EVD_CR_FLAG", core.EVDCR}, {"DAT_EVD_DTO_FLAG", core.EVDDTO},
		{"DAT_EVD_CONNECTION_FLAG", core.EVDConnection}, {"DAT_EVD_RMR_BIND_FLAG", core.EVDRMRBind},
		{"DAT_EVD_ASYNC_FLAG", core.EVDAsync},
	}, EVDFlags, func(g core.EVDFlags) uint32 { return uint32(evdFlagsToC(g)) }, 0x2)
	mp, ok := MemPriv(uint32(facts(t).Enums["DAT_MEM_PRIV_ALL_FLAG"]))
	require.True(t, ok)
	require.Equal(t, core.PrivAll, mp)

	f := facts(t)
	for name, g := range map[string]core.PSPFlags{"DAT_PSP_CONSUMER_FLAG": core.PSPConsumer, "DAT_PSP_PROVIDER_FLAG": core.PSPProvider} {
		p, ok := PSPFlags(uint32(f.Enums[name]))
		require.True(t, ok, name)
		require.Equal(t, g, p, name)
		require.Equal(t, uint32(f.Enums[name]), uint32(pspFlagsToC(g)), name)
	}
	_, ok = PSPFlags(2)
	require.False(t, ok)
}
