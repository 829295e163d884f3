#!/usr/bin/env python3
"""Seed 001's cluster (Elhiny, Sec. 7.3, Tables 6, 7 and 9) for
mlsba-master-worker under SimGrid's SMPI: a master and two worker nodes,
Dune-770 and Dune-970, each three cores and a GPU, every worker on its own
100 Mbit/s link from the master.

    python3 models/cluster/thesis001.py DIR [N M]

writes DIR/platform.xml, DIR/hosts (rank 0 the master, rank 1 Dune-770,
rank 2 Dune-970) and DIR/node1.json, DIR/node2.json. The devices are the
thesis's affine times for x columns of C = A B (A N x M, N = M = 10000 by
default): p N M x + e, p per multiply-add and e from Tables 9 (Dune-770)
and 7 (Dune-970), read as the thesis's DLT uses them; the GPU's PCIe
transfers (l_P per byte, a column of B in and of C out, 4-byte floats)
as its host link. Speeds are sampled at 257 column counts from 1 to 2^16
(16 per octave), in columns per second."""
import json
import os
import sys

MS = 1e-3
# p [ms per multiply-add], e [ms]; l_P [ms per byte] of the GPU.
NODES = {
    "dune770": {"table": 9, "core_p": 7.8677e-8, "core_e": 297.5628,
                "gpu_p": 1.10844e-9, "gpu_e": 100.0, "lp": 6.8828e-8},
    "dune970": {"table": 7, "core_p": 7.677e-8, "core_e": 132.16,
                "gpu_p": 6.4932e-10, "gpu_e": 175.5, "lp": 5.332e-8},
}
# 100 Mbit/s Ethernet, every worker on a link of its own from the master
# (the thesis's model sends to both at once); 100 us a message.
LINK_BW = "100Mbps"
LINK_LAT = "100us"


def profile(p_ms, e_ms, n, m):
    pts = []
    for i in range(257):
        x = 2 ** (i / 16)
        t = p_ms * MS * n * m * x + e_ms * MS
        pts.append([round(x, 6), float("%.9g" % (x / t))])
    return pts


def node(name, par, n, m):
    devs = [{"name": "gpu0", "type": "sim",
             "speed": profile(par["gpu_p"], par["gpu_e"], n, m),
             "link": {"latency": 0,
                      "bandwidth": float("%.9g" % (1 / (par["lp"] * MS)))}}]
    for c in range(3):
        devs.append({"name": "core%d" % c, "type": "sim",
                     "speed": profile(par["core_p"], par["core_e"], n, m)})
    return {"name": "%s (seed 001 Table %d): 3 cores + GPU" %
            (name, par["table"]),
            "columns_of": {"m": n, "k": m},
            "devices": devs,
            "groups": [[d["name"]] for d in devs]}


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    out = sys.argv[1]
    n, m = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) == 4 \
        else (10000, 10000)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "platform.xml"), "w") as f:
        f.write("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <!-- Seed 001's cluster: a master and two workers, each worker on its
       own 100 Mbit/s link (latency %s) from the master. -->
  <zone id="thesis-001" routing="Full">
    <host id="master" speed="10Gf"/>
    <host id="dune770" speed="10Gf"/>
    <host id="dune970" speed="10Gf"/>
    <link id="link-dune770" bandwidth="%s" latency="%s"/>
    <link id="link-dune970" bandwidth="%s" latency="%s"/>
    <route src="master" dst="dune770"><link_ctn id="link-dune770"/></route>
    <route src="master" dst="dune970"><link_ctn id="link-dune970"/></route>
    <route src="dune770" dst="dune970"><link_ctn id="link-dune770"/><link_ctn id="link-dune970"/></route>
  </zone>
</platform>
""" % (LINK_LAT, LINK_BW, LINK_LAT, LINK_BW, LINK_LAT))
    with open(os.path.join(out, "hosts"), "w") as f:
        f.write("master\ndune770\ndune970\n")
    for rank, name in ((1, "dune770"), (2, "dune970")):
        with open(os.path.join(out, "node%d.json" % rank), "w") as f:
            d = node(name, NODES[name], n, m)
            devs = ",\n  ".join(json.dumps(x) for x in d["devices"])
            f.write('{"name": %s,\n "columns_of": %s,\n "devices": [\n  %s],\n'
                    ' "groups": %s}\n' % (json.dumps(d["name"]),
                                          json.dumps(d["columns_of"]), devs,
                                          json.dumps(d["groups"])))


if __name__ == "__main__":
    main()
