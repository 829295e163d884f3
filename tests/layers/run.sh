#!/usr/bin/env bash
# tools/check-layers on a tiny tree that breaks the direction (a devices/
# file including runtime/, a core file calling a runtime function, a
# partition file calling a public function of the balance layer, a factor
# file reaching into the cpu backend's folder): it must fail and name each;
# then on the real tree: it must pass.
#
#   tests/layers/run.sh CHECK_LAYERS REPO
set -euo pipefail
check=$1
repo=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/lib/core" "$tmp/lib/devices/cpu" "$tmp/lib/runtime" \
  "$tmp/lib/platform" "$tmp/lib/balance" "$tmp/lib/partition" \
  "$tmp/lib/factor" "$tmp/lib/include"
printf 'int mlsba__run(void) { return 0; }\n' >"$tmp/lib/runtime/run.c"
printf 'int mlsba__run(void);\n' >"$tmp/lib/runtime/run.h"
printf '#include "../../runtime/run.h"\nint mlsba__cpu(void) { return 1; }\n' \
  >"$tmp/lib/devices/cpu/cpu.c"
printf 'int mlsba__clock(void) {\n  return mlsba__run();\n}\n' \
  >"$tmp/lib/core/clock.c"
# The platform sits below the runtime and the balancing routine.
printf 'int mlsba__balance(void);\n' >"$tmp/lib/balance/balance.h"
printf '#include "../balance/balance.h"\n' >"$tmp/lib/platform/platform.c"
# A public function (declared in lib/include, open to all) is still the
# layer's that defines it; its type on the line before its name, as
# clang-format breaks a long one.
printf 'const char *mlsba_stop_name(int stop);\n' >"$tmp/lib/include/mlsba.h"
printf 'const char *\nmlsba_stop_name(int stop) {\n  return stop ? "a" : "b";\n}\n' \
  >"$tmp/lib/balance/names.c"
printf '#include "mlsba.h"\nconst char *mlsba__why(void) {\n  return mlsba_stop_name(1);\n}\n' \
  >"$tmp/lib/partition/why.c"
# The layers above reach a backend through the devices layer's headers.
printf 'void mlsba__cpu_gemm(void);\n' >"$tmp/lib/devices/cpu/cpu_blas.h"
printf '#include "cpu/cpu_blas.h"\n' >"$tmp/lib/devices/kernels.h"
printf '#include "../devices/cpu/cpu_blas.h"\n' >"$tmp/lib/factor/step.c"

status=0
out=$("$check" "$tmp" 2>&1) || status=$?
if [ "$status" -ne 1 ]; then
  echo "FAIL: check-layers exited $status on a devices/ file including runtime/"
  echo "$out"
  exit 1
fi
for want in 'lib/devices/cpu/cpu.c:1: includes "../../runtime/run.h"' \
            'lib/core/clock.c:2: uses mlsba__run, defined in lib/runtime/run.c' \
            'lib/platform/platform.c:1: includes "../balance/balance.h" (balance is above platform)' \
            'lib/partition/why.c:3: uses mlsba_stop_name, defined in lib/balance/names.c (balance is above partition)' \
            'lib/factor/step.c:1: includes "../devices/cpu/cpu_blas.h" (factor reaches into backend cpu'; do
  if ! grep -qF "$want" <<<"$out"; then
    echo "FAIL: check-layers did not report: $want"
    echo "$out"
    exit 1
  fi
done
echo "ok: the deliberate violations are reported"

# The same tree made right passes.
printf 'int mlsba__cpu(void) { return 1; }\n' >"$tmp/lib/devices/cpu/cpu.c"
printf 'int mlsba__clock(void) {\n  return 0;\n}\n' >"$tmp/lib/core/clock.c"
printf '\n' >"$tmp/lib/platform/platform.c"
mv "$tmp/lib/balance/names.c" "$tmp/lib/core/names.c"
printf '#include "../devices/kernels.h"\n' >"$tmp/lib/factor/step.c"
"$check" "$tmp"

# The real tree.
"$check" "$repo"
