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
libdir=$(dirname "$(find "$tmp/prefix" -name 'mlsba.pc' | head -n1)")/..
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "-- find_package(mlsba)"
cmake -S "$here/consumer" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
"$tmp/cmake/consumer"

echo "-- pkg-config --cflags --libs mlsba"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
cc $flags "$here/consumer/main.c" $(pkg-config --cflags --libs mlsba) \
  -o "$tmp/consumer-pc"
"$tmp/consumer-pc"

# The example programs, as a user copies them out of the tree: both ways.
examples="$here/../../tools/examples"
if pkg-config --exists OpenCL && [ -f "$tmp/prefix/include/mlsba/opencl.h" ]; then
  echo "-- tools/examples with find_package(mlsba)"
  cmake -S "$examples" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
  cmake --build "$tmp/examples" >/dev/null
  echo "-- tools/examples/hello_balance.c with pkg-config"
  # shellcheck disable=SC2046,SC2086
  cc $flags "$examples/hello_balance.c" $(pkg-config --cflags --libs mlsba) \
    -lOpenCL -lm -o "$tmp/hello-pc"
  "$tmp/hello-pc"
fi
