#!/usr/bin/env bash
# The smpi-* benchmarks' configure step (tools/lib/smpi.sh) on a build
# folder that lacks the SMPI targets, as tools/quickstart leaves
# build/release on a fresh machine (configured before SimGrid was
# installed): configured again, the folder gets them; a folder that has
# them is left alone. The folder is configured without smpicc by an empty
# MLSBA_SMPICC, which CMake keeps as it keeps "not found" (unlike a real
# absence, that needs no root to set up). Exit 77 without smpicc.
# Usage: smpi_configure.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
root=$1 build=$2/smpi-configure
command -v smpicc >/dev/null || { echo "skip: no smpicc"; exit 77; }
# shellcheck source=../../tools/lib/deps.sh
source "$root/tools/lib/deps.sh"
# shellcheck source=../../tools/lib/smpi.sh
source "$root/tools/lib/smpi.sh"
rm -rf "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DMLSBA_BUILD_TESTS=OFF -DMLSBA_BUILD_BENCHMARKS=OFF \
  -DMLSBA_BUILD_DOCS=OFF -DMLSBA_SMPICC= >/dev/null
if mlsba_smpi_has_target "$build" mlsba-master-worker-smpi; then
  echo "FAIL: the folder configured without smpicc has the target"; exit 1
fi
log=$(mlsba_smpi_configure "$root" "$build" mlsba-master-worker-smpi 2>&1) ||
  { echo "FAIL: configure step: $log"; exit 1; }
for t in mlsba-master-worker-smpi mlsba-inpa-smpi; do
  mlsba_smpi_has_target "$build" "$t" ||
    { echo "FAIL: configured again, the folder lacks $t"; exit 1; }
done
grep -q "configuring it again" <<<"$log" ||
  { echo "FAIL: the folder was not configured again: $log"; exit 1; }
# A folder that has the targets is not configured again.
log=$(mlsba_smpi_configure "$root" "$build" mlsba-inpa-smpi 2>&1)
if grep -q "configuring it again" <<<"$log"; then
  echo "FAIL: a folder with the target was configured again"; exit 1
fi
rm -rf "$build"
echo "ok: a folder without the SMPI targets is configured again and has them"
