package rdma

// QPDefaults gives a queue pair the "not supported" answers for the
// optional methods of a backend without CapQPOutstanding or
// CapQPReconfigure; a backend's QP type embeds it.
type QPDefaults struct{}

// Outstanding is not supported.
func (QPDefaults) Outstanding() (send, recv int, err error) { return 0, 0, ErrNotSupported }

// Reconfigure is not supported.
func (QPDefaults) Reconfigure(QPInitAttr) error { return ErrNotSupported }

// CQDefaults gives a completion queue the "not supported" answer for Resize.
type CQDefaults struct{}

// Resize is not supported.
func (CQDefaults) Resize(int) error { return ErrNotSupported }

// DeviceDefaults gives a device the "not supported" answer for CreateSRQ,
// for a backend without CapSRQ.
type DeviceDefaults struct{}

// CreateSRQ is not supported.
func (DeviceDefaults) CreateSRQ(SRQInitAttr) (SRQ, error) { return nil, ErrNotSupported }
