#!/usr/bin/env python3
"""Writes the cluster platforms of models/cluster (README.md there says
where every number comes from):

  generate.py grenoble DIR   the seed's 90 Grid'5000 Grenoble nodes (Table 1)
  generate.py scale N DIR    N heterogeneous nodes (deterministic, seed 1)

DIR receives platform.xml (SimGrid), hosts (smpirun's hostfile, rank i on
line i) and node<i>.json (rank i's libmlsba platform: simulated devices,
speeds in 128 x 128 blocks of C updated per second)."""
import os
import random
import sys

FLOP_PER_BLOCK = 2 * 128 ** 3  # one b x b block of C' updated by one step


def blocks_per_s(gflops):
    return gflops * 1e9 / FLOP_PER_BLOCK


def core_profile(gflops):
    """A core running DGEMM on x blocks per step: gflops x / (x + 0.5);
    a step of one block (a 128 x 128 x 128 DGEMM) reaches two thirds."""
    pts = [1, 2, 4, 8, 16, 64]
    return [[x, round(blocks_per_s(gflops * x / (x + 0.5)), 1)] for x in pts]


def gpu_profile(gflops, half, fits, streamed_gflops):
    """A GPU: the kernel gflops x / (x + half) with A's panel and B's slice
    over PCIe in the time; C' stays on the device up to `fits` blocks,
    beyond which it crosses PCIe every step and the speed falls to
    streamed_gflops (no out-of-core blocking, as in the seed)."""
    pts = [1, 4, 16, 64, 256, 1024, 4096]
    prof = [[x, round(blocks_per_s(gflops * x / (x + half)), 1)] for x in pts]
    prof.append([fits, round(blocks_per_s(gflops * fits / (fits + half)), 1)])
    prof.append([int(fits * 1.1), round(blocks_per_s(streamed_gflops), 1)])
    return prof


NEHALEM = 8.0     # Xeon E5520 2.27 GHz core: 9.08 GFLOPS peak, MKL ~88 %
HARPERTOWN = 8.5  # Xeon E5420 2.5 GHz core: 10 GFLOPS peak, MKL ~85 %
WESTMERE = 10.2   # Xeon X5670 2.93 GHz core: 11.7 GFLOPS peak (scale only)
SANDY = 18.5      # Xeon E5-2670 2.6 GHz core: 20.8 GFLOPS peak (scale only)
GPUS = {
    # name: (kernel GFLOPS, half-speed load, blocks of C' that fit, streamed)
    "Tesla T10": (70.0, 48, 29000, 36.0),
    "Tesla C2050": (280.0, 160, 20000, 62.0),
    "Tesla K20": (1000.0, 400, 36000, 75.0),
}


def node_json(name, cores, core_gflops, gpus):
    devs, groups = [], []
    for g, model in enumerate(gpus):
        devs.append({"name": "gpu%d" % g, "type": "sim",
                     "speed": gpu_profile(*GPUS[model])})
        groups.append(["gpu%d" % g])
    for c in range(cores):
        devs.append({"name": "core%d" % c, "type": "sim", "kind": "core",
                     "speed": core_profile(core_gflops)})
        groups.append(["core%d" % c])
    lines = ['{', '  "name": "%s",' % name, '  "devices": [']
    for i, d in enumerate(devs):
        speed = ", ".join("[%g, %g]" % (x, s) for x, s in d["speed"])
        kind = ', "kind": "%s"' % d["kind"] if "kind" in d else ""
        lines.append('    {"name": "%s", "type": "sim"%s,\n     "speed": [%s]}%s'
                     % (d["name"], kind, speed, "," if i + 1 < len(devs) else ""))
    lines.append('  ],')
    lines.append('  "groups": [%s]' % ", ".join(
        "[%s]" % ", ".join('"%s"' % x for x in g) for g in groups))
    lines.append('}')
    return "\n".join(lines) + "\n"


def xml(clusters, backbone_gbps, lat="2us"):
    """clusters: (id, count, link Gbps); one backbone switch joins them;
    lat: a node link's latency."""
    out = ["<?xml version='1.0'?>",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">',
           '  <zone id="grid" routing="Full">']
    for cid, count, gbps in clusters:
        out.append('    <cluster id="%s" prefix="%s-" suffix="" radical="1-%d"'
                   ' speed="10Gf" bw="%gGbps" lat="%s" bb_bw="%gGbps"'
                   ' bb_lat="1us" bb_sharing_policy="FATPIPE"/>' % (cid, cid, count, gbps, lat, 4 * gbps))
    out.append('    <link id="backbone" bandwidth="%gGbps" latency="2us" sharing_policy="FATPIPE"/>'
               % backbone_gbps)
    for i, (a, _, _) in enumerate(clusters):
        for b, _, _ in clusters[i + 1:]:
            out.append('    <zoneRoute src="%s" dst="%s" gw_src="%s-%s_router"'
                       ' gw_dst="%s-%s_router"><link_ctn id="backbone"/>'
                       '</zoneRoute>' % (a, b, a, a, b, b))
    out += ['  </zone>', '</platform>']
    return "\n".join(out) + "\n"


