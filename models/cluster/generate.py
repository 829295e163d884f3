#!/usr/bin/env python3
"""Writes the cluster platforms of models/cluster (README.md there says
where every number comes from):

  generate.py grenoble DIR [--block B]
                             the seed's 90 Grid'5000 Grenoble nodes (Table 1)
  generate.py scale N DIR [--block B]
                             N heterogeneous nodes (deterministic, seed 1)
  generate.py cluster-a DIR [--gpu-nodes G] [--cpu-nodes C] [--block B]
                         [--gpu-procs K]
                             Shi et al.'s Cluster A: 8 GPU + 32 CPU nodes
  generate.py oakley DIR [--gpus 1|2] [--gpu-nodes G] [--cpu-nodes C]
                     [--block B] [--gpu-procs K]
                             Shi et al.'s Oakley: 32 GPU + 128 CPU nodes,
                             one or two GPUs a GPU node (1G, 2G-Config)
  generate.py keeneland K DIR [--gpus 0..3] [--block B]
                             K of Song and Dongarra's Keeneland nodes
                             (12 cores + 3 GPUs each), 1 <= K <= 120

DIR receives platform.xml (SimGrid), hosts (smpirun's hostfile, rank i on
line i) and node<i>.json (rank i's libmlsba platform: simulated devices,
speeds in 128 x 128 blocks of C updated per second; every preset's
--block B: in B x B blocks, for runs with that block size). The seed 003
presets' --gpu-procs K: each GPU node run as K ranks (seed 003's MPI_G
processes, for --algo process-scaling), each with cores / K of its cores
and its share of a GPU."""
import argparse
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
def host_copy(core_gflops, block):
    """Bytes a second a node with no core among its devices copies in its
    host's memory (its row interchanges; the node file's "memory"). Its
    devices are its GPUs alone, but its host is still there (a core runs
    the rank and drives the GPU) and copies the rows: at the rate the
    model charges the same host's copies where its cores are devices (two
    flops an element at a core's speed on one block of the run's size,
    libmlsba's rule), so that the same hosts copy alike."""
    x = (block / 128.0) ** 2
    return 8 * core_gflops * 1e9 * x / (x + 0.5) / 2


GPUS = {
    # name: (kernel GFLOPS, half-speed load, blocks of C' that fit, streamed)
    "Tesla T10": (70.0, 48, 29000, 36.0),
    "Tesla C2050": (280.0, 160, 20000, 62.0),
    "Tesla K20": (1000.0, 400, 36000, 75.0),
}


def gpu_spec(model):
    """A GPU of the node list: a name of GPUS, or (name, spec, kind) of
    the seed clusters' Fermi table below."""
    return (model, GPUS[model], None) if isinstance(model, str) else model


def in_blocks(profile, block):
    """A profile of 128 x 128 blocks (one step of depth 128 each) in
    block x block blocks of depth block, which a factorization with that
    block size charges: the same flop rate at the same area of C' (so the
    same memory cap), a deeper step no faster (conservative: a GEMM of
    depth 960 runs faster than of 128)."""
    r = 128.0 / block
    return [[x * r * r, s * r ** 3] for x, s in profile]


