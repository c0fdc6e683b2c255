# Prints the `make bench` table from run.sh's results: lines
# "tool row size value" (tool: godat, floor, fi, ucx; one line per
# measurement window) and "status tool what". Each cell is the median of its
# values. Variables: repeat, windows, cpus, kernel, baseline (the directory
# of the library the "base" lines were measured with, or empty).
# After the table: the application patterns of issue 17 and their goals.

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

# the largest of a space-separated list of numbers
function maximum(list,    a, n, i, m) {
	n = split(list, a, " ")
	m = a[1] + 0
	for (i = 2; i <= n; i++)
		if (a[i] + 0 > m) m = a[i] + 0
	return m
}

# A cell is the median of its values, but a p99 cell (one figure per round)
# is the worst round's.
END {
	for (k in vals) {
		split(k, kf, SUBSEP)
		best[k] = kf[2] ~ /_p99$/ ? maximum(vals[k]) : median(vals[k])
		count[k] = split(vals[k], tmp, " ")
	}
}

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

# ---- issue 17: the application patterns ----

# a cell of tool/row/size formatted with fmt, or why there is none
function acell(tool, row, size, fmt,    k) {
	k = tool SUBSEP row SUBSEP size
	if (k in best && best[k] >= 10000) sub(/%\.[0-9]f/, "%.0f", fmt) # no decimals past 10000
	if (k in best) return sprintf(fmt, best[k])
	if (st[tool] == "missing") return "n/a"
	if (st[tool] == "fail") return "fail"
	return "?"
}

# One goal row of issue 17: v and ref (values, <= 0 when missing), their
# labels, the comparison op ("<=", ">=", "<": v alone against goal when
# ref is "").
function goal17(name, v, vs, ref, rs, op, goal, gs,    ratio, res, r) {
	ratio = "-"
	if (v < 0 || (rs != "" && ref <= 0)) res = "n/a"
	else {
		r = rs == "" ? v : v / ref
		if (rs != "") ratio = sprintf("%.2fx", r)
		if ((op == "<=" && r <= goal) || (op == ">=" && r >= goal) || (op == "<" && r < goal)) { res = "PASS"; p17++ }
		else { res = "MISS"; m17++ }
	}
	printf "  %-64s %10s %10s %8s %-10s %s\n", name, vs, rs, ratio, gs, res
}

function fmtv(v, fmt) { return v < 0 ? "n/a" : sprintf(fmt, v) }

# the worse (larger) of the two processes' idle figures
function idle(ia, what,    a, b) {
	a = val(ia, "idle_" what "_server", 100)
	b = val(ia, "idle_" what "_client", 100)
	return a > b ? a : b
}

