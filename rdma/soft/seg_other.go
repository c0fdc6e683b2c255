//go:build !amd64

package soft

// pub64 publishes v at off: a release store (see seg_amd64.go), here an
// atomic store.
func (m seg) pub64(off int, v uint64) { m.st64(off, v) }