def gpu_share(spec, k):
    """One of k processes that share a GPU by time slices (seed 003's
    processes on a Fermi: one context's kernels at a time): each kernel
    runs on the process's own load x at the GPU's speed for x, a k-th of
    the time; C' fits while the k loads do (x up to fits / k), and beyond
    that every process streams at a k-th of the streamed speed."""
    gflops, half, fits, streamed = spec
    prof = gpu_profile(gflops, half, fits // k, streamed)
    return [[x, s / k] for x, s in prof if x < fits // k] + [
        [x, s / k] for x, s in prof[-2:]]


def node_json(name, cores, core_gflops, gpus, driven=False, block=128,
              share=1):
    """driven: every GPU in a group behind a core that drives it and
    computes its own columns beside it, as libmlsba runs an accelerator
    (the group's first device drives it); otherwise each GPU is alone and
    its driving core, which computes nothing, is no device; a node of no
    core (not driven) copies in its host's memory (host_copy). block: the
    blocks the speeds count (in_blocks). share: the processes that share
    each GPU (gpu_share)."""
    devs, groups = [], []
    core_dev = [{"name": "core%d" % c, "type": "sim", "kind": "core",
                 "speed": core_profile(core_gflops)} for c in range(cores)]
    for g, model in enumerate(gpus):
        _, spec, kind = gpu_spec(model)
        gpu = {"name": "gpu%d" % g, "type": "sim",
               "speed": gpu_share(spec, share)}
        if kind:
            gpu["kind"] = kind
        if driven:
            devs += [core_dev[g], gpu]
            groups.append(["core%d" % g, "gpu%d" % g])
        else:
            devs.append(gpu)
            groups.append(["gpu%d" % g])
    for c in range(len(gpus) if driven else 0, cores):
        devs.append(core_dev[c])
        groups.append(["core%d" % c])
    lines = ['{', '  "name": "%s",' % name]
    if cores == 0 and not driven:
        lines.append('  "memory": {"latency": 0, "bandwidth": %g},'
                     % host_copy(core_gflops, block))
    lines.append('  "devices": [')
    for i, d in enumerate(devs):
        speed = ", ".join("[%g, %g]" % (x, s)
                          for x, s in in_blocks(d["speed"], block))
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


def xml_fabric(count, gbps, prefix="node-", lat="3us", cores=1):
    """count hosts node-1..node-count on one non-blocking switch: a
    message shares only its two nodes' links (up at the sender, down at
    the receiver). A FATPIPE backbone faster than the node links would
    never limit a message, but would join every message of a step into
    one bandwidth-sharing system, which SimGrid re-solves whole at every
    message's end: at 1000 nodes that doubled the simulation's time.
    cores > 1: hosts of that many cores, for hosts of several ranks (each
    rank's compute charged on a core of its own), whose messages to each
    other take the host's memory (loopback: 40 Gbps, 1 us) instead of its
    link."""
    multi = ('' if cores == 1 else
             ' core="%d" loopback_bw="40Gbps" loopback_lat="1us"' % cores)
    return "\n".join([
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        '  <cluster id="fabric" prefix="%s" suffix="" radical="1-%d"'
        ' speed="10Gf" bw="%gGbps" lat="%s"%s/>'
        % (prefix, count, gbps, lat, multi),
        '</platform>']) + "\n"


def write(dirname, nodes, platform_xml, driven=False, block=128):
    """nodes: (host, name, cores, core_gflops, gpus[, share]) in rank
    order (share: node_json's)."""
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, "platform.xml"), "w") as f:
        f.write(platform_xml)
    with open(os.path.join(dirname, "hosts"), "w") as f:
        f.write("".join(n[0] + "\n" for n in nodes))
    for r, (host, name, cores, gf, gpus, *share) in enumerate(nodes):
        with open(os.path.join(dirname, "node%d.json" % r), "w") as f:
            f.write(node_json(name, cores, gf, gpus, driven, block, *share))


def grenoble(dirname, block=128):
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
    write(dirname, nodes, xml(clusters, 32), block=block)
    # The same nodes over Ethernet instead of InfiniBand (issue 24): every
    # node link 1 Gbit/s with 50 us, or 100 Mbit/s with 100 us (a switched
    # LAN's one-way latency through the TCP stack); the switches stay
    # non-blocking (FATPIPE backbones 4x a node link, as above).
    for fname, ggbps, lat in (("platform-1gbe.xml", 1, "50us"),
                              ("platform-100mbps.xml", 0.1, "100us")):
        with open(os.path.join(dirname, fname), "w") as f:
            f.write(xml([(c, k, ggbps) for c, k, _ in clusters], 4 * ggbps, lat))


def scale(n, dirname, block=128):
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
    write(dirname, nodes, xml_fabric(n, 32), block=block)


