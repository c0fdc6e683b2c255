package main

// The transport backends built into the library; each registers itself
// with rdma.Register under the name backendOf picks.
import (
	_ "godat/rdma/soft"
)
