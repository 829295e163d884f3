/* What the option parsers of bench-ormqr and bench-solve share: every
 * option takes one value, read once as a whole number (strtoll, the
 * whole string) for the options that want one. */
#ifndef MLSBA_BENCHMARKS_BENCH_OPTIONS_H
#define MLSBA_BENCHMARKS_BENCH_OPTIONS_H

#include <stdlib.h>
#include <string.h>

#include "mlsba.h"

typedef struct {
  const char *name, *value;
  long long number; /* the value as a whole number, when is_number */
  int is_number;
} bench_option_t;

/* Option argv[*i] and its value into o, *i moved past both; -1 when the
 * value is missing. */
static inline int bench_next_option(int argc, char **argv, int *i,
                                    bench_option_t *o) {
  o->name = argv[*i];
  o->value = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (o->value == NULL)
    return -1;
  char *end = NULL;
  o->number = strtoll(o->value, &end, 10);
  o->is_number = *o->value && *end == '\0';
  *i += 2;
  return 0;
}

/* --precision's value: the precision it names (single or double), -1
 * for any other word. */
static inline int bench_precision(const char *v) {
  return !strcmp(v, "single")   ? (int)MLSBA_PRECISION_SINGLE
         : !strcmp(v, "double") ? (int)MLSBA_PRECISION_DOUBLE
                                : -1;
}

#endif
