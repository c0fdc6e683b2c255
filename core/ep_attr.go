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

// CompletionFlags are the DTO completion flags. The bits are core's; an
// export layer converts its ABI's flags (and refuses bits it does not
// know).
type CompletionFlags uint32

// Completion flags.
const (
	CompletionSuppress CompletionFlags = 1 << iota
	CompletionUnsignalled
	CompletionSolicitedWait
	CompletionBarrierFence
	CompletionEVDThreshold

	completionAll = CompletionSuppress | CompletionUnsignalled | CompletionSolicitedWait |
		CompletionBarrierFence | CompletionEVDThreshold
)

// ServiceType is the transport service of an endpoint.
type ServiceType uint8

// Service types: the reliable connected service is the one implemented;
// ServiceOther stands for any other an ABI names.
const (
	ServiceRC ServiceType = iota
	ServiceOther
)

// QoS is an endpoint's quality of service.
type QoS uint8

// Qualities of service: best effort is the one implemented; QoSOther
// stands for any other an ABI names.
const (
	QoSBestEffort QoS = iota
	QoSOther
)

// EPAttr are the endpoint attributes of DAT_EP_ATTR that the provider
// interprets; transport- and provider-specific extensions are not used.
type EPAttr struct {
	ServiceType            ServiceType
	MaxMessageSize         uint64
	MaxRDMASize            uint64
	QoS                    QoS
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
		SRQSoftHW: -1, MaxRDMAReadIOV: min(iov, a.maxReadIOV), MaxRDMAWriteIOV: iov,
	}
}

// orDefault is v, or def when v is 0 (an attribute the consumer left 0).
func orDefault[T int | uint64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// effective is a with every limit the consumer left 0 replaced by the limit
// the EP really has, for dat_ep_query: the IA's maximum message and RDMA
// sizes (what posts are held to), RDMA IOVs as deep as the request IOV
// (a read's no deeper than the device scatters into), and the receive
// queue's real depth. The references report stored attributes as given,
// zeros included; filling them in tells the consumer what it can post
// (dat_ep_query(3DAT) leaves the values to the provider), and never a
// smaller value than it set. The RDMA read depths stay as set:
// 0 there means the consumer does not care about RDMA reads
// (dat_cr_accept(3DAT)), a statement, not a missing value.
func (ia *IA) effective(a EPAttr, srq bool) EPAttr {
	l := ia.attr
	a.MaxMessageSize = orDefault(a.MaxMessageSize, l.MaxMessageSize)
	a.MaxRDMASize = orDefault(a.MaxRDMASize, l.MaxRDMASize)
	a.MaxRDMAReadIOV = orDefault(a.MaxRDMAReadIOV, min(a.MaxRequestIOV, l.maxReadIOV))
	a.MaxRDMAWriteIOV = orDefault(a.MaxRDMAWriteIOV, a.MaxRequestIOV)
	if !srq {
		a.MaxRecvDTOs = ia.recvDepth(a)
	}
	return a
}

// checkEPAttr validates attributes against the IA's limits.
func (ia *IA) checkEPAttr(a *EPAttr) error {
	l := ia.attr
	switch {
	case a.ServiceType != ServiceRC,
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
		return ErrArg(ArgEPAttr)
	}
	// Only best effort is implemented.
	if a.QoS != QoSBestEffort {
		return ErrModelNotSupported
	}
	return nil
}
