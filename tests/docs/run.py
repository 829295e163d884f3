#!/usr/bin/env python3
"""Every example of README.md and docs/*.md, run as a reader would.

  tests/docs/run.py REPO BINDIR... [--mpirun MPIRUN] [--cc CC CFLAGS LIB]
                    [--mpi-cc MPI_CFLAGS MPI_LIBS]

- A ```json block that is a platform file (it has "devices", and the
  paragraph before it names no "From `COMMAND`") is written
  as NAME.json (its "name") into a scratch folder; it must be valid, and
  the tools must take it: mlsba-info --platform (here, or naming the
  hardware this machine lacks), mlsba-bench, and, for a simulated one,
  mlsba-partition and (with --mpirun) mlsba-inpa on one rank, with
  --comm-model links when the file gives a "network" link.
- A ```json block that is a report follows a line "From `COMMAND`": the
  command is run, and every field the example shows must be in its output
  with the same JSON type (null stands for any).
- Every command of a ```sh block that runs a tool of the project
  (mlsba-*, mpirun ... mlsba-inpa) is run in the scratch folder, where
  tests/, benchmarks/ and models/ of the tree are at hand, and must exit
  0. A synopsis (a line with "[") is not a command. Commands about
  building and installing (tools/quickstart, tools/test, cmake, cc, mpicc,
  an application ./app or one under mpirun, paths in an install PREFIX)
  and the SimGrid runs of 90 simulated ranks are left
  to the tests that do those (install, mpi) and said so.
- A plain ``` block that is a saved model (it starts "mlsba-model") must
  be one that mlsba-info --show-model reads: checksum and all.
- A ```c block with #include <mlsba.h> and no "..." is a complete
  example: compiled (wrapped in main() when it has none) against the
  built library and run; one that calls LAPACK itself (declares a
  routine such as dgetrs_) is linked with -llapack too. One that
  includes <mlsba/mpi.h> is compiled with MPI's flags (--mpi-cc) and
  libmlsba_mpi too, and run under mpirun on 2 ranks in the scratch
  folder, where sim0.json and sim1.json (tests/data/mpi: simulated
  nodes) are at hand for "sim%r.json"; without --mpirun and --mpi-cc it
  is left out and said so.
Exit 0 when every example runs; 1 with one line per failure."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
# Shell lines that are not a reader's run of a tool, with why.
NOT_RUN = [
    (re.compile(r"^(tools/quickstart|tools/test)\b"), "builds and installs"),
    (re.compile(r"^(cmake|ctest|cc|mpicc|export|LD_LIBRARY_PATH=)"),
     "builds and tests the tree, or an app: the install test does"),
    (re.compile(r"^(mpirun|mpiexec)\b.*\s\./|\bPREFIX/"),
     "an application built against the installed package, or a path in "
     "the install PREFIX: the install test runs it"),
    (re.compile(r"^(G=|smpirun|benchmarks/|python3)"),
     "SimGrid at scale: benchmarks/RESULTS.md"),
]
# A command whose run as shown takes minutes here: the same, smaller.
SMALLER = [("mlsba-bench --compare", "--size 256")]
failures = []
notes = []


def fail(where, what):
    failures.append(f"{where}: {what}")


def blocks(repo):
    names = ["README.md"] + sorted(
        "docs/" + f for f in os.listdir(os.path.join(repo, "docs"))
        if f.endswith(".md"))
    for name in names:
        with open(os.path.join(repo, name), encoding="utf-8") as f:
            text = f.read()
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            before = text[max(0, m.start() - 400):m.start()]
            yield f"{name}:{line}", m.group(1), m.group(2), before


def run(cmd, cwd, env, timeout=600):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, shell=True, text=True,
                           capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"


def check_platform(where, doc, cwd, env, mpirun):
    name = doc.get("name", "platform")
    path = os.path.join(cwd, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    rc, out, err = run(f"mlsba-info --platform {shlex.quote(path)}", cwd, env)
    if rc == 1 and ("does not exist" in err or "OpenCL" in err):
        notes.append(f"{where}: needs hardware this machine lacks: "
                     f"{err.strip().splitlines()[0]}")
        return
    if rc != 0:
        fail(where, f"mlsba-info --platform refuses it: {err.strip()}")
        return
    sim = all(d.get("type") == "sim" for d in doc["devices"])
    if sim:
        rc, out, err = run(f"mlsba-partition --platform {shlex.quote(path)} "
                           "--n 1000", cwd, env)
        if rc != 0:
            fail(where, f"mlsba-partition refuses it: {err.strip()}")
    # Simulated or real, mlsba-bench runs it (a mix is refused).
    rc, out, err = run(f"mlsba-bench --platform {shlex.quote(path)} --size "
                       f"{1000 if sim else 256} --models none --quiet", cwd,
                       env)
    if rc != 0:
        fail(where, f"mlsba-bench refuses it: {err.strip()}")


def same_shape(shown, real, at):
    """Fields of the example missing from the real output, or of another
    type."""
    if shown is None or real is None:
        return []
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{at}: an object in the example"]
        bad = []
        for k, v in shown.items():
            if k not in real:
                bad.append(f"{at}.{k}: not in the output")
            else:
                bad += same_shape(v, real[k], f"{at}.{k}")
        return bad
    if isinstance(shown, list):
        if not isinstance(real, list):
            return [f"{at}: an array in the example"]
        return same_shape(shown[0], real[0], f"{at}[0]") if shown and real \
            else []
    kinds = (bool, (int, float), str)
    for k in kinds:
        if isinstance(shown, k) and not isinstance(real, k):
            return [f"{at}: {type(shown).__name__} in the example, "
                    f"{type(real).__name__} in the output"]
    return []


def from_line(before):
    """The "From `COMMAND`" of the paragraph just before a block, if any."""
    para = re.split(r"```|\n\s*\n", before.rstrip())[-1]
    return re.findall(r"From `([^`]+)`", para.replace("\n", " "))


def check_report(where, doc, before, cwd, env, mpirun):
    m = re.findall(r"From `([^`]+)`", before.replace("\n", " "))
    if not m:
        fail(where, 'a report example needs a line "From `COMMAND`"')
        return
    cmd = re.sub(r"\s+", " ", m[-1])
    if cmd.startswith("mpirun"):
        if not mpirun:
            notes.append(f"{where}: no MPI: {cmd[:60]}")
            return
        cmd = mpirun + cmd[len("mpirun"):]
    rc, out, err = run(cmd, cwd, mpi_env(env) if mpirun and
                       cmd.startswith(mpirun) else env)
    if rc != 0:
        fail(where, f"{cmd}: exit {rc}: {err.strip()[:300]}")
        return
    try:
        real = json.loads(out)
    except ValueError:
        fail(where, f"{cmd}: not JSON")
        return
    for bad in same_shape(doc, real, "report"):
        fail(where, f"{cmd}: {bad}")


def commands(body):
    """The commands of a sh block: continuation lines joined, comments
    dropped, a synopsis (a line with '[', and the lines indented under it)
    left out."""
    lines, joined, synopsis = body.split("\n"), [], False
    cur = ""
    for line in lines:
        if synopsis and line.startswith(" "):
            continue
        synopsis = False
        code = line.split(" #", 1)[0].rstrip() if not line.startswith("#") \
            else ""
        if cur:
            cur += " " + code.strip()
        else:
            cur = code.strip()
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        if "[" in cur and "%r" not in cur:
            synopsis = True
        elif cur:
            joined.append(cur)
        cur = ""
    return joined


def check_commands(where, body, cwd, env, mpirun):
    for cmd in commands(body):
        why = next((w for r, w in NOT_RUN if r.search(cmd)), None)
        if why:
            notes.append(f"{where}: not run ({why}): {cmd[:60]}")
            continue
        if not re.match(r"^(mlsba-|mpirun )", cmd):
            fail(where, f"a command the test does not know: {cmd}")
            continue
        is_mpi = re.match(r"^(mpirun|mlsba-inpa)\b", cmd) is not None
        if cmd.startswith("mpirun"):
            if not mpirun:
                notes.append(f"{where}: no MPI: {cmd[:60]}")
                continue
            cmd = mpirun + cmd[len("mpirun"):]
        for start, extra in SMALLER:
            if cmd.startswith(start) and "--size" not in cmd:
                cmd += " " + extra
                notes.append(f"{where}: run smaller ({extra}): {cmd[:60]}")
        rc, out, err = run(cmd, cwd, mpi_env(env) if is_mpi else env)
        if rc != 0:
            fail(where, f"{cmd}: exit {rc}: {(err or out).strip()[:300]}")


def mpi_env(env):
    """mlsba-inpa and its ranks: Open MPI leaves its plugins' allocations
    at MPI_Finalize, which LeakSanitizer cannot name, so they run without
    the leak check (as test_mpi's ranks do)."""
    env = dict(env)
    asan = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "detect_leaks=0"
    return env


def check_c(where, body, cwd, env, cc, mpi):
    if "..." in body or "#include <mlsba.h>" not in body:
        notes.append(f"{where}: a fragment (tools/examples has the "
                     "complete programs)")
        return
    if not cc:
        notes.append(f"{where}: no compiler given")
        return
    compiler, flags, lib = cc
    is_mpi = "#include <mlsba/mpi.h>" in body
    if is_mpi:
        if not mpi:
            notes.append(f"{where}: no MPI: an example across MPI ranks")
            return
        mpirun, mpi_flags, mpi_libs, repo = mpi
        flags, lib = f"{flags} {mpi_flags}", f"{mpi_libs} {lib}"
    src = body
    if "main(" not in body:
        head = [l for l in body.split("\n") if l.startswith("#include")]
        rest = [l for l in body.split("\n") if not l.startswith("#include")]
        src = ("#include <stdio.h>\n" + "\n".join(head) +
               "\nint main(void) {\n" + "\n".join(rest) + "\nreturn err;\n}\n")
    path = os.path.join(cwd, "example.c")
    with open(path, "w") as f:
        f.write(src)
    exe = os.path.join(cwd, "example")
    if re.search(r"\bvoid [sdcz][a-z]{4,5}_\(", body):
        lib = f"{lib} -llapack"
    rc, out, err = run(f"{compiler} {flags} {path} {lib} -lm -o {exe}", cwd,
                       env)
    if rc != 0:
        fail(where, f"does not compile: {err.strip()[:400]}")
        return
    if is_mpi:
        # Two ranks on the simulated nodes of tests/data/mpi (sim%r.json),
        # or, for an example whose platform is "auto", the cores.
        for r in (0, 1):
            shutil.copy(os.path.join(repo, "tests", "data", "mpi",
                                     f"sim{r}.json"), cwd)
        rc, out, err = run(f"{mpirun} -np 2 --oversubscribe --bind-to none "
                           f"--mca btl self,vader {exe}", cwd,
                           mpi_env(env), timeout=300)
    else:
        rc, out, err = run(exe, cwd, env)
    if rc != 0:
        fail(where, f"exits {rc}: {(err or out).strip()[:300]}")


def check_model(where, body, cwd, env):
    path = os.path.join(cwd, "example.model")
    with open(path, "w") as f:
        f.write(body)
    rc, out, err = run(f"mlsba-info --show-model {shlex.quote(path)}", cwd,
                       env)
    if rc != 0:
        fail(where, f"mlsba-info --show-model refuses it: {err.strip()}")


def main(argv):
    args, mpirun, cc = argv[1:], None, None
    if "--cc" in args:
        i = args.index("--cc")
        cc, args = tuple(args[i + 1:i + 4]), args[:i] + args[i + 4:]
    mpi_cc = None
    if "--mpi-cc" in args:
        i = args.index("--mpi-cc")
        mpi_cc, args = tuple(args[i + 1:i + 3]), args[:i] + args[i + 3:]
    if "--mpirun" in args:
        i = args.index("--mpirun")
        mpirun, args = args[i + 1], args[:i] + args[i + 2:]
    repo, bins = os.path.abspath(args[0]), [os.path.abspath(b)
                                            for b in args[1:]]
    with tempfile.TemporaryDirectory(prefix="mlsba-docs-") as cwd:
        for d in ("tests", "benchmarks", "models"):
            os.symlink(os.path.join(repo, d), os.path.join(cwd, d))
        mpi = (mpirun,) + mpi_cc + (repo,) if mpirun and mpi_cc else None
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join(bins + [env.get("PATH", "")])
        env["XDG_CACHE_HOME"] = os.path.join(cwd, "cache")
        # The developer's own cache folder is not the examples' to fill.
        env.pop("MLSBA_CACHE_DIR", None)
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        # Platforms first: the commands may name them.
        found = list(blocks(repo))
        for where, lang, body, before in found:
            if lang != "json":
                continue
            try:
                doc = json.loads(body)
            except ValueError as e:
                fail(where, f"not valid JSON: {e}")
                continue
            if "devices" in doc and not from_line(before):
                check_platform(where, doc, cwd, env, mpirun)
            else:
                check_report(where, doc, before, cwd, env, mpirun)
        for where, lang, body, before in found:
            if lang == "" and body.startswith("mlsba-model "):
                check_model(where, body, cwd, env)
            elif lang == "sh":
                check_commands(where, body, cwd, env, mpirun)
            elif lang == "c":
                check_c(where, body, cwd, env, cc, mpi)
    for n in notes:
        print("note:", n)
    for f in failures:
        print("FAIL:", f)
    print(f"docs examples: {len(found)} blocks, {len(failures)} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
