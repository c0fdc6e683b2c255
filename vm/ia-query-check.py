#!/usr/bin/env python3
"""ia-query-check.py DATINFO_V IBV_DEVINFO_V: dat_ia_query of the verbs IA
(datinfo -v godat-verbs) reports the device's own limits (ibv_devinfo -v of
the same device): each DAT attribute is compared with the verbs attribute
it comes from (core/ia.go attrFromDevice; a region's size is also bounded
by the process's address range). Prints one line per attribute;
exit status 1 when one differs or is missing."""
import re
import sys

PAIRS = [  # DAT_IA_ATTR field, ibv_devinfo -v field
    ("max_eps", "max_qp"),
    ("max_dto_per_ep", "max_qp_wr"),
    ("max_rdma_read_per_ep_in", "max_qp_rd_atom"),
    ("max_rdma_read_per_ep_out", "max_qp_init_rd_atom"),
    ("max_evds", "max_cq"),
    ("max_evd_qlen", "max_cqe"),
    ("max_iov_segments_per_dto", "max_sge"),
    ("max_lmrs", "max_mr"),
    ("max_lmr_block_size", "max_mr_size"),  # at most 2^47, the address range
    ("max_pzs", "max_pd"),
    ("max_message_size", "max_msg_sz"),
    ("max_srqs", "max_srq"),
    ("max_recv_per_srq", "max_srq_wr"),
]


def fields(path, sep):
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*([a-z_]+)" + sep + r"\s*(0x[0-9a-fA-F]+|\d+)\b", line)
            if m and m.group(1) not in out:
                out[m.group(1)] = int(m.group(2), 0)
    return out


dat = fields(sys.argv[1], r"\s+")
ibv = fields(sys.argv[2], r":")
bad = 0
for d, v in PAIRS:
    if d not in dat or v not in ibv:
        print(f"{d}: missing (datinfo {dat.get(d)}, ibv_devinfo {v} {ibv.get(v)})")
        bad += 1
    elif d == "max_lmr_block_size" and dat[d] == min(ibv[v], 1 << 47):
        print(f"{d} = {dat[d]} = min({v} {ibv[v]}, 2^47, the process's address range)")
    elif dat[d] != ibv[v]:
        print(f"{d} = {dat[d]}, but the device's {v} = {ibv[v]}")
        bad += 1
    else:
        print(f"{d} = {dat[d]} = {v}")
print(f"{len(PAIRS) - bad} of {len(PAIRS)} attributes are the device's")
sys.exit(1 if bad else 0)
