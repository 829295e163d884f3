#!/usr/bin/env bash
# The man pages name the folders they were installed for (the reference
# pages, the sample platforms), not the placeholder PREFIX of --help.
# Usage: man_paths.sh GENERATED_HELP_DIR DOCDIR DATADIR
set -euo pipefail
failed=0
# mlsba-inpa (MPI builds) names no sample platform: only the reference
# pages.
tools="mlsba-bench mlsba-partition mlsba-info"
[ -f "$1/mlsba-inpa.1" ] && tools="$tools mlsba-inpa"
for tool in $tools; do
  # roff writes '-' as '\-'; compare without the escapes.
  text=$(sed 's/\\-/-/g' "$1/$tool.1")
  wants=("$2")
  [ "$tool" = mlsba-inpa ] || wants+=("$3/mlsba/platforms")
  for want in "${wants[@]}"; do
    grep -qF "$want" <<<"$text" ||
      { echo "FAIL: $tool.1 does not name $want"; failed=1; }
  done
  if grep -q "PREFIX" <<<"$text"; then
    echo "FAIL: $tool.1 still says PREFIX"; failed=1
  fi
done
[ $failed = 1 ] || echo "ok: the man pages name $2 and $3/mlsba/platforms"
exit $failed
