/* bench-platform: time to parse platform files of 10^3 to 10^6 simulated
 * devices (issue 16: 10^5 took 38-77 s when every name was looked up by a
 * linear search). Prints one line per size: devices, seconds (median of
 * three parses), and microseconds per device.
 *
 *   bench-platform [MAX_DEVICES]     default 1000000 */
#include <stdio.h>
#include <stdlib.h>

#include "common/timing.h"
#include "mlsba.h"
#include "support/big_platform.h"

int main(int argc, char **argv) {
  size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
  printf("%10s %12s %12s\n", "devices", "parse [s]", "per device [us]");
  for (size_t n = 1000; n <= max; n *= 10) {
    char *json = big_platform_json(n);
    if (json == NULL) {
      fprintf(stderr, "bench-platform: out of memory at %zu devices\n", n);
      return 1;
    }
    double t[3];
    for (int r = 0; r < 3; r++) {
      mlsba_platform_t *pl = NULL;
      double t0 = timing_now();
      int err = mlsba_platform_parse(json, "bench", &pl);
      t[r] = timing_now() - t0;
      if (err) {
        fprintf(stderr, "bench-platform: %s\n", mlsba_last_error());
        return 1;
      }
      mlsba_platform_destroy(pl);
    }
    double med = timing_median(t, 3);
    printf("%10zu %12.4f %12.3f\n", n, med, 1e6 * med / (double)n);
    fflush(stdout);
    free(json);
  }
  return 0;
}