# Seed 003 (Shi et al., hybrid HPL) and seed 004 (Song and Dongarra):
# Westmere-EP cores, GPU nodes driven the libmlsba way (driven=True).
# A core's DGEMM: about 90 % of its peak at the clock Turbo Boost holds
# with every core busy (one bin of 133 MHz on the E5630, two on the X5650
# and X5660); Table IV's CPU-only HPL, 90.2 % of Oakley's nominal peak,
# rules out anything much lower.
E5630 = 9.6    # 2.53 GHz, 2.66 with all cores: 10.64 GFLOPS a core
X5650 = 10.5   # 2.66 GHz, 2.93 with all cores: 11.73 GFLOPS a core
X5660 = 11.0   # 2.80 GHz, 3.07 with all cores: 12.27 GFLOPS a core
# Fermi (515 GFLOPS DP): cublasDgemm at 302 GFLOPS at most, seed 004's
# own measurement (its Fig. 2) on these GPUs; the ramp and the streamed
# speed as grenoble's C2050. C' that fits: the C2050's 3 GB (2.6 GiB
# with ECC) as on grenoble, the M2070's 6 GB (5.25 GiB with ECC, 43008
# blocks) less room for the panels.
C2050 = ("Tesla C2050", (302.0, 160, 20000, 62.0), "c2050")
M2070 = ("Tesla M2070", (302.0, 160, 40000, 62.0), "m2070")
QDR_GBPS = 32  # InfiniBand QDR, 40 Gbit/s signalling: 32 of data


