/* libFuzzer target: what the tools read from their command line. The
 * input is split at NUL bytes into arguments; each goes through the value
 * parsers every tool uses (tools/common/cli.h) and the algorithm names.
 * An accepted whole number must be digits only and at most its bound; an
 * accepted real must be finite, within its bounds, with nothing after it
 * ("" and "1x" were taken as 0 and 1); a refused name must say why. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "fuzz_text.h"
#include "mlsba.h"

static void check_units(const char *a) {
  int64_t v = -1, max = INT64_C(1) << 53;
  if (cli_parse_units(a, max, &v) != 0)
    return;
  /* Recompute the value digit by digit, saturating past the bound. */
  uint64_t want = 0;
  if (a[0] == 0)
    abort();
  for (const char *c = a; *c; c++) {
    if (*c < '0' || *c > '9')
      abort();
    want = want > (uint64_t)max ? want : want * 10 + (uint64_t)(*c - '0');
  }
  if (want > (uint64_t)max || (uint64_t)v != want)
    abort();
}

static void check_real(const char *a) {
  double v = NAN;
  if (cli_parse_double(a, 0, 1e6, &v) != 0)
    return;
  if (!isfinite(v) || v < 0 || v > 1e6 || a[0] == 0 || a[0] == ' ')
    abort();
  char *end;
  if (strtod(a, &end) != v || *end != 0)
    abort();
}

static void check_algo(const char *a) {
  mlsba_algorithm_t algo;
  if (mlsba_algorithm_from_name(a, &algo) == 0) {
    if (strcmp(mlsba_algorithm_name(algo), a) != 0)
      abort();
  } else if (mlsba_last_error()[0] == 0) {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (text == NULL)
    return 0;
  for (size_t i = 0; i <= size; i += strlen(text + i) + 1) {
    const char *a = text + i;
    check_units(a);
    check_real(a);
    check_algo(a);
  }
  free(text);
  return 0;
}
