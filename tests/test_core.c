/* Error table, last-error message and version. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mlsba.h"
#include "support/run_suite.h"
#include "support/scratch.h"

START_TEST(every_code_has_a_distinct_name_and_text) {
  static const int codes[] = {
#define CODE_(name, value, text) MLSBA_##name,
      MLSBA_ERRNO_MAP(CODE_)
#undef CODE_
  };
  size_t n = sizeof codes / sizeof codes[0];
  ck_assert_uint_ge(n, 10);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_lt(codes[i], 0);
    ck_assert_str_ne(mlsba_strerror(codes[i]), "unknown error");
    ck_assert_str_ne(mlsba_err_name(codes[i]), "MLSBA_EUNKNOWN");
    for (size_t j = 0; j < i; j++) {
      ck_assert_int_ne(codes[i], codes[j]);
      ck_assert_str_ne(mlsba_strerror(codes[i]), mlsba_strerror(codes[j]));
    }
  }
  ck_assert_str_eq(mlsba_err_name(MLSBA_EINVAL), "MLSBA_EINVAL");
  ck_assert_str_eq(mlsba_strerror(MLSBA_ENOMEM), "out of memory");
  ck_assert_str_eq(mlsba_strerror(0), "success");
  ck_assert_str_eq(mlsba_strerror(-12345), "unknown error");
  ck_assert_str_eq(mlsba_strerror(7), "unknown error");
}
END_TEST

START_TEST(failing_call_leaves_a_message_naming_the_problem) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 10, -3), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "speed"));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "-3"));
  /* A later success keeps the message. */
  ck_assert_int_eq(mlsba_model_set_point(m, 10, 3), 0);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "speed"));
  mlsba_model_destroy(m);
}
END_TEST

static void *fail_in_thread(void *arg) {
  (void)arg;
  mlsba_model_set_max_load(NULL, 1);
  return NULL;
}

START_TEST(last_error_is_per_thread) {
  ck_assert_int_eq(mlsba_model_clear(NULL), MLSBA_EINVAL);
  char mine[512];
  snprintf(mine, sizeof mine, "%s", mlsba_last_error());
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_str_eq(mlsba_last_error(), mine);
  ck_assert_ptr_nonnull(strstr(mine, "mlsba_model_clear"));
}
END_TEST

START_TEST(runtime_version_matches_header) {
  ck_assert_uint_eq(mlsba_version(), MLSBA_VERSION_HEX);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", MLSBA_VERSION_MAJOR,
           MLSBA_VERSION_MINOR, MLSBA_VERSION_PATCH);
  ck_assert_str_eq(mlsba_version_string(), expect);
}
END_TEST

/* ---- 10: API holes -------------------------------------------------- */

START_TEST(api_holes_give_errors_not_crashes) {
  ck_assert_uint_eq(mlsba_platform_group_device(NULL, 0, 0), SIZE_MAX);
  mlsba_platform_t *pl = parse_ok(
      "{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
      "1]]}, {\"name\": \"b\", \"type\": \"sim\", \"speed\": [[1, 2]]}]}");
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 1, 0), 1);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 1, 1), SIZE_MAX);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 2, 0), SIZE_MAX);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, SIZE_MAX, 0), SIZE_MAX);

  /* Loads that sum past INT64_MAX: an error naming the sum, not UB. */
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("sum", 10, &w), 0);
  int64_t units[2] = {INT64_MAX, INT64_MAX};
  double time[2];
  long failed;
  ck_assert_int_eq(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, &failed),
      MLSBA_EINVAL);
  units[0] = 5;
  units[1] = INT64_MAX - 2;
  ck_assert_int_eq(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, &failed),
      MLSBA_EINVAL);
  mlsba_load_destroy(w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);

  /* A load of INT64_MAX units is refused where it is made, naming 2^53. */
  ck_assert_int_eq(mlsba_load_create("huge", INT64_MAX, &w), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "2^53"));
  ck_assert_int_eq(mlsba_load_create("edge", INT64_C(1) << 53, &w), 0);
  mlsba_load_destroy(w);

  /* Mandelbrot rows from a height of 2^31: -1, no overflow. */
  mlsba_mandelbrot_t mb = {.width = 1, .height = INT64_C(1) << 31};
  ck_assert_int_eq(mlsba_mandelbrot_row(&mb, (INT64_C(1) << 31) - 1), -1);
  mb.height = INT64_MAX;
  ck_assert_int_eq(mlsba_mandelbrot_row(&mb, INT64_MAX - 1), -1);
  mb.height = (INT64_C(1) << 31) - 1;
  int64_t row = mlsba_mandelbrot_row(&mb, mb.height - 1);
  ck_assert(row >= 0 && row < mb.height);
}
END_TEST

static Suite *core_suite(void) {
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, every_code_has_a_distinct_name_and_text);
  tcase_add_test(tc, failing_call_leaves_a_message_naming_the_problem);
  tcase_add_test(tc, last_error_is_per_thread);
  suite_add_tcase(s, tc);
  tc = tcase_create("version");
  tcase_add_test(tc, runtime_version_matches_header);
  suite_add_tcase(s, tc);
  TCase *tc_more = tcase_create("API holes");
  tcase_set_timeout(tc_more, 60);
  tcase_add_test(tc_more, api_holes_give_errors_not_crashes);
  suite_add_tcase(s, tc_more);
  return s;
}

int main(void) { return run_suite(core_suite()); }
