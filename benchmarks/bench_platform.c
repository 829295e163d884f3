/* bench-platform: time to parse platform files of 10^3 to 10^6 simulated
 * devices (issue 16: 10^5 took 38-77 s when every name was looked up by a
 * linear search). Prints one line per size: devices, seconds (median of
 * three parses), microseconds per device, and the process's CPU seconds
 * (median of the same three parses), which a machine shared with other
 * work disturbs far less than the wall clock, and the CPU seconds of
 * jansson's own json_loads and json_decref of the same text with the same
 * flags (median of three): the part of the parse the library cannot
 * remove.
 *
 *   bench-platform [MAX_DEVICES]     default 1000000 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/timing.h"
#include "mlsba.h"
#include "support/big_platform.h"

/* CPU seconds of this process (user + system). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Median CPU seconds of jansson alone: decode and free, as the library
 * does (JSON_REJECT_DUPLICATES). */
static double jansson_cpu(const char *json) {
  double cpu[3];
  for (int r = 0; r < 3; r++) {
    double c0 = cpu_now();
    json_decref(json_loads(json, JSON_REJECT_DUPLICATES, NULL));
    cpu[r] = cpu_now() - c0;
  }
  return timing_median(cpu, 3);
}

int main(int argc, char **argv) {
  size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
  printf("%10s %12s %12s %12s %12s\n", "devices", "parse [s]",
         "per device [us]", "cpu [s]", "jansson cpu");
  for (size_t n = 1000; n <= max; n *= 10) {
    char *json = big_platform_json(n);
    if (json == NULL) {
      fprintf(stderr, "bench-platform: out of memory at %zu devices\n", n);
      return 1;
    }
    double t[3], cpu[3];
    for (int r = 0; r < 3; r++) {
      mlsba_platform_t *pl = NULL;
      double t0 = timing_now(), c0 = cpu_now();
      int err = mlsba_platform_parse(json, "bench", &pl);
      t[r] = timing_now() - t0;
      cpu[r] = cpu_now() - c0;
      if (err) {
        fprintf(stderr, "bench-platform: %s\n", mlsba_last_error());
        return 1;
      }
      mlsba_platform_destroy(pl);
    }
    double med = timing_median(t, 3);
    double cpu_med = timing_median(cpu, 3);
    printf("%10zu %12.4f %12.3f %12.4f %12.4f\n", n, med, 1e6 * med / (double)n,
           cpu_med, jansson_cpu(json));
    fflush(stdout);
    free(json);
  }
  return 0;
}
