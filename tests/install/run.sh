#!/usr/bin/env bash
# Install the built tree into a temporary prefix, then build and run an
# application outside the tree with find_package(mlsba) and with
# pkg-config. Usage: run.sh BUILD_DIR [EXTRA_C_FLAGS]
set -euo pipefail
build=$1
flags=${2:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# find -quit, not | head: nothing here writes into a pipe closed early.
libdir=$(dirname "$(find "$tmp/prefix" -name 'mlsba.pc' -print -quit)")/..
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# libmlsba links no LAPACK and no BLAS but its own BLIS, not even through
# another library (lib/devices/lapack.h): an OpenBLAS the application
# dlopens later, with the core type it asks for, is not one that
# libmlsba's start loaded already. Nor does pkg-config hand one out.
echo "-- no LAPACK or OpenBLAS among the libraries' dependencies"
for lib in "$libdir"/libmlsba.so "$libdir"/libmlsba_mpi.so; do
  [ -e "$lib" ] || continue
  if ldd "$lib" | grep -Ei 'lapack|openblas|libblas'; then
    echo "$lib loads a LAPACK or a BLAS as it starts"
    exit 1
  fi
done
if grep -E 'lapack|openblas' "$libdir"/pkgconfig/mlsba.pc; then
  echo "mlsba.pc hands out a LAPACK or an OpenBLAS"
  exit 1
fi

# The installed tools as a user runs them: from an empty folder, a sample
# platform by name, the report as JSON, models in the per-user cache; the
# folder stays empty. Man pages and reference pages are installed.
echo "-- installed tools from an empty folder"
bin="$tmp/prefix/bin"
mkdir "$tmp/empty"
(
  cd "$tmp/empty"
  export XDG_CACHE_HOME="$tmp/cache"
  "$bin/mlsba-bench" --platform desktop-seed002 --size 8400 --json - \
    >"$tmp/bench.json"
  grep -q '"stop": "balanced"' "$tmp/bench.json"
  "$bin/mlsba-partition" --platform desktop-seed002 --size 8400 \
    --json - >"$tmp/partition.json"
  grep -q '"algorithm": "mlsba"' "$tmp/partition.json"
  "$bin/mlsba-info" --platform desktop-seed002 >"$tmp/info.txt"
  grep -q 'gpu0' "$tmp/info.txt"
  # Bound to the first CPU, discovery shows its core alone.
  if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    MLSBA_NOPENCL=0 taskset -c 0 "$bin/mlsba-info" >"$tmp/info0.txt"
    grep -q '^core0 ' "$tmp/info0.txt"
    [ "$(grep -c '^core[0-9]' "$tmp/info0.txt")" = 1 ] ||
      { echo "taskset -c 0 mlsba-info shows more than core0"; exit 1; }
  fi
)
# mlsba-inpa as the README runs it, from the same empty folder: the
# real devices each rank is bound to (auto, the default), and the sample
# simulated nodes by name with %r; %l and %h expand too.
if [ -x "$bin/mlsba-inpa" ]; then
  echo "-- mlsba-inpa from an empty folder"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Open MPI's own allocations cannot be suppressed by name (test_mpi).
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  (
    cd "$tmp/empty"
    timeout 200 mpirun -np 2 --mca btl self,vader "$bin/mlsba-inpa" \
      --size 1024 --block 128 --json - >"$tmp/inpa-auto.json"
    grep -q '"verified": true' "$tmp/inpa-auto.json"
    timeout 100 mpirun -np 4 --oversubscribe --mca btl self,vader \
      "$bin/mlsba-inpa" --platform inpa-node%r --size 2048 --block 64 \
      --json - >"$tmp/inpa-sim.json"
    grep -q '"name": "gpu0"' "$tmp/inpa-sim.json"
    # Two ranks of one host: %l is 0 and 1, so ranks 0 and 1 run the
    # nodes of inpa-node0 (gpu0) and inpa-node1 (four cores).
    timeout 100 mpirun -np 2 --oversubscribe --mca btl self,vader \
      "$bin/mlsba-inpa" --platform inpa-node%l --size 1024 --block 64 \
      --json - >"$tmp/inpa-local.json"
    grep -q '"name": "gpu0"' "$tmp/inpa-local.json"
    grep -q '"name": "core3"' "$tmp/inpa-local.json"
    # %h: a file per host.
    cp "$tmp/prefix/share/mlsba/platforms/inpa-node1.json" \
      "$tmp/$(hostname)-node.json"
    # Into a file, as the jobs above: grep -q closes the pipe at its first
    # match, and mpirun, still forwarding the rank's output, aborted on
    # the SIGPIPE (a fresh clone's run, passed on rerun).
    timeout 100 mpirun -np 1 --mca btl self,vader "$bin/mlsba-inpa" \
      --platform "$tmp/%h-node.json" --size 512 --block 64 \
      --json - >"$tmp/inpa-host.json"
    grep -q '"name": "core3"' "$tmp/inpa-host.json"
  )
fi
left=$(ls -A "$tmp/empty")
[ -z "$left" ] || { echo "files left in the current folder: $left"; exit 1; }
# A simulated platform's models: under its name, keyed by the real shape.
ls "$tmp/cache/mlsba/sim-desktop-seed002/"*m-8400-k-8400*.model >/dev/null
for t in mlsba-bench mlsba-partition mlsba-info; do
  page="$tmp/prefix/share/man/man1/$t.1"
  grep -q '^\.SH SYNOPSIS' "$page" || { echo "no man page $page"; exit 1; }
  # --help names the folders of this install, not PREFIX.
  help=$("$bin/$t" --help)
  if grep -q PREFIX <<<"$help" ||
    ! grep -qF "$tmp/prefix/share/doc/mlsba" <<<"$help"; then
    echo "$t --help does not name $tmp/prefix/share/doc/mlsba:"
    echo "$help"
    exit 1
  fi
done
# Every installed man page says which environment variables matter.
for page in "$tmp/prefix/share/man/man1/"*.1; do
  grep -q '^\.SH ENVIRONMENT' "$page" &&
    grep -q 'MLSBA_NCPU' "$page" || { echo "no ENVIRONMENT in $page"; exit 1; }
done
for d in README status tools library balancing building across-nodes \
  platform-file model-file left-out-file bench-report partition-report \
  inpa-report mpi-api master-worker factor cpu-kernels; do
  [ -s "$tmp/prefix/share/doc/mlsba/$d.md" ] || { echo "no $d.md"; exit 1; }
done
[ -s "$tmp/prefix/share/doc/mlsba/LICENSE" ] || { echo "no LICENSE"; exit 1; }
# The API reference where Doxygen built it: man 3 for a function opens its
# header's page, and the HTML pages are there.
if [ -f "$build/docs/stamp" ]; then
  man3="$tmp/prefix/share/man/man3"
  grep -qx '\.so man3/mlsba_balance\.h\.3' "$man3/mlsba_balance.3" ||
    { echo "no man 3 mlsba_balance"; exit 1; }
  grep -q 'mlsba_balancer_run' "$man3/mlsba_balance.h.3" ||
    { echo "mlsba_balance.h.3 lacks mlsba_balancer_run"; exit 1; }
  # A page per header: the umbrella's and every topic's.
  for h in mlsba.h mlsba_core.h mlsba_model.h mlsba_partition.h \
    mlsba_platform.h mlsba_load.h mlsba_executor.h mlsba_balance.h; do
    [ -s "$man3/$h.3" ] || { echo "no man 3 $h"; exit 1; }
  done
  [ -s "$tmp/prefix/share/doc/mlsba/html/index.html" ] ||
    { echo "no HTML reference"; exit 1; }
fi

# Every installed header compiles alone, twice in a row (its guard), as C
# and as C++: a program may include one topic header and nothing else.
echo "-- every installed header alone"
inc="$tmp/prefix/include"
for h in "$inc/mlsba.h" "$inc"/mlsba/*.h; do
  rel=${h#"$inc"/}
  compilers=(cc c++)
  extra=()
  case "$rel" in
    mlsba/opencl.h)
      pkg-config --exists OpenCL || continue
      read -r -a extra <<<"$(pkg-config --cflags OpenCL)" ;;
    mlsba/mpi.h)
      command -v mpicc >/dev/null || continue
      compilers=(mpicc) ;;
  esac
  printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' \
    "$rel" "$rel" >"$tmp/alone.c"
  cp "$tmp/alone.c" "$tmp/alone.cpp"
  for c in "${compilers[@]}"; do
    command -v "$c" >/dev/null || continue
    src="$tmp/alone.c" std=-std=c11
    [ "$c" = c++ ] && src="$tmp/alone.cpp" std=-std=c++11
    # shellcheck disable=SC2086
    "$c" $std -Wall -Wextra -Werror -pedantic -I"$inc" ${extra[@]+"${extra[@]}"} \
      -c "$src" -o "$tmp/alone.o" ||
      { echo "<$rel> does not compile alone ($c)"; exit 1; }
  done
done

echo "-- find_package(mlsba), with no MPI to be found"
# Only the mpi component needs MPI.
cmake -S "$here/consumer" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON --no-warn-unused-cli \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/consumer"

echo "-- pkg-config --cflags --libs mlsba"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
cc $flags "$here/consumer/main.c" $(pkg-config --cflags --libs mlsba) \
  -o "$tmp/consumer-pc"
"$tmp/consumer-pc"

# The example programs, as a user copies them out of the installed
# package: both ways.
examples="$tmp/prefix/share/doc/mlsba/examples"
if pkg-config --exists OpenCL && [ -f "$tmp/prefix/include/mlsba/opencl.h" ]; then
  echo "-- tools/examples with find_package(mlsba)"
  cmake -S "$examples" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$tmp/examples" >/dev/null
  echo "-- tools/examples/hello_balance.c with pkg-config"
  # shellcheck disable=SC2046,SC2086
  # Its OpenCL calls link through mlsba.pc (Requires: OpenCL); -lm is
  # the example's own sqrtf.
  cc $flags "$examples/hello_balance.c" $(pkg-config --cflags --libs mlsba) \
    -lm -o "$tmp/hello-pc"
  "$tmp/hello-pc"
fi

# The MPI layer, both ways: a product across two ranks on simulated nodes.
if [ -f "$tmp/prefix/include/mlsba/mpi.h" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Open MPI's own allocations cannot be suppressed by name (test_mpi).
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  for r in 0 1; do cp "$here/../data/mpi/sim$r.json" "$tmp/sim$r.json"; done
  ranks() { mpirun -np 2 --oversubscribe --bind-to none --mca btl self,vader \
    "$@" "$tmp/sim%r.json"; }
  echo "-- find_package(mlsba COMPONENTS mpi)"
  cmake -S "$here/consumer_mpi" -B "$tmp/cmake-mpi" \
    -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$tmp/cmake-mpi" >/dev/null
  timeout 120 bash -c "$(declare -f ranks); tmp=$tmp; ranks $tmp/cmake-mpi/consumer_mpi"
  echo "-- pkg-config --cflags --libs mlsba-mpi"
  # shellcheck disable=SC2046,SC2086
  cc $flags "$here/consumer_mpi/main.c" $(pkg-config --cflags --libs mlsba-mpi) \
    -o "$tmp/consumer-mpi-pc"
  timeout 120 bash -c "$(declare -f ranks); tmp=$tmp; ranks $tmp/consumer-mpi-pc"
  if [ -x "$tmp/examples/mpi_divide" ]; then
    echo "-- tools/examples/mpi_divide (find_package(mlsba OPTIONAL_COMPONENTS mpi))"
    MLSBA_NOPENCL=0 timeout 120 mpirun -np 2 --oversubscribe --bind-to none \
      --mca btl self,vader -x MLSBA_NOPENCL "$tmp/examples/mpi_divide"
  fi
fi
