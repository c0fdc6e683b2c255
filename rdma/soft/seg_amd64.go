package soft

// pub64 publishes v at off: a release store, which the consumer's atomic
// load of the word orders before its reads of what was written ahead of
// it. On amd64 every store is a release store (TSO), and the compiler
// emits stores in program order, so this is a plain store, without the
// locked exchange of an atomic one (each message is published so: a ring
// slot, then the hint, whose compare-and-swap orders both before anything
// later).
func (m seg) pub64(off int, v uint64) { m.put64(off, v) }
