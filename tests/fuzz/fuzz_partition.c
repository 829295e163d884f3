/* libFuzzer target: the partitioners on models drawn from the input bytes
 * (any speeds, loads, caps and N, not only the papers' shape). Every
 * algorithm must keep the promise of check_partition.h, and SLBA in blocks
 * must sum to N too; models may carry a transfer. Values over the whole
 * accepted range: fuzz_range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_partition.h"
#include "mlsba.h"

typedef struct {
  const uint8_t *p;
  size_t left;
} bytes_t;

static uint32_t take(bytes_t *b, int nbytes) {
  uint32_t v = 0;
  for (int i = 0; i < nbytes && b->left; i++, b->p++, b->left--)
    v = v << 8 | *b->p;
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes_t b = {data, size};
  size_t q = 1 + take(&b, 1) % 6, p = 0;
  size_t group_size[6];
  for (size_t g = 0; g < q; g++)
    p += group_size[g] = 1 + take(&b, 1) % 3;
  int64_t n = take(&b, 3) % 20000;
  mlsba_model_t *models[18] = {0};
  for (size_t j = 0; j < p; j++) {
    mlsba_model_create(&models[j]);
    size_t points = 1 + take(&b, 1) % 6;
    for (size_t k = 0; k < points; k++) {
      double x = 1 + take(&b, 2) * (1 + take(&b, 1) % 64);
      double s = (1 + take(&b, 2)) / (double)(1 + take(&b, 1));
      mlsba_model_set_point(models[j], x, s);
    }
    uint32_t cap = take(&b, 2);
    if (cap & 1)
      mlsba_model_set_max_load(models[j], cap >> 1);
  }
  mlsba_partition_opts_t o;
  mlsba_partition_opts_init(&o);
  o.granularity = take(&b, 1) % 4 == 0 ? 1 + take(&b, 1) % 200 : 0;
  /* Transfers (FPMs plus communication) from the last bytes, so that the
   * inputs of the corpus kept before them still draw the same models. */
  for (size_t j = 0; j < p; j++) {
    uint32_t t = take(&b, 3);
    if (t & 1)
      mlsba_model_set_transfer(models[j], (double)(t >> 12) * 1e-3,
                               (double)(t >> 1 & 0x7ff) * 1e-5);
  }
  fuzz_check_partition((const mlsba_model_t *const *)models, group_size, q, n);
  int64_t loads[18];
  if (mlsba_partition_slba_ex((const mlsba_model_t *const *)models, p, n, &o,
                              loads, NULL) == 0) {
    int64_t sum = 0;
    for (size_t j = 0; j < p; j++)
      sum += loads[j];
    if (sum != n)
      abort();
  } else if (mlsba_last_error()[0] == 0) {
    abort();
  }
  for (size_t j = 0; j < p; j++)
    mlsba_model_destroy(models[j]);
  return 0;
}
