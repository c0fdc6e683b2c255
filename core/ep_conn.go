package core

import (
	"net/netip"
	"time"

	"godat/rdma"
)

// Connect starts an active connection (dat_ep_connect); the outcome arrives
// as a connection event on the EP's connect EVD.
func (ep *EP) Connect(addr netip.AddrPort, qual uint64, timeout time.Duration, private []byte) error {
	if len(private) > ep.ia.attr.MaxPrivateData {
		return ErrArg(5)
	}
	// No host can be reached at an unspecified or multicast address.
	if a := addr.Addr(); !a.IsValid() || a.IsUnspecified() || a.IsMulticast() {
		return ErrAddressMalformed
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return ErrHandle(SubHandleEP)
	}
	if ep.state != EPUnconnected {
		return ErrState(epStateSub(ep.state))
	}
	if ep.connEVD == nil {
		return ErrHandle(SubHandleEVDConn)
	}
	ep.state = EPActiveConnectionPending
	ep.remote, ep.connQual = addr, qual
	if err := ep.qp.Connect(addr, qual, append([]byte(nil), private...), timeout); err != nil {
		ep.state = EPUnconnected
		return mapTransportError(err)
	}
	return nil
}

// DupConnect connects to the same remote service point as other
// (dat_ep_dup_connect).
func (ep *EP) DupConnect(other *EP, timeout time.Duration, private []byte) error {
	other.mu.Lock()
	addr, qual, st := other.remote, other.connQual, other.state
	other.mu.Unlock()
	if st != EPConnected || !addr.IsValid() {
		return ErrState(epStateSub(st))
	}
	return ep.Connect(addr, qual, timeout, private)
}

// ConnEvent is called by the transport with the EP's connection events.
func (ep *EP) ConnEvent(_ rdma.QP, ev rdma.ConnEvent) {
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		return
	}
	out := Event{notify: true}
	switch ev.Kind {
	case rdma.ConnEstablished:
		if ep.state == EPConnected {
			ep.mu.Unlock()
			return
		}
		active := ep.state == EPActiveConnectionPending
		ep.state = EPConnected
		ep.hwBroken = false
		ep.breaking.Store(false)
		defer ep.connectedWatermark()
		out.Number = EventConnEstablished
		if active {
			ep.private = append([]byte(nil), ev.PrivateData...)
			out.PrivateData = ep.private
		} else if r := ep.qp.RemoteAddr(); r.IsValid() {
			ep.remote = r
		}
	case rdma.ConnRejected:
		ep.state = EPDisconnected
		out.Number = EventConnPeerRejected
	case rdma.ConnNonPeerRejected:
		ep.state = EPDisconnected
		out.Number = EventConnNonPeerRejected
	case rdma.ConnUnreachable:
		ep.state = EPDisconnected
		out.Number = EventConnUnreachable
	case rdma.ConnTimedOut:
		ep.state = EPDisconnected
		out.Number = EventConnTimedOut
	case rdma.ConnAcceptError:
		ep.state = EPDisconnected
		out.Number = EventConnAcceptCompletionError
	case rdma.ConnDisconnected, rdma.ConnBroken:
		if ep.state == EPDisconnected || ep.state == EPUnconnected {
			ep.mu.Unlock()
			return
		}
		ep.state = EPDisconnected
		out.Number = EventConnDisconnected
		if ev.Kind == rdma.ConnBroken || ep.hwBroken {
			out.Number = EventConnBroken
		}
		ep.hwBroken = false
		ep.breaking.Store(false)
	default:
		ep.mu.Unlock()
		return
	}
	out.EP = ep
	evd := ep.connEVD
	ep.mu.Unlock()
	if evd != nil {
		evd.push(&out)
	}
}

// Disconnect tears the connection down (dat_ep_disconnect). Both sides get
// DAT_CONNECTION_EVENT_DISCONNECTED; posted work is flushed.
func (ep *EP) Disconnect(graceful bool) error {
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	switch ep.state {
	// Unconnected, reserved, passive and tentative pending EPs are refused
	// (dat_ep_disconnect: "is disallowed").
	case EPConnected, EPActiveConnectionPending, EPDisconnectPending, EPCompletionPending:
	case EPDisconnected:
		ep.mu.Unlock()
		return nil
	default:
		s := ep.state
		ep.mu.Unlock()
		return ErrState(epStateSub(s))
	}
	pending := ep.state == EPActiveConnectionPending
	if ep.state == EPConnected {
		ep.state = EPDisconnectPending
	}
	ep.mu.Unlock()
	if err := ep.qp.Disconnect(graceful); err != nil && err != rdma.ErrState {
		return mapTransportError(err)
	}
	if pending {
		// A connect that is cancelled never reaches the peer's accept;
		// report it as a disconnect so the consumer sees an end.
		ep.ConnEvent(ep.qp, rdma.ConnEvent{Kind: rdma.ConnDisconnected})
	}
	return nil
}

// Reset returns a disconnected EP to the unconnected state so it can be
// reused (dat_ep_reset); posted receives are flushed.
func (ep *EP) Reset() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return ErrHandle(SubHandleEP)
	}
	if ep.state != EPDisconnected && ep.state != EPUnconnected {
		return ErrState(epStateSub(ep.state))
	}
	if ep.state == EPUnconnected {
		return nil
	}
	if err := ep.qp.Reset(); err != nil {
		return mapTransportError(err)
	}
	ep.state = EPUnconnected
	ep.private = nil
	ep.remote, ep.connQual = netip.AddrPort{}, 0
	ep.passive, ep.lisQual = false, 0
	return nil
}
