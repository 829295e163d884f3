#!/usr/bin/env python3
"""The cluster platforms of models/cluster are what its README says.

  tests/cluster_models.py MODELS_DIR [MLSBA_INFO]

For every preset of generate.py (grenoble, scale, cluster-a, oakley,
keeneland, and the subsets the seeds' figures use, seed 003's GPU nodes
run as several ranks): the node count, each rank's cores and GPUs and its groups (a GPU behind the core that drives
it), the hosts against platform.xml, output that is the same on every
run (grenoble-90 as committed), bad arguments refused with a reason, and
the devices' fastest speeds summed against the papers' own figures:
never above Table I's theoretical peaks (Shi et al.), never below the
HPL rates Table IV measured, Table IV's TPE reproduced from the node and
GPU counts written, and Keeneland's nodes between Song and Dongarra's
measured Cholesky rate and the hardware's peak. With MLSBA_INFO, the
library reads a GPU node's and a CPU node's file of every preset."""
import filecmp
import json
import os
import re
import subprocess
import sys
import tempfile

MODELS, INFO = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
GEN = os.path.join(MODELS, "generate.py")
BLOCK_GFLOP = 2 * 128 ** 3 / 1e9  # one 128 x 128 block of C' by one step
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def generate(*args):
    return subprocess.run([sys.executable, GEN, *args], capture_output=True,
                          text=True, check=False)


def nodes_of(d, shared=False):
    """Rank i's parsed node<i>.json, in rank order; checks the files.
    shared: a host may run several ranks, side by side."""
    with open(os.path.join(d, "hosts"), encoding="utf-8") as f:
        hosts = f.read().split()
    files = sorted(f for f in os.listdir(d) if re.fullmatch(r"node\d+\.json", f))
    check(files == sorted("node%d.json" % i for i in range(len(hosts))),
          "%s: node files %s for %d hosts" % (d, files[:3], len(hosts)))
    with open(os.path.join(d, "platform.xml"), encoding="utf-8") as f:
        xml = f.read()
    declared = set()
    for prefix, lo, hi in re.findall(
            r'prefix="([^"]+)" suffix="" radical="(\d+)-(\d+)"', xml):
        declared |= {"%s%d" % (prefix, i) for i in range(int(lo), int(hi) + 1)}
    runs = [h for i, h in enumerate(hosts) if i == 0 or hosts[i - 1] != h]
    check(len(set(runs)) == len(runs) and set(hosts) == declared and
          (shared or len(runs) == len(hosts)),
          "%s: hosts and platform.xml's hosts differ" % d)
    nodes = []
    for i in range(len(hosts)):
        with open(os.path.join(d, "node%d.json" % i), encoding="utf-8") as f:
            nodes.append(json.load(f))
    return nodes


def shape(node):
    """(cores, GPUs, groups): a GPU's group must be [its core, it]."""
    devs = [x["name"] for x in node["devices"]]
    check(len(set(devs)) == len(devs), "%s: device names repeat" % node["name"])
    grouped = [x for g in node["groups"] for x in g]
    check(sorted(grouped) == sorted(devs),
          "%s: groups do not hold every device once" % node["name"])
    for d in node["devices"]:
        loads = [p[0] for p in d["speed"]]
        check(d["type"] == "sim" and loads == sorted(set(loads)),
              "%s %s: not a simulated profile of rising loads"
              % (node["name"], d["name"]))
    gpus = [x for x in devs if x.startswith("gpu")]
    return len(devs) - len(gpus), len(gpus), node["groups"]


def gflops(device):
    return max(s for _, s in device["speed"]) * BLOCK_GFLOP


def split(node):
    """The node's fastest DGEMM, cores and GPUs apart, in GFLOPS."""
    cores = sum(gflops(d) for d in node["devices"]
                if d["name"].startswith("core"))
    gpus = [gflops(d) for d in node["devices"] if d["name"].startswith("gpu")]
    return cores, gpus


def deterministic(tmp, args, label, twice=True):
    """Writes the preset; twice: again, and the two must be the same (the
    large ones once: this test runs beside the others on a busy machine)."""
    a, b = os.path.join(tmp, label + "-1"), os.path.join(tmp, label + "-2")
    for d in (a, b) if twice else (a,):
        r = generate(*args[:-1], d) if args[-1] == "DIR" else None
        check(r.returncode == 0, "%s: %s" % (label, r.stderr.strip()))
    if not twice:
        return a
    cmp = filecmp.dircmp(a, b)
    same = not (cmp.left_only or cmp.right_only) and all(
        filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False)
        for f in cmp.common_files)
    check(same, "%s: two runs wrote different files" % label)
    return a