END {
	split("godat-shm godat-tcp", ias, " ")
	printf "\nApplication patterns (issue 17). Every process pinned to a CPU of its own (2 processes, 2 CPUs), so that the\n"
	printf "library's threads share it with the polling application; 8-byte ping-pongs, one-way us (round trip / 2):\n"
	printf "  %-34s %9s %9s %9s %9s %9s %9s\n", "pattern", "godat-shm", "godat-tcp", "plain", "plain", "libfabric", "libfabric"
	printf "  %-34s %9s %9s %9s %9s %9s %9s\n", "", "", "", "shm", "TCP", "shm", "tcp"
	printf "  %-34s %9s %9s %9s %9s %9s %9s\n", "(a) send/recv, dequeue rcv+req EVDs",
		acell("godat-shm", "pp", 8, "%.3f"), acell("godat-tcp", "pp", 8, "%.3f"), acell("plain-shm", "pp", 8, "%.3f"),
		acell("plain-tcp", "pp", 8, "%.3f"), acell("fi", "lat", 8, "%.3f"), acell("fi-tcp", "pp", 8, "%.3f")
	printf "  %-34s %9s %9s %9s %9s %9s %9s\n", "(b) eager RDMA write, flag polled",
		acell("godat-shm", "eager", 8, "%.3f"), acell("godat-tcp", "eager", 8, "%.3f"), acell("plain-shm", "pp", 8, "%.3f"),
		acell("plain-tcp", "pp", 8, "%.3f"), "-", "-"
	printf "  the same, each process pinned before it starts (taskset, as mpirun --bind-to core: GOMAXPROCS 1):\n"
	printf "  %-34s %9s %9s\n", "(a) send/recv, dequeue rcv+req EVDs",
		acell("godat-shm/taskset", "pp", 8, "%.3f"), acell("godat-tcp/taskset", "pp", 8, "%.3f")
	printf "  %-34s %9s %9s\n", "(b) eager RDMA write, flag polled",
		acell("godat-shm/taskset", "eager", 8, "%.3f"), acell("godat-tcp/taskset", "eager", 8, "%.3f")
	printf "  plain shm: the message, its flag in the last byte, stored into the peer's ring slot, which it polls;\n"
	printf "  plain TCP: non-blocking sockets (TCP_NODELAY) polled with recv(MSG_DONTWAIT); libfabric: fi_pingpong -p shm -e rdm\n"
	printf "  and -p tcp -e msg. Each cell is the median of its measurement windows.\n"

	printf "\nTime inside one dat_ep_post_rdma_write / _read (us), the previous one completed, the target polling its EVDs;\n"
	printf "the median of the rounds' medians and the worst round's 99th percentile:\n"
	printf "  %-14s %10s %10s %10s %10s\n", "post", "godat-shm", "", "godat-tcp", ""
	printf "  %-14s %10s %10s %10s %10s\n", "", "median", "p99", "median", "p99"
	split("4096 65536 4194304", psz, " ")
	for (op = 1; op <= 2; op++) {
		o = op == 1 ? "write" : "read"
		for (i = 1; i <= 3; i++)
			printf "  %-14s %10s %10s %10s %10s\n", o " " label(psz[i]),
				acell("godat-shm", "post_" o "_med", psz[i], "%.2f"), acell("godat-shm", "post_" o "_p99", psz[i], "%.2f"),
				acell("godat-tcp", "post_" o "_med", psz[i], "%.2f"), acell("godat-tcp", "post_" o "_p99", psz[i], "%.2f")
	}

	printf "\nThreads in a process besides the application's (server / client process), and the CPU a process burns\n"
	printf "while idle: 100 connections between two processes, the application thread asleep for 3 s in each:\n"
	printf "  %-10s %-20s %-20s %s\n", "IA", "threads after the", "threads, idle with", "CPU while idle, % of one CPU"
	printf "  %-10s %-20s %-20s %s\n", "", "ping-pongs above", "100 connections", "(server / client process)"
	for (i = 1; i <= 2; i++)
		printf "  %-10s %-20s %-20s %s\n", ias[i],
			acell(ias[i], "threads_server", 0, "%d") " / " acell(ias[i], "threads_client", 0, "%d"),
			acell(ias[i], "idle_threads_server", 100, "%d") " / " acell(ias[i], "idle_threads_client", 100, "%d"),
			acell(ias[i], "idle_cpu_server", 100, "%.3f") " / " acell(ias[i], "idle_cpu_client", 100, "%.3f")

	printf "\nGoals of issue 17 (ratio: godat / anchor):\n"
	printf "  %-64s %10s %10s %8s %-10s\n", "row", "godat", "anchor", "ratio", "goal"
	pt = val("plain-tcp", "pp", 8); ps = val("plain-shm", "pp", 8)
	pingpong17("", "")
	pingpong17("/taskset", " [taskset]")
	pb = val("tb-plain", "bw1m", 1048576)
	pb = val("tb-plain", "bw1m", 1048576)
	goal17("TCP 1 MiB stream, godat-tcp (evd_wait) vs plain TCP",
		val("tb-godat-tcp", "bw1m", 1048576), acell("tb-godat-tcp", "bw1m", 1048576, "%.0f MB/s"),
		pb, acell("tb-plain", "bw1m", 1048576, "%.0f MB/s"), ">=", 0.9, ">=0.90x")
	goal17("TCP 1 MiB stream, godat-tcp (polling) vs plain TCP",
		val("tb-godat-tcp/poll", "bw1m", 1048576), acell("tb-godat-tcp/poll", "bw1m", 1048576, "%.0f MB/s"),
		pb, acell("tb-plain", "bw1m", 1048576, "%.0f MB/s"), ">=", 0.9, ">=0.90x")
	for (i = 1; i <= 2; i++)
		for (op = 1; op <= 2; op++) {
			o = op == 1 ? "write" : "read"
			split("med p99", q, " ")
			for (j = 1; j <= 2; j++)
				goal17(sprintf("%s 4 MiB vs 4 KiB RDMA %s post, %s", ias[i], o, j == 1 ? "median" : "p99"),
					val(ias[i], "post_" o "_" q[j], 4194304), acell(ias[i], "post_" o "_" q[j], 4194304, "%.1f us"),
					val(ias[i], "post_" o "_" q[j], 4096), acell(ias[i], "post_" o "_" q[j], 4096, "%.1f us"), "<=", 2, "<=2.00x")
		}
	for (i = 1; i <= 2; i++)
		goal17(sprintf("%s idle CPU, 100 connections (worse process)", ias[i]),
			idle(ias[i], "cpu"), fmtv(idle(ias[i], "cpu"), "%.3f %%"), 0, "", "<", 1, "<1% of CPU")
	base17()
	printf "goals (issue 17): %d PASS, %d MISS\n", p17, m17
}

