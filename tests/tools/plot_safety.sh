#!/usr/bin/env bash
# Nothing a platform file or a user writes reaches a shell or gnuplot's
# command substitution: a device named with backquotes, $(...) and both
# quotes, drawn into a folder whose name has a quote and ";touch X;",
# gives the pictures and creates no file X anywhere; --plot makes no
# missing parent folders.
# Usage: plot_safety.sh MLSBA_BENCH SOURCE_DIR
set -euo pipefail
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# In the JSON file: gpu0`touch PWNED1`$(touch PWNED2)'\"q (sed turns \\ into \).
# shellcheck disable=SC2016 # not expanded here: that is the point
evil='gpu0`touch PWNED1`$(touch PWNED2)'"'"'\\"q'
sed "s/\"gpu0\"/\"$evil\"/g" "$2/models/sim/desktop-seed002.json" >evil.json
grep -q PWNED1 evil.json
dir="bob's plots;touch PWNED3;'\$(touch PWNED4)"
"$bench" --platform evil.json --size 8400 --models none --quiet \
  --plot "$dir" >out.txt
found=$(find "$tmp" -name 'PWNED*')
if [ -n "$found" ]; then
  echo "FAIL: a name reached a shell: $found"
  exit 1
fi
for f in speed.png speed.svg timeline.png timeline.svg; do
  [ -s "$dir/$f" ] || { echo "FAIL: no $f in '$dir'"; exit 1; }
done
grep -q 'PWNED1' "$dir/timeline.svg" || { echo "FAIL: the name is not drawn"; exit 1; }
# One message: the tools wrap a long one within 80 columns, continuation
# lines indented by 4 (joined back here).
one_message() {
  sed -e ':a' -e 'N' -e '$!ba' -e 's/\n    / /g' "$1" >"$1.joined"
  [ "$(wc -l <"$1.joined")" -eq 1 ] && ! awk 'length($0) > 80' "$1" | grep -q .
}
# A destination that cannot be a folder fails before any run, in one
# message.
if "$bench" --platform evil.json --size 8400 --models none --plot /etc/passwd \
  >out.txt 2>err.txt; then
  echo "FAIL: --plot /etc/passwd accepted"; exit 1
fi
if [ -s out.txt ] || ! one_message err.txt; then
  echo "FAIL: --plot /etc/passwd:"; cat out.txt err.txt; exit 1
fi
# A missing parent is an error before any run, in one message naming the
# folder; nothing is created (no mkdir -p).
if "$bench" --platform evil.json --size 8400 --models none \
  --plot "$tmp/missing/plots" >out.txt 2>err.txt; then
  echo "FAIL: --plot under a missing folder accepted"; exit 1
fi
if [ -s out.txt ] || ! one_message err.txt ||
  ! grep -qF "$tmp/missing/plots" err.txt.joined || [ -e "$tmp/missing" ]; then
  echo "FAIL: --plot $tmp/missing/plots:"; cat out.txt err.txt; exit 1
fi
echo "ok: the pictures are drawn, no file was created by a name"
