/* Runs one Check suite in fork mode and turns the result into an exit code. */
#ifndef MLSBA_TESTS_RUN_SUITE_H
#define MLSBA_TESTS_RUN_SUITE_H

#include <check.h>

/* Runs every case of s (the runner takes ownership), prints Check's summary
 * ("100%: Checks: N, Failures: 0, Errors: 0"), returns 0 when all passed. */
int run_suite(Suite *s);

#endif
