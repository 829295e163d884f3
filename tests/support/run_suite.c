#include "run_suite.h"

#include <stdlib.h>

int run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  /* Fork mode (Check's default) unless CK_FORK=no is set for debugging: a
   * crash fails one test instead of the whole suite. */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
