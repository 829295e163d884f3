#!/usr/bin/env bash
# No line of the tools' tables and progress is wider than 80 columns: the
# sim desktop alone and with --compare, progress as a line per run
# (--progress) and, on a terminal (script), redrawn in place; and the
# tables of mlsba-partition and mlsba-info; and, when built, the example
# programs (the library's log lines and its result in words, wrapped).
# Usage: width.sh BIN_DIR TOOLS_DIR SOURCE_DIR [EXAMPLES_DIR]
set -euo pipefail
bench=$1/mlsba-bench
tools=$2
platform=$3/models/sim/desktop-seed002.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
failed=0

# check NAME FILE: every line (and every part of a line redrawn with a
# carriage return, less the clear-to-end escape) fits 80 columns.
check() {
  local name=$1 file=$2 long
  long=$(tr '\r' '\n' <"$file" | sed 's/\x1b\[K//g' |
    awk 'length($0) > 80 { printf "  %d: %s\n", length($0), $0 }')
  if [ -n "$long" ]; then
    echo "FAIL: $name has lines wider than 80 columns:"
    echo "$long"
    failed=1
  elif [ ! -s "$file" ]; then
    echo "FAIL: $name printed nothing"
    failed=1
  else
    echo "ok: $name ($(wc -l <"$file") lines)"
  fi
}

"$bench" --platform "$platform" --size 8400 --models none --progress \
  >"$tmp/one.txt"
check "mlsba-bench --progress" "$tmp/one.txt"
"$bench" --platform "$platform" --size 8400 --models none --progress \
  --compare >"$tmp/compare.txt"
check "mlsba-bench --compare --progress" "$tmp/compare.txt"
grep -q "imbalance" "$tmp/compare.txt" || { echo "FAIL: no progress"; failed=1; }
# On a terminal: the progress line redrawn in place.
script -qec "'$bench' --platform '$platform' --size 8400 --models none --compare" \
  /dev/null >"$tmp/tty.txt" </dev/null
check "mlsba-bench --compare on a terminal" "$tmp/tty.txt"
grep -q $'\r' "$tmp/tty.txt" || { echo "FAIL: no line redrawn in place"; failed=1; }
"$tools/mlsba-partition" --platform "$platform" --size 8400 --algo all \
  >"$tmp/partition.txt"
check "mlsba-partition --algo all" "$tmp/partition.txt"
"$tools/mlsba-info" >"$tmp/info.txt"
check "mlsba-info" "$tmp/info.txt"
helped=("$bench" "$tools/mlsba-partition" "$tools/mlsba-info")
[ -x "$tools/mlsba-inpa" ] && helped+=("$tools/mlsba-inpa") # MPI builds
for t in "${helped[@]}"; do
  if [ "${t##*/}" = mlsba-inpa ]; then
    # Open MPI's unloaded plugins leave allocations LeakSanitizer cannot
    # name (test_mpi.c says more): no leak check for the MPI tool.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      "$t" --help >"$tmp/help.txt"
  else
    "$t" --help >"$tmp/help.txt"
  fi
  check "$(basename "$t") --help" "$tmp/help.txt"
done
if [ -n "${4:-}" ]; then
  "$4/hello_balance" >"$tmp/hello.txt"
  check "hello_balance" "$tmp/hello.txt"
  grep -q "^hello_balance: success" "$tmp/hello.txt" ||
    { echo "FAIL: hello_balance did not end in success"; failed=1; }
  "$4/iterate" 12 >"$tmp/iterate.txt"
  check "iterate 12" "$tmp/iterate.txt"
  grep -q "^iterate: success" "$tmp/iterate.txt" ||
    { echo "FAIL: iterate did not end in success"; failed=1; }
fi
exit $failed
