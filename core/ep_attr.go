package core

// EPState is a DAT endpoint state, in specification order.
type EPState uint8

// Endpoint states.
const (
	EPUnconnected EPState = iota
	EPUnconfiguredUnconnected
	EPReserved
	EPUnconfiguredReserved
	EPPassiveConnectionPending
	EPUnconfiguredPassive
	EPActiveConnectionPending
	EPTentativeConnectionPending
	EPUnconfiguredTentative
	EPConnected
	EPDisconnectPending
	EPDisconnected
	EPCompletionPending
)

// CompletionFlags are the DAT DTO completion flags; the values are the DAT
// flag bits, shared by both DAT ABIs.
type CompletionFlags uint32

// Completion flags.
const (
	CompletionSuppress      CompletionFlags = 0x01
	CompletionSolicitedWait CompletionFlags = 0x02
	CompletionUnsignalled   CompletionFlags = 0x04
	CompletionBarrierFence  CompletionFlags = 0x08
	CompletionEVDThreshold  CompletionFlags = 0x10
	completionAll                           = 0x1f
)

// EPAttr are the endpoint attributes of DAT_EP_ATTR that the provider
// interprets; transport- and provider-specific extensions are not used.
type EPAttr struct {
	ServiceType            uint32
	MaxMessageSize         uint64
	MaxRDMASize            uint64
	QoS                    uint32
	RecvCompletionFlags    CompletionFlags
	RequestCompletionFlags CompletionFlags
	MaxRecvDTOs            int
	MaxRequestDTOs         int
	MaxRecvIOV             int
	MaxRequestIOV          int
	MaxRDMAReadIn          int
	MaxRDMAReadOut         int
	SRQSoftHW              int
	MaxRDMAReadIOV         int
	MaxRDMAWriteIOV        int
}

// DefaultEPAttr is what an EP created with NULL attributes gets.
func (ia *IA) DefaultEPAttr() EPAttr {
	a := ia.attr
	iov := min(a.MaxIOVSegments, 16)
	dtos := min(a.MaxDTOPerEP, 256)
	return EPAttr{
		MaxMessageSize: a.MaxMessageSize, MaxRDMASize: a.MaxRDMASize,
		RecvCompletionFlags: 0, RequestCompletionFlags: 0,
		MaxRecvDTOs: dtos, MaxRequestDTOs: dtos, MaxRecvIOV: iov, MaxRequestIOV: iov,
		MaxRDMAReadIn: a.MaxRDMAReadPerEPIn, MaxRDMAReadOut: a.MaxRDMAReadPerEPOut,
		SRQSoftHW: -1, MaxRDMAReadIOV: iov, MaxRDMAWriteIOV: iov,
	}
}

// checkEPAttr validates attributes against the IA's limits; arg is the
// argument position reported on failure.
func (ia *IA) checkEPAttr(a *EPAttr, arg int) error {
	l := ia.attr
	switch {
	case a.ServiceType != 0,
		a.MaxMessageSize > l.MaxMessageSize, a.MaxRDMASize > l.MaxRDMASize,
		a.MaxRecvDTOs < 0 || a.MaxRecvDTOs > l.MaxDTOPerEP,
		a.MaxRequestDTOs <= 0 || a.MaxRequestDTOs > l.MaxDTOPerEP,
		a.MaxRecvIOV < 0 || a.MaxRecvIOV > l.MaxIOVSegments,
		a.MaxRequestIOV <= 0 || a.MaxRequestIOV > l.MaxIOVSegments,
		a.MaxRDMAReadIn < 0 || a.MaxRDMAReadIn > l.MaxRDMAReadPerEPIn,
		a.MaxRDMAReadOut < 0 || a.MaxRDMAReadOut > l.MaxRDMAReadPerEPOut,
		a.MaxRDMAReadIOV < 0 || a.MaxRDMAReadIOV > l.MaxIOVSegments,
		a.MaxRDMAWriteIOV < 0 || a.MaxRDMAWriteIOV > l.MaxIOVSegments,
		a.RecvCompletionFlags&^completionAll != 0, a.RequestCompletionFlags&^completionAll != 0:
		return ErrArg(arg)
	}
	// Only best effort (0 in every DAT ABI) is implemented.
	if a.QoS != 0 {
		return ErrModelNotSupported
	}
	return nil
}
