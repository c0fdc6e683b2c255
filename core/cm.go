package core

import (
	"errors"

	"godat/rdma"
)

// runCM is the IA's connection-manager goroutine: it takes the events of
// the IA's QPs and listeners off the IA's CM channel, in order, and turns
// them into DAT events, as the reference providers' CM threads do. It sleeps
// in the channel between events and ends when Close destroys the channel.
func (ia *IA) runCM() {
	defer close(ia.cmDone)
	var ev rdma.CMEvent
	for {
		err := ia.cm.Get(&ev, -1)
		switch {
		case err == nil:
			ia.dispatchCM(&ev)
			ev = rdma.CMEvent{}
		case errors.Is(err, rdma.ErrTimeout):
		default:
			return
		}
	}
}

// dispatchCM delivers one CM event to the object it names.
func (ia *IA) dispatchCM(ev *rdma.CMEvent) {
	if ev.Type == rdma.CMConnectRequest {
		ref := spIDs.get(uint32(ev.Context))
		switch {
		case ref == nil:
			// The service point went away while the request arrived.
			ev.Request.Reject(rdma.RejectRefused, nil)
		case ref.psp != nil:
			ref.psp.connRequest(ev.Request)
		default:
			ref.rsp.connRequest(ev.Request)
		}
		return
	}
	if ep := epIDs.get(uint32(ev.Context)); ep != nil {
		ep.connEvent(ev.Type, ev.PrivateData)
	}
}
