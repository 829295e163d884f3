#!/usr/bin/env bash
# A struct's section 3 page shows the include a program writes: a header
# of lib/include/mlsba/ as <mlsba/NAME.h>, never as the bare <NAME.h>
# that Doxygen prints by default (a <factor.h> that no compiler finds). A
# header's own page (NAME.h.3) lists what the header includes, <mpi.h> of
# MPI among them, and is left alone.
# Usage: man3_includes.sh MAN3_DIR PUBLIC_HEADER_DIR
set -euo pipefail
shopt -s nullglob
pages=()
for page in "$1"/*.3; do
  case "$page" in *.h.3) ;; *) pages+=("$page") ;; esac
done
if [ "${#pages[@]}" = 0 ]; then
  echo "FAIL: no page in $1"; exit 1
fi
failed=0
# roff writes '.' as '\&.'; compare without the escapes.
while IFS=: read -r page inc; do
  if [ -f "$2/mlsba/$inc" ]; then
    echo "FAIL: $(basename "$page") shows #include <$inc>," \
      "which a program writes <mlsba/$inc>"
    failed=1
  fi
done < <(grep -H '#include <' "${pages[@]}" |
  sed 's/\\&//g; s/^\([^:]*\):.*#include <\([^>]*\)>.*/\1:\2/')
[ $failed = 1 ] ||
  echo "ok: ${#pages[@]} pages, every include as a program writes it"
exit $failed