def seed003(dirname, prefix, gpu_nodes, cpu_nodes, cores, core, cpu, gpus,
            block=128, procs=1):
    """GPU nodes first (ranks 0..G-1, as Algorithm 1 places the GPU
    processes first), then the CPU nodes; one rank per node, or procs a
    GPU node: its MPI_G processes (seed 003's eqs. 1-2), ranks side by
    side, process j with cores / procs cores and GPU j gpus / procs (its
    share, time-sliced with the others on that GPU)."""
    nodes = []
    for i in range(gpu_nodes + cpu_nodes):
        host = "%s%d" % (prefix, i + 1)
        g = gpus if i < gpu_nodes else []
        desc = "%s node, %d %s cores" % ("GPU" if g else "CPU", cores, cpu)
        desc += "".join(" + " + m[0] for m in g)
        if not g or procs == 1:
            nodes.append((host, "%s: %s" % (host, desc), cores, core, g))
            continue
        for j in range(procs):
            mine = [g[j * len(g) // procs]]
            nodes.append((host, "%s: %s, process %d of %d (%d cores, 1/%d "
                          "of a GPU)" % (host, desc, j + 1, procs,
                                         cores // procs,
                                         procs // len(g)),
                          cores // procs, core, mine, procs // len(g)))
    write(dirname, nodes, xml_fabric(gpu_nodes + cpu_nodes, QDR_GBPS, prefix,
                                     "2us", procs),
          driven=True, block=block)


def cluster_a(dirname, gpu_nodes=8, cpu_nodes=32, block=128, procs=1):
    """Table I: two quad-core Xeon E5630 a node, a Tesla C2050 on each
    GPU node; Table IV: 8 GPU + 32 CPU nodes."""
    seed003(dirname, "clustera-", gpu_nodes, cpu_nodes, 8, E5630,
            "Xeon E5630", [C2050], block, procs)


def oakley(dirname, gpus=1, gpu_nodes=32, cpu_nodes=128, block=128,
           procs=1):
    """Table I: two six-core Xeon X5650 a node, one Tesla M2070 on each
    GPU node (1G-Config) or two (2G-Config); Table IV: 32 GPU + 128 CPU
    nodes."""
    seed003(dirname, "oakley-", gpu_nodes, cpu_nodes, 12, X5650,
            "Xeon X5650", [M2070] * gpus, block, procs)


def keeneland(k, dirname, gpus=3, block=128):
    """Seed 004's Keeneland: two six-core Xeon X5660 and three Tesla
    M2070 a node, Qlogic InfiniBand QDR; speeds in block x block blocks
    (seed 004's runs: 960, N = 34,560 = 36 blocks a node)."""
    nodes = []
    for i in range(k):
        host = "keeneland-%d" % (i + 1)
        desc = "12 Xeon X5660 cores" + " + Tesla M2070" * gpus
        nodes.append((host, "%s: %s" % (host, desc), 12, X5660, [M2070] * gpus))
    write(dirname, nodes, xml_fabric(k, QDR_GBPS, "keeneland-", "2us"),
          driven=True, block=block)


def parse(argv):
    ap = argparse.ArgumentParser(
        prog="generate.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="models/cluster/README.md says where every number comes from.")
    sub = ap.add_subparsers(dest="preset", required=True)
    blocked = []
    p = sub.add_parser("grenoble")
    p.add_argument("dir")
    blocked.append(p)
    p = sub.add_parser("scale")
    p.add_argument("n", type=int)
    p.add_argument("dir")
    blocked.append(p)
    for name, gmax, cmax in (("cluster-a", 8, 32), ("oakley", 32, 128)):
        p = sub.add_parser(name)
        p.add_argument("dir")
        p.add_argument("--gpu-nodes", type=int, default=gmax,
                       help="GPU nodes, 0 to %d (default %d)" % (gmax, gmax))
        p.add_argument("--cpu-nodes", type=int, default=cmax,
                       help="CPU nodes, 0 to %d (default %d)" % (cmax, cmax))
        p.set_defaults(gmax=gmax, cmax=cmax)
        if name == "oakley":
            p.add_argument("--gpus", type=int, default=1, choices=(1, 2),
                           help="GPUs a GPU node (default 1)")
        p.add_argument("--gpu-procs", type=int, default=1,
                       help="ranks a GPU node runs (seed 003's MPI_G; "
                       "default 1): a divisor of its cores and a multiple "
                       "of its GPUs")
        blocked.append(p)
    p = sub.add_parser("keeneland")
    p.add_argument("k", type=int, help="nodes, 1 to 120")
    p.add_argument("dir")
    p.add_argument("--gpus", type=int, default=3, choices=(0, 1, 2, 3),
                   help="GPUs a node uses (default 3)")
    blocked.append(p)
    for p in blocked:
        p.add_argument("--block", type=int, default=128,
                       help="the block size the speeds count, 16 to 4096 "
                       "(default 128)")
    a = ap.parse_args(argv)
    if a.preset == "scale" and a.n < 1:
        ap.error("scale: N must be at least 1, not %d" % a.n)
    if a.preset in ("cluster-a", "oakley"):
        if not 0 <= a.gpu_nodes <= a.gmax:
            ap.error("%s: --gpu-nodes must be 0 to %d, not %d"
                     % (a.preset, a.gmax, a.gpu_nodes))
        if not 0 <= a.cpu_nodes <= a.cmax:
            ap.error("%s: --cpu-nodes must be 0 to %d, not %d"
                     % (a.preset, a.cmax, a.cpu_nodes))
        cores, gpus = (8, 1) if a.preset == "cluster-a" else (12, a.gpus)
        if (a.gpu_procs < 1 or cores % a.gpu_procs
                or (a.gpu_procs > 1 and a.gpu_procs % gpus)):
            ap.error("%s: --gpu-procs must divide the %d cores of a node "
                     "and be a multiple of its %d GPUs, not %d"
                     % (a.preset, cores, gpus, a.gpu_procs))
        if a.gpu_nodes + a.cpu_nodes == 0:
            ap.error("%s: no nodes (--gpu-nodes and --cpu-nodes both 0)"
                     % a.preset)
    if a.preset == "keeneland" and not 1 <= a.k <= 120:
        ap.error("keeneland: K must be 1 to 120 (the system's nodes), "
                 "not %d" % a.k)
    if not 16 <= a.block <= 4096:
        ap.error("%s: --block must be 16 to 4096, not %d"
                 % (a.preset, a.block))
    return a


def main(argv):
    a = parse(argv)
    if a.preset == "grenoble":
        grenoble(a.dir, a.block)
    elif a.preset == "scale":
        scale(a.n, a.dir, a.block)
    elif a.preset == "cluster-a":
        cluster_a(a.dir, a.gpu_nodes, a.cpu_nodes, a.block, a.gpu_procs)
    elif a.preset == "oakley":
        oakley(a.dir, a.gpus, a.gpu_nodes, a.cpu_nodes, a.block,
               a.gpu_procs)
    else:
        keeneland(a.k, a.dir, a.gpus, a.block)


if __name__ == "__main__":
    main(sys.argv[1:])
