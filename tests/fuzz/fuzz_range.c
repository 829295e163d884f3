/* libFuzzer target: the partitioners over the whole range of values a
 * model accepts, and beyond it. Loads, speeds and max_loads are drawn on a
 * logarithmic scale from below the smallest to above the largest value a
 * double holds (denormals, 1e308, 2^53 and its neighbours), N up to 2^53
 * and past it; every value goes through mlsba_model_set_point() and
 * mlsba_model_set_max_load(), which must refuse what is out of range with
 * a message, and every algorithm must then keep its promise on what was
 * accepted (check_partition.h), within libFuzzer's timeout. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_partition.h"
#include "mlsba.h"

typedef struct {
  const uint8_t *p;
  size_t left;
} bytes_t;

static uint64_t take(bytes_t *b, int nbytes) {
  uint64_t v = 0;
  for (int i = 0; i < nbytes && b->left; i++, b->p++, b->left--)
    v = v << 8 | *b->p;
  return v;
}

/* A value of any magnitude: one byte picks an edge or a power of ten
 * from 1e-330 to 1e310, two more a mantissa. */
static double wide(bytes_t *b) {
  static const double edge[] = {MLSBA_LOAD_MIN,
                                MLSBA_LOAD_MAX,
                                MLSBA_SPEED_MIN,
                                MLSBA_SPEED_MAX,
                                1,
                                2,
                                4.9e-324,
                                2.2250738585072014e-308,
                                1.7e308,
                                1e308,
                                9007199254740993.0,
                                INFINITY,
                                NAN,
                                -1,
                                0,
                                0.5};
  unsigned k = (unsigned)take(b, 1);
  if (k < 2 * sizeof edge / sizeof edge[0])
    return edge[k / 2];
  double mant = 1 + (double)take(b, 2) / 65536.0;
  return mant * pow(10, (double)(k % 160) * 4.0 - 330.0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes_t b = {data, size};
  enum { QMAX = 16, PMAX = 64 };
  size_t q = 1 + take(&b, 1) % QMAX, p = 0, group_size[QMAX];
  for (size_t g = 0; g < q; g++) {
    group_size[g] = 1 + take(&b, 1) % 4;
    if (p + group_size[g] > PMAX)
      group_size[g] = 1;
    p += group_size[g];
  }
  /* N: small, any 53-bit value, or an edge (2^53, 2^53 + 1, -1). */
  uint64_t nsel = take(&b, 1), nraw = take(&b, 7);
  int64_t n = nsel % 4 == 0   ? (int64_t)(nraw % 3000)
              : nsel % 4 == 1 ? (int64_t)(nraw >> (nsel % 53))
              : nsel % 4 == 2
                  ? (int64_t)(nraw & ((UINT64_C(1) << 53) - 1))
                  : (int64_t[]){INT64_C(1) << 53, (INT64_C(1) << 53) + 1, -1,
                                INT64_MAX}[nsel / 4 % 4];
  mlsba_model_t *models[PMAX] = {0};
  for (size_t j = 0; j < p; j++) {
    if (mlsba_model_create(&models[j]) != 0)
      abort();
    size_t points = 1 + take(&b, 1) % 5;
    for (size_t k = 0; k < points; k++) {
      double x = wide(&b), s = wide(&b);
      int err = mlsba_model_set_point(models[j], x, s);
      int in_range = x >= MLSBA_LOAD_MIN && x <= MLSBA_LOAD_MAX &&
                     s >= MLSBA_SPEED_MIN && s <= MLSBA_SPEED_MAX;
      if (in_range != (err == 0))
        abort(); /* the bounds of mlsba.h, exactly */
      if (err && mlsba_last_error()[0] == 0)
        abort();
    }
    uint64_t cap = take(&b, 1);
    if (cap & 1) {
      int64_t c = cap & 2 ? (int64_t)(take(&b, 7) >> (cap % 56))
                          : (int64_t)(take(&b, 2));
      int err = mlsba_model_set_max_load(models[j], c);
      if ((err == 0) != (c <= (INT64_C(1) << 53)))
        abort();
    }
  }
  /* Models left without points must be refused with a message too. */
  fuzz_check_partition((const mlsba_model_t *const *)models, group_size, q, n);
  for (size_t j = 0; j < p; j++)
    mlsba_model_destroy(models[j]);
  return 0;
}
