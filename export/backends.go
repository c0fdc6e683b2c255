package main

// The transport backends built into the library; each registers itself
// with rdma.Register under the name backendOf picks. The verbs backend
// links against nothing: it dlopens libibverbs and librdmacm on the first
// verbs IA (rdma/verbs/dl.c), so libdat.so.1 still loads, and its software
// transports run, on a machine without rdma-core (ctest/symbols.sh checks
// that ldd lists neither library).
import (
	_ "godat/rdma/soft"
	_ "godat/rdma/verbs"
)
