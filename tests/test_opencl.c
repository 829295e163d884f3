/* The OpenCL backend on whatever OpenCL device this machine has (pocl's
 * CPU device where there is no GPU): products on cores + the device match
 * the reference, the memory limit is honoured, the driving core computes
 * while its accelerator runs, and OpenCL failures come back as errors.
 * Exits 77 (skipped) when no OpenCL device exists. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlsba.h"
#include "support/gemm_data.h"
#include "support/run_suite.h"

/* Core 0 drives the first OpenCL device; core 1 (if any) alone. */
static mlsba_platform_t *cores_and_opencl(const char *mem_limit) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"devices\": ["
           "{\"name\": \"core0\", \"type\": \"cpu\", \"core\": 0},"
           "{\"name\": \"ocl0\", \"type\": \"opencl\", \"platform\": 0, "
           "\"device\": 0%s},"
           "{\"name\": \"core1\", \"type\": \"cpu\", \"core\": 1}],"
           "\"groups\": [[\"core0\", \"ocl0\"], [\"core1\"]]}",
           mem_limit);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(json, "test", &pl), 0);
  return pl;
}

static mlsba_executor_t *open_executor(const mlsba_platform_t *pl) {
  mlsba_executor_t *ex = NULL;
  ck_assert_msg(mlsba_executor_create(pl, &ex) == 0, "%s", mlsba_last_error());
  return ex;
}

static void run_and_verify(mlsba_executor_t *ex, mlsba_gemm_t *g,
                           const int64_t load[3], double time[3]) {
  ck_assert_msg(
      mlsba_executor_run_gemm(ex, g, load, MLSBA_DRIVE_SHARED, time) == 0, "%s",
      mlsba_last_error());
  double e;
  int ok;
  ck_assert_int_eq(mlsba_gemm_verify(g, 7, &e, &ok), 0);
  ck_assert_msg(
      ok, "%lldx%lldx%lld precision %d loads %lld/%lld/%lld: error %g",
      (long long)g->m, (long long)g->n, (long long)g->k, (int)g->precision,
      (long long)load[0], (long long)load[1], (long long)load[2], e);
}

