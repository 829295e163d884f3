/* libFuzzer target: what the tools read from their command line. The
 * input is split at NUL bytes into arguments; each goes through the value
 * parsers every tool uses (tools/common/cli.h) and the algorithm names.
 * An accepted whole number must be digits only and at most its bound; an
 * accepted real must be finite, within its bounds, with nothing after it
 * ("" and "1x" were taken as 0 and 1); a refused name must say why; a
 * device name's file-name part must be safe and decode back to it. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "core/atomic_file.h"
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

/* A device name becomes part of its model files' names: the parser takes
 * it as it is, and its file-name part never leaves the models folder nor
 * hides the file, and decodes back to the name (two devices never share
 * a file). */
static void check_device_name(const char *a) {
  json_t *doc = json_pack("{s:[{s:s, s:s, s:[[i, i]]}]}", "devices", "name", a,
                          "type", "sim", "speed", 1, 1);
  char *text = doc ? json_dumps(doc, 0) : NULL; /* NULL: not UTF-8 */
  mlsba_platform_t *pl = NULL;
  if (text && mlsba_platform_parse(text, "fuzz", &pl) == 0) {
    if (strcmp(mlsba_platform_device_name(pl, 0), a) != 0)
      abort();
  } else if (text && mlsba_last_error()[0] == 0) {
    abort();
  }
  mlsba_platform_destroy(pl);
  free(text);
  json_decref(doc);
  char part[512], back[512];
  if (mlsba__file_name_part(a, part, sizeof part) != 0) {
    if (strlen(a) < sizeof part / 3)
      abort(); /* refused although it fits */
    return;
  }
  if (part[0] == '.' || strchr(part, '/') != NULL || strlen(part) >= 512)
    abort();
  size_t n = 0;
  for (const char *c = part; *c; c++) {
    if (*c == '%') {
      unsigned v;
      if (sscanf(c + 1, "%2X", &v) != 1)
        abort();
      back[n++] = (char)v;
      c += 2;
    } else {
      back[n++] = *c;
    }
  }
  back[n] = 0;
  if (strcmp(back, a) != 0)
    abort();
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
    check_device_name(a);
  }
  free(text);
  return 0;
}
