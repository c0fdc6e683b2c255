package soft

// The TCP wire's device state: not in this stage yet (transport=tcp and
// auto listen and connect return ErrNotSupported).

import (
	"net/netip"
	"time"

	"godat/rdma"
)

type tcpDev struct{}

func (t *tcpDev) init()  {}
func (t *tcpDev) close() {}

type tcpListen struct{}

func (l *listener) listenTCP() error { return rdma.ErrNotSupported }
func (l *listener) closeTCP()        {}

func (q *qp) connectTCPLocked(netip.Addr, uint64, []byte, time.Duration) error {
	return rdma.ErrNotSupported
}
