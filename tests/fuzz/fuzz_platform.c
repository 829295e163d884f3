/* libFuzzer target: any bytes as a platform file. The parser must return
 * 0 or an error with a message, never crash, leak or read out of bounds;
 * on a sim platform it accepts, every partitioner keeps its promise
 * (check_partition.h): speeds up to 1e308 and denormals, which the parser
 * reads as JSON numbers, reach the partitioners only within the bounds of
 * mlsba.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_partition.h"
#include "fuzz_text.h"
#include "mlsba.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (text == NULL)
    return 0;
  mlsba_platform_t *pl = NULL;
  int err = mlsba_platform_parse(text, "fuzz", &pl);
  if (err == 0) {
    size_t p = mlsba_platform_num_devices(pl),
           q = mlsba_platform_num_groups(pl);
    size_t seen = 0;
    for (size_t g = 0; g < q; g++)
      seen += mlsba_platform_group_size(pl, g);
    if (seen != p) /* every device in exactly one group */
      abort();
    const mlsba_model_t **models = calloc(p ? p : 1, sizeof *models);
    size_t *sizes = calloc(q ? q : 1, sizeof *sizes);
    if (models && sizes &&
        mlsba_platform_grouped_models(pl, models, sizes) == 0 && q > 0) {
      /* A sim platform: every algorithm at an N the text picks (its
       * length), from one unit to 2^53. */
      static const int64_t ns[] = {1, 100, 1000, INT64_C(10000000000),
                                   INT64_C(1) << 53};
      fuzz_check_partition(models, sizes, q, ns[size % 5]);
    }
    free(models);
    free(sizes);
  } else if (mlsba_last_error()[0] == 0) {
    abort(); /* an error without a message */
  }
  mlsba_platform_destroy(pl);
  free(text);
  return 0;
}
