package rdma

// SRQInitAttr describes a shared receive queue to create (struct
// ibv_srq_init_attr).
type SRQInitAttr struct {
	PD     PD
	MaxWR  int // receives the SRQ holds (posted and not yet taken)
	MaxSGE int // scatter entries per receive
	// Limit arms the limit at creation (see SRQ.Modify); 0: unarmed.
	Limit int
	// Context names the SRQ in its asynchronous events.
	Context uint64
}

// SRQAttr are an SRQ's current attributes (struct ibv_srq_attr).
type SRQAttr struct {
	MaxWR  int
	MaxSGE int
	Limit  int // the armed limit; 0 when not armed
}

// SRQAttrMask selects what SRQ.Modify changes (enum ibv_srq_attr_mask).
type SRQAttrMask uint8

// SRQ attribute mask bits.
const (
	SRQMaxWR SRQAttrMask = 1 << iota // IBV_SRQ_MAX_WR: resize
	SRQLimit                         // IBV_SRQ_LIMIT: arm the limit
)

// SRQ is a shared receive queue (ibv_srq). A QP created with it has no
// receive queue of its own: an arriving message takes the SRQ's oldest
// receive when it is placed (never ahead of need), and its completion goes
// to that QP's receive CQ with that QP's number. A message that finds the
// SRQ empty waits, as for an empty receive queue (an RNR retry without
// limit); a receive posted later lets it proceed.
type SRQ interface {
	// PostRecv appends a receive (ibv_post_srq_recv). Errors: ErrInvalid
	// (too many SGEs), ErrQueueFull (MaxWR receives held), ErrClosed, and
	// with CapPostCheck ErrPrivileges, ErrProtection, ErrInvalid as for
	// QP.PostRecv (checked against the SRQ's PD).
	PostRecv(wr *RecvWR) error
	// Modify resizes the SRQ and/or arms its limit (ibv_modify_srq). An
	// armed limit fires once, as an AsyncSRQLimitReached event, the first
	// time fewer than limit receives are held; at once when that is
	// already so. Arming again replaces the previous arming; limit 0
	// disarms. Errors: ErrInvalid (MaxWR below the receives held, or above
	// the device's; a limit above MaxWR), ErrNotSupported (limit without
	// CapSRQLimit), ErrClosed.
	Modify(attr SRQAttr, mask SRQAttrMask) error
	// Query reports the SRQ's attributes (ibv_query_srq).
	Query() (SRQAttr, error)
	// Destroy frees the SRQ; its receives are dropped (ibv_destroy_srq).
	// Errors: ErrBusy while a QP uses it; ErrClosed.
	Destroy() error
}
