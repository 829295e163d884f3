/* CLOCK_MONOTONIC: unaffected by changes to the wall clock while a share
 * runs. */
#include "clock.h"

#include <time.h>

double mlsba__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
