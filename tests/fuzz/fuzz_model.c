/* libFuzzer target: the model-file parser. Half the inputs are taken as
 * they are (the checksum stops almost all of them); the other half get a
 * correct checksum line appended, so the fuzzer reaches the parser of the
 * body. Accepted models must have sorted, positive, finite points. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/store.h"
#include "check_partition.h"
#include "mlsba.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  int sign = data[0] & 1;
  data++;
  size--;
  char *text = malloc(size + 64);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  size_t len = size;
  if (sign)
    len += (size_t)snprintf(text + size, 64, "checksum %016" PRIx64 "\n",
                            mlsba__model_checksum(text, size));
  text[len] = 0;
  mlsba_model_t *m = NULL;
  unsigned runs[8];
  double sd[8];
  int err = mlsba__model_parse_text("fuzz", "k", text, len, &m, runs, sd, 8);
  if (err == 0) {
    double last = 0;
    for (size_t i = 0; i < mlsba_model_num_points(m); i++) {
      double x, s;
      mlsba_model_get_point(m, i, &x, &s);
      if (!(x > last) || !(s > 0) || !isfinite(x) || !isfinite(s))
        abort();
      last = x;
    }
    double t;
    if (mlsba_model_load_by_time(m, 1.0, &t) != 0)
      abort();
    /* A saved model is what later runs partition with: alone, twice in
     * one group, and beside itself, at an N the input picks. */
    static const int64_t ns[] = {1, 50, 1000, INT64_C(1000000000000),
                                 INT64_C(1) << 53};
    const mlsba_model_t *three[3] = {m, m, m};
    size_t sizes[2] = {2, 1};
    fuzz_check_partition(three, sizes, 2, ns[size % 5]);
  } else if (mlsba_last_error()[0] == 0) {
    abort();
  }
  mlsba_model_destroy(m);
  free(text);
  return 0;
}
