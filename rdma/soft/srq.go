package soft

// Shared receive queues are not implemented yet: Device.CreateSRQ returns
// rdma.ErrNoResources and CreateQP rejects a QPConfig with an SRQ. The QP's
// receive matching goes through qp.peekRecv/popRecv so an SRQ can feed it.
