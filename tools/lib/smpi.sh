# shellcheck shell=bash
# Sourced by benchmarks/smpi-inpa, smpi-divide and smpi-master-worker: a
# build folder with the SimGrid programs (mlsba-inpa-smpi,
# mlsba-master-worker-smpi) in it.
#
# The SMPI targets exist only where CMake found smpicc when it configured
# the folder. tools/quickstart on a fresh machine configures build/release
# before SimGrid is installed (the scripts install it), so the folder is
# there and lacks them: configured again, CMake looks for smpicc anew.

# mlsba_smpi_has_target BUILD TARGET: whether BUILD's build system has
# TARGET: CMake lists every target's folder in TargetDirectories.txt
# whatever the generator (asking the build tool, make help, takes seconds).
mlsba_smpi_has_target() {
  grep -qs "/CMakeFiles/$2\.dir\$" "$1/CMakeFiles/TargetDirectories.txt"
}

# mlsba_smpi_configure ROOT BUILD TARGET: configure BUILD (Release when it
# is new) until it has TARGET, or say why it cannot and return 1.
mlsba_smpi_configure() {
  local root=$1 build=$2 target=$3
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
      { echo "error: cannot configure $build" >&2; return 1; }
  elif ! mlsba_smpi_has_target "$build" "$target"; then
    echo "==> $build lacks $target: configuring it again" >&2
    # The folder's own source tree and options (it may be another
    # checkout's); -U: whatever the cache says about smpicc (not found,
    # or an empty value), look for it again.
    cmake -UMLSBA_SMPICC "$build" >/dev/null ||
      { echo "error: cannot configure $build" >&2; return 1; }
  fi
  if ! mlsba_smpi_has_target "$build" "$target"; then
    echo "error: $build has no target $target: CMake found no smpicc" \
      "(Debian: $MLSBA_SIMGRID_PACKAGE), or the folder is built with" \
      "MLSBA_SANITIZE=ON or without MPI" >&2
    return 1
  fi
}

# mlsba_smpi_build ROOT BUILD TARGET: configure BUILD as above, then build
# TARGET in it.
mlsba_smpi_build() {
  mlsba_smpi_configure "$@" || return 1
  cmake --build "$2" -j "$(nproc 2>/dev/null || echo 2)" --target "$3" \
    >/dev/null
}