def seed003(tmp, label, args, cpu_peak, gpus_per_node, table4):
    """Table I's peaks, Table IV's measured HPL rates and TPE."""
    g_max, c_max = (8, 32) if label == "cluster-a" else (32, 128)
    d = deterministic(tmp, [label, *args, "DIR"], label + "".join(args),
                      twice=label == "cluster-a")
    nodes = nodes_of(d)
    check(len(nodes) == g_max + c_max,
          "%s: %d nodes, not %d" % (label, len(nodes), g_max + c_max))
    r_c, r_g, r_h, tpe = table4
    cores = 8 if label == "cluster-a" else 12
    total = 0
    for i, n in enumerate(nodes):
        gpu_node = i < g_max  # the GPU nodes are ranks 0 .. G-1
        c, g, groups = shape(n)
        want_g = gpus_per_node if gpu_node else 0
        check((c, g) == (cores, want_g), "%s rank %d: %d cores %d GPUs, not "
              "%d and %d" % (label, i, c, g, cores, want_g))
        check(all(["core%d" % j, "gpu%d" % j] in groups for j in range(g)),
              "%s rank %d: a GPU not behind its core" % (label, i))
        cg, gg = split(n)
        total += cg + sum(gg)
        # The cores' DGEMM: at most their peak, at least 85% of it.
        check(0.85 * cpu_peak <= cg <= cpu_peak, "%s rank %d: cores %.1f "
              "GFLOPS against Table I's %.2f" % (label, i, cg, cpu_peak))
        # Fermi's DGEMM: Song and Dongarra measured 302 GFLOPS at most.
        check(all(0.95 * 302 <= x <= 302 for x in gg),
              "%s rank %d: GPUs at %s GFLOPS" % (label, i, gg))
        # No measured HPL beats the DGEMM the node is modelled at.
        floor = r_g / g_max if gpu_node else r_c / (g_max + c_max)
        check(cg + sum(gg) >= floor, "%s rank %d: %.1f GFLOPS, below Table "
              "IV's %.1f" % (label, i, cg + sum(gg), floor))
    gpus = sum(shape(n)[1] for n in nodes)
    theo = len(nodes) * cpu_peak + gpus * 515
    check(abs(100 * r_h / theo - tpe) < 0.1, "%s: TPE %.2f%%, Table IV "
          "%.1f%%" % (label, 100 * r_h / theo, tpe))
    check(r_h <= total <= theo, "%s: %.0f GFLOPS modelled, not between "
          "Table IV's %d and the peak %.0f" % (label, total, r_h, theo))


def subsets(tmp):
    """The subsets of the seed's figures, and the CPU-only and GPU-only
    clusters of its PPE."""
    for args, want in (
            (["cluster-a", "--gpu-nodes", "4", "--cpu-nodes", "16"],
             [(8, 1)] * 4 + [(8, 0)] * 16),
            (["oakley", "--gpus", "2", "--gpu-nodes", "16",
              "--cpu-nodes", "64"], [(12, 2)] * 16 + [(12, 0)] * 64),
            (["oakley", "--gpu-nodes", "0", "--cpu-nodes", "128"],
             [(12, 0)] * 128),
            (["cluster-a", "--cpu-nodes", "0"], [(8, 1)] * 8),
            (["keeneland", "4", "--gpus", "0"], [(12, 0)] * 4)):
        d = os.path.join(tmp, "-".join(args))
        r = generate(*args[:2 if args[0] == "keeneland" else 1], d,
                     *args[2 if args[0] == "keeneland" else 1:])
        check(r.returncode == 0, "%s: %s" % (args, r.stderr.strip()))
        got = [shape(n)[:2] for n in nodes_of(d)]
        check(got == want, "%s: nodes %s" % (args, got[:3]))