# The ping-pong goal rows of issue 17 for the godat tools with suffix x
# (tag: the label's suffix). Uses pt, ps: the plain anchors.
function pingpong17(x, tag) {
	goal17("(a) send/recv 8 B, godat-tcp vs plain TCP busy-poll" tag,
		val("godat-tcp" x, "pp", 8), acell("godat-tcp" x, "pp", 8, "%.2f us"), pt, acell("plain-tcp", "pp", 8, "%.2f us"), "<=", 1.3, "<=1.30x")
	goal17("8 B ping-pong, godat-tcp (a) vs fi_pingpong -p tcp" tag,
		val("godat-tcp" x, "pp", 8), acell("godat-tcp" x, "pp", 8, "%.2f us"), val("fi-tcp", "pp", 8), acell("fi-tcp", "pp", 8, "%.2f us"), "<=", 1.0, "<=1.00x")
	goal17("(b) eager RDMA 8 B, godat-tcp vs plain TCP busy-poll" tag,
		val("godat-tcp" x, "eager", 8), acell("godat-tcp" x, "eager", 8, "%.2f us"), pt, acell("plain-tcp", "pp", 8, "%.2f us"), "<=", 1.5, "<=1.50x")
	goal17("(a) send/recv 8 B, godat-shm vs plain shm" tag,
		val("godat-shm" x, "pp", 8), acell("godat-shm" x, "pp", 8, "%.3f us"), ps, acell("plain-shm", "pp", 8, "%.3f us"), "<=", 1.5, "<=1.50x")
	goal17("(b) eager RDMA 8 B, godat-shm vs plain shm" tag,
		val("godat-shm" x, "eager", 8), acell("godat-shm" x, "eager", 8, "%.3f us"), ps, acell("plain-shm", "pp", 8, "%.3f us"), "<=", 1.5, "<=1.50x")
}

# "existing one-host rows: no worse than today": every cell of the table
# above against the same cell measured with the baseline library in this
# run (BENCH_BASELINE_LIBDIR); a cell counts as worse when it is more than
# 10% slower (room for the noise between runs; lower bound of what the
# table can tell on a shared machine).
function base17(    rows, sz, i, j, n, worse, worst, wname, r, g, b, wl) {
	if (baseline == "") {
		printf "  %-64s %10s %10s %8s %-10s %s\n", "existing one-host rows (BENCH_BASELINE_LIBDIR unset)", "-", "-", "-", "<=10% worse", "n/a"
		return
	}
	split("lat_poll lat_wait bw_send bw_write bw_read", rows, " ")
	n = 0; worse = 0; worst = 0; wname = ""
	for (i = 1; i <= 5; i++) {
		if (i <= 2) split("8 64 4096 65536 1048576", sz, " ")
		else split("4096 65536 1048576 16777216", sz, " ")
		for (j = 1; j in sz; j++) {
			g = val("godat", rows[i], sz[j]); b = val("base", rows[i], sz[j])
			if (g <= 0 || b <= 0) continue
			n++
			r = i <= 2 ? g / b : b / g # > 1: slower than the baseline
			if (r > 1.1) { worse++; wl[worse] = sprintf("%s %s: %.3f vs %.3f (%.2fx)", rows[i], label(sz[j]), g, b, r) }
			if (r > worst) { worst = r; wname = rows[i] " " label(sz[j]) }
		}
	}
	if (n == 0) {
		printf "  %-64s %10s %10s %8s %-10s %s\n", "existing one-host rows vs " baseline, "-", "-", "-", "<=10% worse", "n/a"
		return
	}
	printf "  %-64s %10s %10s %8s %-10s %s\n", sprintf("existing one-host rows, %d of %d cells >10%% slower", worse, n),
		"worst:", sprintf("%.2fx", worst), "slower", "<=1.10x", worse ? "MISS" : "PASS"
	printf "    (each cell of the table above against the same cell measured in this run with the library in\n"
	printf "    %s; worst: %s)\n", baseline, wname
	# The cells past the bound, so a reader sees which and by how much
	# (latency us, bandwidth GB/s; this build vs the baseline).
	for (i = 1; i <= worse; i++) printf "    slower: %s\n", wl[i]
	if (worse) m17++; else p17++
}
