package rdma

// AsyncEventType is the kind of an asynchronous event (enum ibv_event_type).
type AsyncEventType uint8

// Asynchronous events.
const (
	// AsyncQPFatal: the QP went to Error for a reason of its own, not a
	// disconnect (IBV_EVENT_QP_FATAL). Context is the QP's.
	AsyncQPFatal AsyncEventType = iota + 1
	// AsyncQPAccessErr: the peer's request violated this QP's access
	// rights (a bad remote key, range or right); the QP went to Error
	// (IBV_EVENT_QP_ACCESS_ERR). Context is the QP's.
	AsyncQPAccessErr
	// AsyncQPLastWQE: a QP on an SRQ went to Error and will take no more of
	// its receives (IBV_EVENT_QP_LAST_WQE_REACHED). Context is the QP's.
	AsyncQPLastWQE
	// AsyncSRQLimitReached: fewer receives than the armed limit are held;
	// the limit is disarmed (IBV_EVENT_SRQ_LIMIT_REACHED). Context is the
	// SRQ's.
	AsyncSRQLimitReached
	// AsyncCQOverrun: more completions than the CQ's depth (IBV_EVENT_CQ_ERR).
	// With CapCQGrow nothing is lost and the event comes once per excursion
	// past the depth. Context is the CQ's.
	AsyncCQOverrun
	// AsyncPortDown: the port the device uses went down (IBV_EVENT_PORT_ERR).
	AsyncPortDown
	// AsyncPortUp: the port came back (IBV_EVENT_PORT_ACTIVE).
	AsyncPortUp
	// AsyncDeviceFatal: the device is unusable (IBV_EVENT_DEVICE_FATAL).
	AsyncDeviceFatal
)

// AsyncEvent is one asynchronous event (struct ibv_async_event).
type AsyncEvent struct {
	Type    AsyncEventType
	Context uint64 // the QP's, SRQ's or CQ's context; 0 for device events
	// Origin says, for the log, where the event came from when a backend
	// has more than one source for it (the device, or the backend's own
	// emulation); empty otherwise.
	Origin string
}

// AsyncHandler receives a device's asynchronous events, from backend
// goroutines or from inside calls into the device; it must not block or
// call back into the device.
type AsyncHandler func(ev AsyncEvent)