def gpu_procs(tmp):
    """--gpu-procs K: seed 003's MPI_G ranks on each GPU node, side by
    side on its host (of K cores in platform.xml), each with cores / K
    cores, the first driving its share of a GPU that S = K / G ranks
    time-slice (G the node's GPUs): the GPU's speed at the rank's own
    load over S, C' fitting up to a S-th of the GPU's blocks, and beyond
    that a S-th of its streamed speed."""
    for args, k, per_gpu, cores in (
            (["cluster-a", "--gpu-nodes", "2", "--cpu-nodes", "2"], 4, 4, 8),
            (["oakley", "--gpus", "2", "--gpu-nodes", "1", "--cpu-nodes",
              "1"], 6, 3, 12)):
        base = os.path.join(tmp, "-".join(args))
        d = base + "-procs%d" % k
        r = generate(args[0], base, *args[1:])
        check(r.returncode == 0, "%s: %s" % (args, r.stderr.strip()))
        r = generate(args[0], d, *args[1:], "--gpu-procs", str(k))
        check(r.returncode == 0, "%s --gpu-procs %d: %s" % (
            args, k, r.stderr.strip()))
        whole = nodes_of(base)
        g = int(args[args.index("--gpu-nodes") + 1])
        c = int(args[args.index("--cpu-nodes") + 1])
        nodes = nodes_of(d, shared=True)
        with open(os.path.join(d, "hosts"), encoding="utf-8") as f:
            hosts = f.read().split()
        with open(os.path.join(d, "platform.xml"), encoding="utf-8") as f:
            check(' core="%d"' % k in f.read(),
                  "%s --gpu-procs %d: hosts not of %d cores" % (args, k, k))
        check(len(nodes) == g * k + c and
              [hosts[i * k] for i in range(g)] * k ==
              [hosts[i * k + j] for j in range(k) for i in range(g)],
              "%s --gpu-procs %d: %d ranks on %s" % (args, k, len(nodes),
                                                     hosts))
        for i, n in enumerate(nodes):
            gpu_rank = i < g * k
            got = shape(n)
            want = ((cores // k, 1, [["core0", "gpu0"]] + [
                ["core%d" % j] for j in range(1, cores // k)])
                    if gpu_rank else (cores, 0, whole[-1]["groups"]))
            check(got == want, "%s --gpu-procs %d rank %d: %s" % (
                args, k, i, got))
            if not gpu_rank:
                continue
            share = n["devices"][1]["speed"]
            full = [x for x in whole[0]["devices"]
                    if x["name"] == "gpu%d" % ((i % k) * (k // per_gpu) // k)]
            whole_gpu = full[0]["speed"] if len(full) == 1 else [[1, 1]] * 3
            fits = whole_gpu[-2][0] // per_gpu
            ramp = dict((x, t) for x, t in whole_gpu[:-2])
            check(len(full) == 1 and share[-2][0] == fits and
                  all(x in ramp and abs(t * per_gpu / ramp[x] - 1) < 1e-4
                      for x, t in share[:-2]) and
                  len(share) - 2 == sum(x < fits for x in ramp) and
                  abs(share[-1][1] * per_gpu / whole_gpu[-1][1] - 1) < 1e-4,
                  "%s --gpu-procs %d rank %d: GPU share %s" % (
                      args, k, i, share))


def keeneland(tmp):
    # Two six-core X5660 at 2.8 GHz (4 flops a cycle) and three M2070.
    peak = 12 * 2.8 * 4 + 3 * 515
    for k in (1, 100):
        nodes = nodes_of(deterministic(tmp, ["keeneland", str(k), "DIR"],
                                       "keeneland%d" % k, twice=k == 1))
        check(len(nodes) == k, "keeneland %d: %d nodes" % (k, len(nodes)))
        for i, n in enumerate(nodes):
            c, g, groups = shape(n)
            cg, gg = split(n)
            check((c, g) == (12, 3) and [["core%d" % j, "gpu%d" % j]
                                         for j in range(3)] == groups[:3],
                  "keeneland rank %d: %d cores %d GPUs %s" % (i, c, g, groups))
            # Above the Cholesky Song and Dongarra measured a node
            # (Table I, 1 node: N = 34,560 in 19.6 s; Fig. 10: 75 TFLOPS on
            # 100 nodes), below the peak.
            one = 34560.0 ** 3 / 3 / 19.6 / 1e9
            check(max(one, 750) <= cg + sum(gg) <= peak,
                  "keeneland rank %d: %.0f GFLOPS" % (i, cg + sum(gg)))
    # --block 960 (seed 004's tile): the same devices, each point the
    # same area of C' (so the same memory cap) at the same GFLOPS, counted
    # in 960 x 960 blocks of depth 960.
    d = os.path.join(tmp, "keeneland960")
    r = generate("keeneland", "1", d, "--block", "960")
    check(r.returncode == 0, "keeneland --block 960: %s" % r.stderr.strip())
    base = nodes_of(os.path.join(tmp, "keeneland1-1"))[0]["devices"]
    for a, b in zip(base, nodes_of(d)[0]["devices"]):
        for (x, s), (y, t) in zip(a["speed"], b["speed"]):
            check(abs(y * 960 ** 2 / (x * 128 ** 2) - 1) < 1e-4 and
                  abs(t * 960 ** 3 / (s * 128 ** 3) - 1) < 1e-4,
                  "keeneland --block 960 %s: [%g, %g] for [%g, %g]"
                  % (b["name"], y, t, x, s))


def refused(tmp):
    for args, says in ((["cluster-a", "--gpu-nodes", "9"], "--gpu-nodes"),
                       (["oakley", "--cpu-nodes", "-1"], "--cpu-nodes"),
                       (["oakley", "--gpus", "3"], "--gpus"),
                       (["cluster-a", "--gpu-procs", "3"], "--gpu-procs"),
                       (["oakley", "--gpus", "2", "--gpu-procs", "3"],
                        "--gpu-procs"),
                       (["oakley", "--gpu-procs", "0"], "--gpu-procs"),
                       (["cluster-a", "--gpu-nodes", "0", "--cpu-nodes", "0"],
                        "no nodes"),
                       (["keeneland", "0"], "1 to 120"),
                       (["keeneland", "121"], "1 to 120"),
                       (["keeneland", "x"], "invalid int"),
                       (["keeneland", "1", "--block", "8"], "16 to 4096"),
                       (["scale", "0"], "at least 1"),
                       (["frontier"], "invalid choice")):
        d = os.path.join(tmp, "refused")
        pos = 2 if args[0] in ("keeneland", "scale") else 1
        r = generate(*args[:pos], d, *args[pos:])
        check(r.returncode != 0 and says in r.stderr and
              not os.path.exists(d), "%s: exit %d, %r" % (
                  args, r.returncode, r.stderr.strip()[-120:]))


def library_reads(tmp):
    """mlsba-info takes a GPU node's and a CPU node's file of each."""
    for d in sorted(os.listdir(tmp)):
        path = os.path.join(tmp, d)
        # A preset's second run wrote the same files as its first.
        if d.endswith("-2") or not os.path.exists(
                os.path.join(path, "hosts")):
            continue
        last = len(open(os.path.join(path, "hosts")).read().split()) - 1
        for i in sorted({0, last}):
            f = os.path.join(path, "node%d.json" % i)
            r = subprocess.run([INFO, "--platform", f], capture_output=True,
                               text=True, check=False)
            names = [x["name"] for x in json.load(open(f))["devices"]]
            check(r.returncode == 0 and all(x in r.stdout for x in names),
                  "mlsba-info --platform %s: exit %d %s" % (
                      f, r.returncode, r.stderr.strip()[:200]))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        g = deterministic(tmp, ["grenoble", "DIR"], "grenoble")
        cmp = filecmp.dircmp(g, os.path.join(MODELS, "grenoble-90"))
        check(not (cmp.left_only or cmp.right_only or cmp.diff_files),
              "grenoble-90 is not what generate.py writes: %s %s %s" % (
                  cmp.left_only, cmp.right_only, cmp.diff_files))
        check(len(nodes_of(g)) == 90, "grenoble: not 90 nodes")
        s = nodes_of(deterministic(tmp, ["scale", "120", "DIR"], "scale"))
        check(len(s) == 120, "scale 120: %d nodes" % len(s))
        # Table I: 8 E5630 cores at 2.53 GHz and 12 X5650 at 2.66, 4 flops
        # a cycle; Table IV: R_peak-c, R_peak-g, R_peak-h, TPE.
        seed003(tmp, "cluster-a", [], 80.96, 1, (2479, 2911, 3888, 52.8))
        seed003(tmp, "oakley", [], 127.68, 1, (18428, 11722, 22040, 59.7))
        seed003(tmp, "oakley", ["--gpus", "2"], 127.68, 2,
                (18428, 16670, 27110, 50.8))
        subsets(tmp)
        gpu_procs(tmp)
        keeneland(tmp)
        refused(tmp)
        if INFO:
            library_reads(tmp)
    for f in failures:
        print("FAIL:", f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