def xml_fabric(count, gbps):
    """count hosts node-1..node-count on one non-blocking switch: a
    message shares only its two nodes' links (up at the sender, down at
    the receiver). A FATPIPE backbone faster than the node links would
    never limit a message, but would join every message of a step into
    one bandwidth-sharing system, which SimGrid re-solves whole at every
    message's end: at 1000 nodes that doubled the simulation's time."""
    return "\n".join([
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        '  <cluster id="fabric" prefix="node-" suffix="" radical="1-%d"'
        ' speed="10Gf" bw="%gGbps" lat="3us"/>' % (count, gbps),
        '</platform>']) + "\n"


def write(dirname, nodes, platform_xml):
    """nodes: (host, name, cores, core_gflops, gpus) in rank order."""
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, "platform.xml"), "w") as f:
        f.write(platform_xml)
    with open(os.path.join(dirname, "hosts"), "w") as f:
        f.write("".join(n[0] + "\n" for n in nodes))
    for r, (host, name, cores, gf, gpus) in enumerate(nodes):
        with open(os.path.join(dirname, "node%d.json" % r), "w") as f:
            f.write(node_json(name, cores, gf, gpus))


def grenoble(dirname):
    """Table 1 of the seed: nodes per number of cores used, 0..8."""
    table = {"adonis": [2, 1, 1, 1, 1, 1, 2, 3, 0],
             "edel": [0, 6, 4, 4, 4, 8, 8, 8, 8],
             "genepi": [0, 3, 3, 3, 3, 4, 4, 4, 4]}
    gbps = {"adonis": 32, "edel": 32, "genepi": 16}  # IB QDR 40G, DDR 20G data rates
    core = {"adonis": NEHALEM, "edel": NEHALEM, "genepi": HARPERTOWN}
    nodes, clusters = [], []
    for cid in ("adonis", "edel", "genepi"):
        k = 0
        for cores, count in enumerate(table[cid]):
            for _ in range(count):
                k += 1
                gpus = []
                if cid == "adonis":
                    # The two nodes that used only their GPU have the
                    # C2050s (the choice is ours; Table 1 does not say).
                    gpus = ["Tesla C2050" if cores == 0 else "Tesla T10"]
                desc = "%d cores" % cores + "".join(" + " + g for g in gpus)
                nodes.append(("%s-%d" % (cid, k), "%s-%d: %s" % (cid, k, desc),
                              cores, core[cid], gpus))
        clusters.append((cid, k, gbps[cid]))
    assert len(nodes) == 90 and sum(n[2] for n in nodes) == 432
    write(dirname, nodes, xml(clusters, 32))
    # The same nodes over Ethernet instead of InfiniBand (issue 24): every
    # node link 1 Gbit/s with 50 us, or 100 Mbit/s with 100 us (a switched
    # LAN's one-way latency through the TCP stack); the switches stay
    # non-blocking (FATPIPE backbones 4x a node link, as above).
    for fname, ggbps, lat in (("platform-1gbe.xml", 1, "50us"),
                              ("platform-100mbps.xml", 0.1, "100us")):
        with open(os.path.join(dirname, fname), "w") as f:
            f.write(xml([(c, k, ggbps) for c, k, _ in clusters], 4 * ggbps, lat))


def scale(n, dirname):
    """n nodes in groups of 100 of one CPU generation: 1 to 16 cores, some
    with one or two GPUs; 40 Gbps InfiniBand, one non-blocking switch."""
    rng = random.Random(1)
    kinds = [("nehalem", NEHALEM), ("harpertown", HARPERTOWN),
             ("westmere", WESTMERE), ("sandybridge", SANDY)]
    nodes = []
    for i in range(n):
        kname, gf = kinds[(i // 100) % len(kinds)]
        cores = rng.choice([1, 2, 4, 6, 8, 12, 16])
        roll = rng.random()
        gpus = ([] if roll < 0.7 else
                [rng.choice(list(GPUS))] if roll < 0.9 else
                [rng.choice(list(GPUS))] * 2)
        desc = "%d %s cores" % (cores, kname) + "".join(" + " + g for g in gpus)
        host = "node-%d" % (i + 1)
        nodes.append((host, "%s: %s" % (host, desc), cores, gf, gpus))
    write(dirname, nodes, xml_fabric(n, 32))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "grenoble":
        grenoble(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "scale":
        scale(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)
