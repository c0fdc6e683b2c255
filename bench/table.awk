# Prints the `make bench` table from run.sh's results: lines
# "tool row size value" (tool: godat, floor, fi, ucx; one line per
# measurement window) and "status tool what". Each cell is the median of its
# values. Variables: repeat, windows, cpus, kernel.

{
	if ($1 == "status") { st[$2] = $3; next }
	k = $1 SUBSEP $2 SUBSEP $3
	vals[k] = (k in vals) ? vals[k] " " $4 : $4
}

# the median of a space-separated list of numbers
function median(list,    a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) # insertion sort: a handful of values
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
}

END { for (k in vals) { best[k] = median(vals[k]); count[k] = split(vals[k], tmp, " ") } }

function label(s) {
	if (s >= 1048576) return (s / 1048576) " MiB"
	if (s >= 1024) return (s / 1024) " KiB"
	return s " B"
}

# the value of a cell, or why there is none
function cell(tool, row, size,    k) {
	k = tool SUBSEP row SUBSEP size
	if (k in best) return sprintf(best[k] >= 100 ? "%.1f" : "%.3f", best[k])
	if (st[tool] == "missing") return "n/a"
	if (st[tool] == "fail") return "fail"
	return "?"
}

function val(tool, row, size,    k) {
	k = tool SUBSEP row SUBSEP size
	return (k in best) ? best[k] : -1
}

# One table row. ref/rrow: the reference cell for the ratio and its label;
# op/goal: the goal ("<=" or ">=" a ratio), empty when the row has none.
function line(name, g, f, u, fl, mc, pv, reftool, refrow, refname, size, grow, op, goal,    gv, rv, ratio, res, gs) {
	gv = val("godat", grow, size)
	rv = val(reftool, refrow, size)
	ratio = "-"
	res = ""
	gs = ""
	if (gv > 0 && rv > 0) {
		ratio = sprintf("%.2fx %s", gv / rv, refname)
	}
	if (op != "") {
		gs = op sprintf("%.2f", goal) "x " refname
		if (gv <= 0 || rv <= 0) res = "n/a"
		else if (op == "<=" ? gv / rv <= goal : gv / rv >= goal) { res = "PASS"; npass++ }
		else { res = "MISS"; nmiss++ }
	}
	printf "  %-8s %9s %9s %9s %9s %9s %9s  %-13s %-13s %s\n", name, g, f, u, fl, mc, pv, ratio, gs, res
}

function header(title) {
	printf "\n%s\n", title
}

END {
	# (the END above computed the medians; awk runs END blocks in order)
	split("8 64 4096 65536 1048576", lats, " ")
	split("4096 65536 1048576 16777216", bws, " ")
	printf "godat benchmark: %s CPUs, Linux %s. Every column was measured in this run, the two processes of\n", cpus, kernel
	printf "each test pinned to two CPUs; a cell is the median of %d measurement windows (%s rounds x %s) for every tool.\n", repeat * windows, repeat, windows
	printf "Latency: one-way us (round trip / 2), lower is better. Bandwidth: GB/s (1e9 B/s), higher is better.\n\n"
	printf "  %-8s %9s %9s %9s %9s %9s %9s  %-13s %-13s %s\n", "size", "godat", "libfabric", "UCX", "floor", "floor", "floor", "ratio", "goal", ""
	printf "  %-8s %9s %9s %9s %9s %9s %9s\n", "", "", "shm", "posix,cma", "shm/futex", "memcpy", "proc_vm"

	header("send/recv ping-pong latency, dat_evd_dequeue polling (floor: shared-memory flag ping-pong across CPUs)")
	for (i = 1; i <= 5; i++) {
		s = lats[i]
		if (s == 8)
			line(label(s), cell("godat", "lat_poll", s), cell("fi", "lat", s), cell("ucx", "lat", s), cell("floor", "flag", s), "-", "-",
				"fi", "lat", "fi", s, "lat_poll", "<=", 0.8)
		else if (s == 65536)
			line(label(s), cell("godat", "lat_poll", s), cell("fi", "lat", s), cell("ucx", "lat", s), cell("floor", "flag", s), "-", "-",
				"ucx", "lat", "UCX", s, "lat_poll", "<=", 1.2)
		else
			line(label(s), cell("godat", "lat_poll", s), cell("fi", "lat", s), cell("ucx", "lat", s), cell("floor", "flag", s), "-", "-",
				"ucx", "lat", "UCX", s, "lat_poll", "", 0)
	}
	header("send/recv ping-pong latency, dat_evd_wait (floor: futex wake-up ping-pong across CPUs; the peers poll)")
	for (i = 1; i <= 5; i++) {
		s = lats[i]
		# the goal is the wake-up itself: the 8-byte row
		line(label(s), cell("godat", "lat_wait", s), "-", "-", cell("floor", "futex", s), "-", "-",
			"floor", "futex", "futex", s, "lat_wait", s == 8 ? "<=" : "", 1.5)
	}
	header("streaming send bandwidth (libfabric: fi_pingpong ping-pong throughput*; UCX: tag_bw)")
	for (i = 1; i <= 4; i++) {
		s = bws[i]
		line(label(s), cell("godat", "bw_send", s), cell("fi", "bw", s), cell("ucx", "bw_send", s), "-", cell("floor", "memcpy", s), cell("floor", "pvm_write", s),
			"floor", "pvm_write", "pvm_w", s, "bw_send", s == 1048576 ? ">=" : "", 0.9)
	}
	header("RDMA write bandwidth (UCX: ucp_put_bw)")
	for (i = 1; i <= 4; i++) {
		s = bws[i]
		line(label(s), cell("godat", "bw_write", s), "-", cell("ucx", "bw_write", s), "-", cell("floor", "memcpy", s), cell("floor", "pvm_write", s),
			"floor", "pvm_write", "pvm_w", s, "bw_write", s == 1048576 ? ">=" : "", 0.9)
	}
	header("RDMA read bandwidth (UCX: ucp_get)")
	for (i = 1; i <= 4; i++) {
		s = bws[i]
		line(label(s), cell("godat", "bw_read", s), "-", cell("ucx", "bw_read", s), "-", cell("floor", "memcpy", s), cell("floor", "pvm_read", s),
			"floor", "pvm_read", "pvm_r", s, "bw_read", s == 1048576 ? ">=" : "", 0.9)
	}
	printf "\n* fi_pingpong has no streaming or RDMA test: its row shows ping-pong throughput, '-' elsewhere.\n"
	printf "  pvm_w / pvm_r: one process_vm_writev / process_vm_readv per buffer into / out of another process.\n"
	if (st["fi"] == "missing" || st["ucx"] == "missing")
		printf "  n/a: the peer tool is not installed (Debian: apt-get install libfabric-bin ucx-utils).\n"
	printf "goals: %d PASS, %d MISS\n", npass, nmiss
}
