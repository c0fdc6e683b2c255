package core

import (
	"errors"
	"net/netip"
	"time"

	"godat/rdma"
)

// Connect starts an active connection (dat_ep_connect); the outcome arrives
// as a connection event on the EP's connect EVD.
func (ep *EP) Connect(addr netip.AddrPort, qual uint64, timeout time.Duration, private []byte) error {
	if len(private) > ep.ia.attr.MaxPrivateData {
		return ErrArg(ArgPrivateData)
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
	ep.setStateLocked(EPActiveConnectionPending)
	ep.remote, ep.connQual = addr, qual
	if err := ep.qp.Connect(addr, qual, append([]byte(nil), private...), timeout); err != nil {
		ep.setStateLocked(EPUnconnected)
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

// connEvent turns a connection-manager event of the EP's QP into the EP's
// state and a DAT connection event on its connect EVD. It runs on the IA's
// CM goroutine.
func (ep *EP) connEvent(kind rdma.CMEventType, priv []byte) {
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		return
	}
	out := Event{notify: true}
	switch kind {
	case rdma.CMEstablished:
		if ep.state == EPConnected {
			ep.mu.Unlock()
			return
		}
		active := ep.state == EPActiveConnectionPending
		ep.setStateLocked(EPConnected)
		ep.hwBroken = false
		ep.breaking.Store(false)
		defer ep.connectedWatermark()
		out.Number = EventConnEstablished
		if active {
			ep.private = append([]byte(nil), priv...)
			out.PrivateData = ep.private
		} else if r := ep.qp.RemoteAddr(); r.IsValid() {
			ep.remote = r
		}
	case rdma.CMRejected, rdma.CMRefused, rdma.CMUnreachable, rdma.CMTimedOut, rdma.CMAcceptError:
		if ep.state == EPDisconnected || ep.state == EPUnconnected {
			ep.mu.Unlock()
			return
		}
		ep.setStateLocked(EPDisconnected)
		out.Number = connFailures[kind]
	case rdma.CMDisconnected, rdma.CMBroken:
		if ep.state == EPDisconnected || ep.state == EPUnconnected {
			ep.mu.Unlock()
			return
		}
		// A connect cancelled by dat_ep_disconnect ends as a disconnect.
		ep.setStateLocked(EPDisconnected)
		out.Number = EventConnDisconnected
		if kind == rdma.CMBroken || ep.hwBroken {
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

// connFailures are the DAT events of connections that never came up.
var connFailures = map[rdma.CMEventType]EventNumber{
	rdma.CMRejected:    EventConnPeerRejected,
	rdma.CMRefused:     EventConnNonPeerRejected,
	rdma.CMUnreachable: EventConnUnreachable,
	rdma.CMTimedOut:    EventConnTimedOut,
	rdma.CMAcceptError: EventConnAcceptCompletionError,
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
	if ep.state == EPConnected {
		ep.setStateLocked(EPDisconnectPending)
	}
	ep.mu.Unlock()
	if err := ep.qp.Disconnect(graceful); err != nil && !errors.Is(err, rdma.ErrState) {
		return mapTransportError(err)
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
	ep.rekeyQP()
	ep.setStateLocked(EPUnconnected)
	ep.private = nil
	ep.remote, ep.connQual = netip.AddrPort{}, 0
	ep.passive, ep.lisQual = false, 0
	return nil
}
