/* The names of the stop reasons: the one wording every report uses (the
 * balancing routine's result and log, INPA's and the divider's heads
 * below it, the tools' tables and JSON, the docs), here at the bottom so
 * that every layer can name a stop. */
#include "mlsba.h"

const char *mlsba_stop_reason_name(mlsba_stop_reason_t stop) {
  static const char *const names[] = {"balanced", "fixed-point", "max-iter",
                                      "cycle"};
  return (unsigned)stop < sizeof names / sizeof *names ? names[stop] : NULL;
}
