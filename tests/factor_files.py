#!/usr/bin/env python3
"""The files of lib/factor call one way: down the list that
lib/factor/driver.h gives (its head comment, one "  name.c  what it does"
line per file), never up, so that there is no circle between them.

  tests/factor_files.py DRIVER_H NM OBJECT...

Reads which object defines and which uses every symbol (NM -P), keeps
the objects of lib/factor, and fails naming each call that goes up the
list, each file of lib/factor that calls or is called by a listed file
without being listed, and each listed file without an object. Then it
checks the same objects against the list reversed, where the calls must
be found going the wrong way: the check can fail.
"""
import os
import re
import subprocess
import sys


def listed_order(driver_h):
    """The files driver.h lists, in order."""
    with open(driver_h, encoding="utf-8") as f:
        head = f.read().split("*/", 1)[0]
    return re.findall(r"^ \*   (\w+\.c)\s", head, flags=re.M)


def symbols(nm, objects):
    """{file: (defined, used)} for the objects of lib/factor."""
    out = {}
    for obj in objects:
        m = re.search(r"lib/factor/(\w+\.c)\.o$", obj.replace(os.sep, "/"))
        if not m:
            continue
        text = subprocess.run([nm, "-P", obj], capture_output=True, text=True,
                              check=True).stdout
        defined, used = set(), set()
        for line in text.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            if parts[1] == "U":
                used.add(parts[0])
            elif parts[1] in "TDRBC":
                defined.add(parts[0])
        out[m.group(1)] = (defined, used)
    return out


def calls(files):
    """Every (caller, callee) pair between two files."""
    owner = {}
    for name, (defined, _) in files.items():
        for s in defined:
            owner[s] = name
    edges = set()
    for name, (_, used) in files.items():
        for s in used:
            if s in owner and owner[s] != name:
                edges.add((name, owner[s]))
    return edges


def problems(order, files, edges):
    """What breaks the order: its lines."""
    # A build without OpenCL has cl_none.c where cl_share.c is.
    place = {name: i for i, name in enumerate(order)}
    if "cl_share.c" in place:
        place.setdefault("cl_none.c", place["cl_share.c"])
    out = []
    for a, b in sorted(edges):
        if a not in place or b not in place:
            out.append(f"{a} calls {b}, and "
                       f"{a if a not in place else b} is not in the list")
        elif place[b] <= place[a]:
            out.append(f"{a} calls {b}, which is above it in the list")
    for name in order:
        if name not in files and not name.startswith("cl_"):
            out.append(f"{name} is listed but has no object")
    return out


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    order = listed_order(argv[1])
    files = symbols(argv[2], argv[3:])
    edges = calls(files)
    if len(order) < 10 or not edges:
        print(f"factor_files: read {len(order)} files from {argv[1]} and "
              f"{len(edges)} calls from the objects: too few to check",
              file=sys.stderr)
        return 1
    bad = problems(order, files, edges)
    for line in bad:
        print("factor_files: " + line, file=sys.stderr)
    if bad:
        return 1
    upward = [line for line in problems(order[::-1], files, edges)
              if "above it" in line]
    if not upward:
        print("factor_files: the reversed list passed too: the check "
              "cannot fail", file=sys.stderr)
        return 1
    print(f"factor_files: {len(edges)} calls between {len(files)} files go "
          f"down the list of {len(order)} (reversed: {len(upward)} go up)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