START_TEST(products_on_cores_and_opencl_match_the_reference) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  static const int64_t shapes[][3] = {
      {1, 3, 1}, {64, 64, 64}, {200, 90, 33}, {17, 301, 129}, {512, 512, 512},
      {1024, 1024, 1024}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (int prec = 0; prec < 2; prec++) {
      mlsba_gemm_t g;
      gemm_data_make(&g, shapes[s][0], shapes[s][1], shapes[s][2],
                     (mlsba_precision_t)prec, 20 + s);
      int64_t max[3], n = g.n;
      ck_assert_int_eq(mlsba_executor_max_loads(ex, &g, max), 0);
      if (max[1] == 0)
        continue; /* no double precision on this device */
      int64_t thirds[3] = {n / 3, n / 3, n - 2 * (n / 3)};
      double time[3];
      run_and_verify(ex, &g, thirds, time);
      /* Loads that give a device no column at all. */
      int64_t only_ocl[3] = {0, n, 0}, no_ocl[3] = {n / 2, 0, n - n / 2};
      run_and_verify(ex, &g, only_ocl, time);
      ck_assert_double_eq(time[0], 0);
      ck_assert_double_gt(time[1], 0);
      run_and_verify(ex, &g, no_ocl, time);
      ck_assert_double_eq(time[1], 0);
      gemm_data_free(&g);
    }
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* With mem_limit_mb below the size of the problem, the device reports
 * what fits, takes at most that, and the product is still right. */
START_TEST(memory_limit_caps_the_device) {
  mlsba_platform_t *pl = cores_and_opencl(", \"mem_limit_mb\": 2");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba_gemm_t g; /* A: 256 x 512 floats = 0.5 MiB; a column 3 KiB */
  gemm_data_make(&g, 256, 1200, 512, MLSBA_PRECISION_SINGLE, 3);
  int64_t max[3];
  ck_assert_int_eq(mlsba_executor_max_loads(ex, &g, max), 0);
  /* (2 MiB - 0.5 MiB) / (768 floats x 4 bytes) = 512 columns. */
  ck_assert_int_eq(max[1], 512);
  ck_assert_int_eq(max[0], 1200);
  int64_t at_cap[3] = {300, 512, 388}, over[3] = {300, 513, 387};
  double time[3];
  run_and_verify(ex, &g, at_cap, time);
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, over, 0, time),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ocl0: load 513"));
  /* A problem whose A alone does not fit: the device can take nothing. */
  mlsba_gemm_t big;
  gemm_data_make(&big, 1024, 8, 1024, MLSBA_PRECISION_SINGLE, 3);
  ck_assert_int_eq(mlsba_executor_max_loads(ex, &big, max), 0);
  ck_assert_int_eq(max[1], 0);
  gemm_data_free(&big);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The core that drives the accelerator computes while it runs. With most
 * of the work on the accelerator, the core finishes its own share before
 * the accelerator does; with most of it on the core, the accelerator's
 * completion (taken from its event callback, not from the thread that
 * waits for it) comes before the core's. Either order means the two ran
 * at the same time: a core that waited first, or computed first, would
 * always finish after the accelerator, or the accelerator after the core. */
START_TEST(driving_core_computes_while_its_accelerator_runs) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba_gemm_t g;
  gemm_data_make(&g, 384, 800, 384, MLSBA_PRECISION_SINGLE, 5);
  double t[3];
  int64_t warm[3] = {0, 800, 0}; /* the first call builds CLBlast's kernels */
  run_and_verify(ex, &g, warm, t);
  int64_t accel_heavy[3] = {20, 780, 0}, core_heavy[3] = {780, 20, 0};
  run_and_verify(ex, &g, accel_heavy, t);
  ck_assert_msg(t[0] < t[1], "core %g s, accelerator %g s", t[0], t[1]);
  run_and_verify(ex, &g, core_heavy, t);
  ck_assert_msg(t[1] < t[0], "accelerator %g s, core %g s", t[1], t[0]);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(a_missing_device_is_a_clear_error) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(
      mlsba_platform_parse("{\"devices\": [{\"name\": \"ghost\", \"type\": "
                           "\"opencl\", \"platform\": 0, \"device\": 99}]}",
                           "test", &pl),
      0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), MLSBA_EDEVICE);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ghost"));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "no device 99"));
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(discovery_finds_the_opencl_device) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_discover(&pl), 0);
  size_t ncl = 0;
  for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++)
    ncl += mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_OPENCL;
  ck_assert_uint_ge(ncl, 1);
  /* OpenCL device 0 is driven by core 0. */
  ck_assert_uint_eq(mlsba_platform_group_size(pl, 0), 2);
  ck_assert_str_eq(
      mlsba_platform_device_name(pl, mlsba_platform_group_device(pl, 0, 1)),
      "ocl0");
  mlsba_platform_destroy(pl);
}
END_TEST

/* Asked in a child process: an OpenCL implementation initialised here
 * would not survive the fork of every test (pocl's worker threads stay in
 * the parent, and the child's queues would wait for them forever). */
static int have_opencl_device(void) {
  pid_t pid = fork();
  if (pid == 0) {
    mlsba_platform_t *pl = NULL;
    int found = 0;
    if (mlsba_platform_discover(&pl) == 0)
      for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++)
        found |= mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_OPENCL;
    _exit(found ? 0 : 1);
  }
  int status;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

static Suite *opencl_suite(void) {
  Suite *s = suite_create("opencl");
  TCase *tc = tcase_create("device");
  /* pocl compiles CLBlast's kernels on first use: seconds per kernel. */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, products_on_cores_and_opencl_match_the_reference);
  tcase_add_test(tc, memory_limit_caps_the_device);
  tcase_add_test(tc, driving_core_computes_while_its_accelerator_runs);
  tcase_add_test(tc, a_missing_device_is_a_clear_error);
  tcase_add_test(tc, discovery_finds_the_opencl_device);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  if (!have_opencl_device()) {
    printf("no OpenCL device: skipped\n");
    return 77;
  }
  return run_suite(opencl_suite());
}
