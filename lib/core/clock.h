/* The one clock of the library: device times, run times and the
 * balancer's own timings are differences of it. */
#ifndef MLSBA_CORE_CLOCK_H
#define MLSBA_CORE_CLOCK_H

/* Monotonic clock in seconds. */
double mlsba__now(void);

#endif
