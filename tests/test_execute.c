/* The execution layer without accelerators: GEMM verification, the CPU
 * cores through BLIS, simulated devices, the executor's checks, and
 * discovery of the cores. (OpenCL devices: test_opencl.c.) */
#define _GNU_SOURCE /* sched_getcpu */
#include <check.h>
#include <dirent.h>
#include <hwloc.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlsba.h"
#include "runtime/executor.h"
#include "support/gemm_data.h"
#include "support/run_suite.h"

static mlsba_platform_t *platform(const char *json) {
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_parse(json, "test", &pl) == 0, "%s",
                mlsba_last_error());
  return pl;
}

static const char *two_cores =
    "{\"devices\": ["
    "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
    "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 1}]}";

START_TEST(verification_accepts_a_right_product_and_catches_a_wrong_one) {
  for (int prec = 0; prec < 2; prec++) {
    mlsba_gemm_t g;
    gemm_data_make(&g, 37, 23, 61, (mlsba_precision_t)prec, 1);
    gemm_data_reference(&g);
    double e;
    int ok;
    ck_assert_int_eq(mlsba_gemm_verify(&g, 5, &e, &ok), 0);
    ck_assert_msg(ok, "precision %d: error %g", prec, e);
    /* One element of one column off by a relative 1e-3. */
    if (prec)
      ((double *)g.c)[5 * 37 + 11] *= 1 + 1e-3;
    else
      ((float *)g.c)[5 * 37 + 11] *= 1 + 1e-3f;
    ck_assert_int_eq(mlsba_gemm_verify(&g, 5, &e, &ok), 0);
    ck_assert_msg(!ok, "precision %d: a wrong element passed (%g)", prec, e);
    /* A column nobody computed (NaN). */
    gemm_data_reference(&g);
    if (prec)
      ((double *)g.c)[22 * 37] = NAN;
    else
      ((float *)g.c)[22 * 37] = NAN;
    ck_assert_int_eq(mlsba_gemm_verify(&g, 5, &e, &ok), 0);
    ck_assert(!ok);
    ck_assert(isinf(e));
    gemm_data_free(&g);
  }
}
END_TEST

/* Above 2^27 multiply-adds only sampled columns are checked element-wise;
 * the check of all columns at once still catches a wrong column. */
START_TEST(verification_of_large_products_catches_a_wrong_column) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(
      mlsba_platform_parse("{\"devices\": [{\"name\": \"c0\", \"type\": "
                           "\"cpu\", \"core\": 0}]}",
                           "one core", &pl),
      0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_gemm_t g;
  gemm_data_make(&g, 600, 700, 400, MLSBA_PRECISION_SINGLE, 4);
  int64_t load[1] = {700};
  double t[1], e;
  int ok;
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, load, 0, t), 0);
  ck_assert_int_eq(mlsba_gemm_verify(&g, 1, &e, &ok), 0);
  ck_assert_msg(ok, "error %g", e);
  for (int64_t i = 0; i < g.m; i++) /* column 345 as if never computed */
    ((float *)g.c)[345 * g.m + i] = 0;
  ck_assert_int_eq(mlsba_gemm_verify(&g, 1, &e, &ok), 0);
  ck_assert_msg(!ok, "a zero column passed (%g)", e);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(cores_compute_the_product_with_blis) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_msg(mlsba_executor_create(pl, &ex) == 0, "%s", mlsba_last_error());
  static const int64_t shapes[][3] = {
      {1, 1, 1}, {64, 64, 64}, {300, 7, 129}, {5, 400, 33}, {257, 256, 255}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (int prec = 0; prec < 2; prec++) {
      mlsba_gemm_t g;
      gemm_data_make(&g, shapes[s][0], shapes[s][1], shapes[s][2],
                     (mlsba_precision_t)prec, 10 + s);
      int64_t n = g.n, load[2] = {n / 3, n - n / 3};
      double time[2], e;
      int ok;
      ck_assert_msg(
          mlsba_executor_run_gemm(ex, &g, load, MLSBA_DRIVE_SHARED, time) == 0,
          "%s", mlsba_last_error());
      ck_assert_int_eq(mlsba_gemm_verify(&g, 3, &e, &ok), 0);
      ck_assert_msg(ok, "shape %zu precision %d: error %g", s, prec, e);
      ck_assert_double_ge(time[1], 0);
      if (load[0] == 0)
        ck_assert_double_eq(time[0], 0);
      gemm_data_free(&g);
    }
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(simulated_devices_take_virtual_time) {
  mlsba_platform_t *pl =
      platform("{\"devices\": ["
               "{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[10, 100], "
               "[1000, 200]]},"
               "{\"name\": \"b\", \"type\": \"sim\", \"speed\": [[1, 50]], "
               "\"noise\": 0.1, \"seed\": 9, \"max_load\": 500}]}");
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_gemm_t g;
  gemm_data_make(&g, 2, 600, 2, MLSBA_PRECISION_SINGLE, 1);
  int64_t max[2], load[2] = {400, 200};
  ck_assert_int_eq(mlsba_executor_max_loads(ex, &g, max), 0);
  ck_assert_int_eq(max[0], 600);
  ck_assert_int_eq(max[1], 500);
  double t1[2], t2[2], model;
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, load, 0, t1), 0);
  ck_assert_int_eq(
      mlsba_model_time(mlsba_platform_device_model(pl, 0), 400, &model), 0);
  ck_assert_double_eq(t1[0], model); /* no noise: exactly the model */
  ck_assert_int_eq(
      mlsba_model_time(mlsba_platform_device_model(pl, 1), 200, &model), 0);
  ck_assert_double_ne(t1[1], model); /* noise */
  ck_assert_double_lt(fabs(t1[1] / model - 1), 0.6);
  ck_assert(isnan(((float *)g.c)[0])); /* nothing computed */
  /* The same file gives the same run. */
  mlsba_executor_t *again = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &again), 0);
  ck_assert_int_eq(mlsba_executor_run_gemm(again, &g, load, 0, t2), 0);
  ck_assert_double_eq(t1[1], t2[1]);
  mlsba_executor_destroy(again);
  /* Beyond max_load. */
  int64_t over[2] = {99, 501};
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, over, 0, t2), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "b: load 501"));
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(bad_runs_are_refused) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_gemm_t g;
  gemm_data_make(&g, 8, 10, 8, MLSBA_PRECISION_SINGLE, 1);
  double t[2];
  int64_t short_by_one[2] = {4, 5}, negative[2] = {-1, 11};
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, short_by_one, 0, t),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "add up to 9"));
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, negative, 0, t),
                   MLSBA_EINVAL);
  mlsba_gemm_t bad = g;
  bad.k = 0;
  int64_t fine[2] = {5, 5};
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &bad, fine, 0, t), MLSBA_EINVAL);
  bad = g;
  bad.b = NULL;
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &bad, fine, 0, t), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "matrix B"));
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);

  /* A core the machine does not have; two cores in one group. */
  pl = platform("{\"devices\": [{\"name\": \"far\", \"type\": \"cpu\", "
                "\"core\": 4096}]}");
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), MLSBA_EDEVICE);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "far: core 4096"));
  mlsba_platform_destroy(pl);
  pl = platform("{\"devices\": ["
                "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
                "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 1}],"
                "\"groups\": [[\"c0\", \"c1\"]]}");
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), MLSBA_EINVAL);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(devoted_core_must_not_compute) {
  mlsba_platform_t *pl =
      platform("{\"devices\": ["
               "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
               "{\"name\": \"gpu\", \"type\": \"sim\", \"speed\": [[1, 100]]}],"
               "\"groups\": [[\"c0\", \"gpu\"]]}");
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_gemm_t g;
  gemm_data_make(&g, 4, 10, 4, MLSBA_PRECISION_SINGLE, 1);
  double t[2];
  int64_t shared[2] = {3, 7}, devoted[2] = {0, 10};
  ck_assert_int_eq(
      mlsba_executor_run_gemm(ex, &g, shared, MLSBA_DRIVE_DEVOTED, t),
      MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "devoted"));
  ck_assert_int_eq(
      mlsba_executor_run_gemm(ex, &g, devoted, MLSBA_DRIVE_DEVOTED, t), 0);
  ck_assert_int_eq(
      mlsba_executor_run_gemm(ex, &g, shared, MLSBA_DRIVE_SHARED, t), 0);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Discovery finds every physical core (counted here with hwloc directly),
 * pairs OpenCL device i with core i, and writes a platform file that loads
 * again. */
START_TEST(discovery_finds_every_core) {
  hwloc_topology_t topo;
  ck_assert_int_eq(hwloc_topology_init(&topo), 0);
  ck_assert_int_eq(hwloc_topology_load(topo), 0);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(topo);
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_discover(&pl) == 0, "%s", mlsba_last_error());
  size_t p = mlsba_platform_num_devices(pl), ncpu = 0, ncl = 0;
  for (size_t i = 0; i < p; i++) {
    mlsba_device_info_t info;
    ck_assert_int_eq(mlsba_platform_device_info(pl, i, &info), 0);
    if (mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU) {
      ck_assert_int_eq(info.core, (int)ncpu);
      ncpu++;
    } else {
      ck_assert_int_eq(mlsba_platform_device_type(pl, i), MLSBA_DEVICE_OPENCL);
      ncl++;
    }
  }
  ck_assert_uint_eq(ncpu, (size_t)cores);
  size_t paired = ncl < ncpu ? ncl : ncpu;
  ck_assert_uint_eq(mlsba_platform_num_groups(pl), p - paired);
  for (size_t g = 0; g < paired; g++) {
    ck_assert_uint_eq(mlsba_platform_group_size(pl, g), 2);
    ck_assert_int_eq(
        mlsba_platform_device_type(pl, mlsba_platform_group_device(pl, g, 0)),
        MLSBA_DEVICE_CPU);
  }
  char path[] = "/tmp/mlsba-auto-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(mlsba_platform_save(pl, path), 0);
  mlsba_platform_t *back = NULL;
  ck_assert_msg(mlsba_platform_load(path, &back) == 0, "%s",
                mlsba_last_error());
  ck_assert_uint_eq(mlsba_platform_num_groups(back),
                    mlsba_platform_num_groups(pl));
  ck_assert_str_eq(mlsba_platform_device_name(back, 0), "core0");
  unlink(path);
  mlsba_platform_destroy(back);
  mlsba_platform_destroy(pl);
}
END_TEST

/* On a CPU with cores of two kinds (performance and efficiency cores, as
 * hwloc's cpukinds report them) discovery gives each core its kind, so
 * that the balancer pools only cores of one kind. The machine is this
 * one, described to hwloc by an XML file whose cpukinds say core 0 is a
 * performance core and the others efficiency cores. */
START_TEST(discovery_tells_core_kinds_apart) {
  hwloc_topology_t topo;
  ck_assert_int_eq(hwloc_topology_init(&topo), 0);
  ck_assert_int_eq(hwloc_topology_load(topo), 0);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (cores < 2) { /* one core is one kind */
    hwloc_topology_destroy(topo);
    return;
  }
  hwloc_bitmap_t perf =
      hwloc_bitmap_dup(hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, 0)->cpuset);
  hwloc_bitmap_t eff = hwloc_bitmap_alloc();
  for (int i = 1; i < cores; i++)
    hwloc_bitmap_or(
        eff, eff,
        hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i)->cpuset);
  char p_type[] = "CoreType", p_value[] = "Performance";
  char e_type[] = "CoreType", e_value[] = "Efficiency";
  struct hwloc_info_s p_info = {p_type, p_value}, e_info = {e_type, e_value};
  ck_assert_int_eq(hwloc_cpukinds_register(topo, perf, 1, 1, &p_info, 0), 0);
  ck_assert_int_eq(hwloc_cpukinds_register(topo, eff, 0, 1, &e_info, 0), 0);
  char path[] = "/tmp/mlsba-hybrid-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(hwloc_topology_export_xml(topo, path, 0), 0);
  hwloc_bitmap_free(perf);
  hwloc_bitmap_free(eff);
  hwloc_topology_destroy(topo);

  setenv("HWLOC_XMLFILE", path, 1);
  mlsba_platform_t *pl = NULL;
  int err = mlsba_platform_discover(&pl);
  unsetenv("HWLOC_XMLFILE");
  unlink(path);
  ck_assert_msg(err == 0, "%s", mlsba_last_error());
  /* Core 0 is a kind of its own; every core has a "cpu kind K" (hwloc
   * ranks them, and a CPU that has kinds already keeps them apart too). */
  mlsba_device_info_t first;
  ck_assert_int_eq(mlsba_platform_device_info(pl, 0, &first), 0);
  for (int i = 0; i < cores; i++) {
    mlsba_device_info_t info;
    ck_assert_int_eq(mlsba_platform_device_info(pl, (size_t)i, &info), 0);
    ck_assert_msg(strncmp(info.kind, "cpu kind ", 9) == 0, "core%d: %s", i,
                  info.kind);
    if (i > 0)
      ck_assert_str_ne(info.kind, first.kind);
  }
  mlsba_platform_destroy(pl);
}
END_TEST

/* ---- the groups' threads, kept from run to run ------------------------- */

/* A load of n units that stamps every unit with the run's number and the
 * CPU it ran on; it fails (returning 7) while fail is set, and runs its
 * own executor when nested is set. */
typedef struct {
  int64_t n;
  int run;
  int *stamp, *cpu;
  atomic_int calls, fail;
  mlsba_executor_t *nested;
  int nested_rc;
  char nested_msg[256];
} stamps_t;

static int stamp_units(void *user, int64_t first, int64_t count) {
  stamps_t *s = user;
  atomic_fetch_add(&s->calls, 1);
  if (atomic_load(&s->fail))
    return 7;
  if (s->nested) {
    int64_t units[2] = {s->n, 0};
    double t[2];
    mlsba_load_t *w = NULL; /* no ck_assert off the test's thread */
    s->nested_rc = mlsba_load_create("inner", s->n, &w) != 0
                       ? -2
                       : mlsba_executor_run(s->nested, w, units, 0, t, NULL);
    snprintf(s->nested_msg, sizeof s->nested_msg, "%s", mlsba_last_error());
    mlsba_load_destroy(w);
  }
  for (int64_t i = first; i < first + count; i++) {
    s->stamp[i] = s->run;
    s->cpu[i] = sched_getcpu();
  }
  return 0;
}

static stamps_t *stamps_new(int64_t n, mlsba_load_t **w) {
  stamps_t *s = calloc(1, sizeof *s);
  s->n = n;
  s->stamp = calloc((size_t)n, sizeof *s->stamp);
  s->cpu = calloc((size_t)n, sizeof *s->cpu);
  ck_assert_int_eq(mlsba_load_create("stamps", n, w), 0);
  ck_assert_int_eq(mlsba_load_set_cpu(*w, stamp_units, s), 0);
  return s;
}

static void stamps_free(stamps_t *s, mlsba_load_t *w) {
  mlsba_load_destroy(w);
  free(s->stamp);
  free(s->cpu);
  free(s);
}

/* Runs s's load with units[0] units on c0 and the rest on c1, as run
 * number run; every unit stamped by it. */
static void run_stamps(mlsba_executor_t *ex, mlsba_load_t *w, stamps_t *s,
                       int64_t on_c0, int run) {
  s->run = run;
  int64_t units[2] = {on_c0, s->n - on_c0};
  double t[2] = {-1, -1};
  long failed = 5;
  ck_assert_msg(mlsba_executor_run(ex, w, units, 0, t, &failed) == 0,
                "run %d: %s", run, mlsba_last_error());
  ck_assert_int_eq(failed, -1);
  for (int64_t i = 0; i < s->n; i++)
    ck_assert_msg(s->stamp[i] == run, "run %d: unit %lld not computed", run,
                  (long long)i);
  for (int d = 0; d < 2; d++)
    ck_assert_msg(t[d] >= 0 && (units[d] > 0 || t[d] == 0),
                  "run %d: device %d: time %g for %lld units", run, d, t[d],
                  (long long)units[d]);
}

/* The threads of this process, from /proc/self/task. */
static int process_threads(void) {
  DIR *dir = opendir("/proc/self/task");
  ck_assert_ptr_nonnull(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL;)
    n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

/* Whether CPU cpu is one of physical core core's. */
static int cpu_of_core(hwloc_topology_t topo, int cpu, unsigned core) {
  hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, core);
  return obj != NULL && cpu >= 0 && hwloc_bitmap_isset(obj->cpuset, cpu);
}

/* Hundreds of runs on one executor, with shares that change from run to
 * run (a core with none included): every unit computed by every run, on
 * its core's CPU, with no thread started after the first run. */
START_TEST(many_runs_in_a_row_reuse_the_pinned_threads) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  stamps_t *s = stamps_new(64, &w);
  hwloc_topology_t topo;
  ck_assert_int_eq(hwloc_topology_init(&topo), 0);
  ck_assert_int_eq(hwloc_topology_load(topo), 0);
  run_stamps(ex, w, s, 32, 1);
  int threads = process_threads();
  for (int run = 2; run <= 400; run++) {
    int64_t on_c0 = (run * 7) % 65;
    run_stamps(ex, w, s, on_c0, run);
    for (int64_t i = 0; i < s->n; i++)
      ck_assert_msg(cpu_of_core(topo, s->cpu[i], i < on_c0 ? 0 : 1),
                    "run %d: unit %lld ran on CPU %d", run, (long long)i,
                    s->cpu[i]);
  }
  ck_assert_int_eq(process_threads(), threads);
  hwloc_topology_destroy(topo);
  stamps_free(s, w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A run whose CPU function fails names the core and leaves the executor
 * as it was: the next run on it computes everything. */
START_TEST(a_failed_run_leaves_the_executor_usable) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  stamps_t *s = stamps_new(10, &w);
  for (int run = 1; run <= 3; run++) {
    atomic_store(&s->fail, 1);
    int64_t units[2] = {0, 10};
    double t[2];
    long failed = -1;
    ck_assert_int_eq(mlsba_executor_run(ex, w, units, 0, t, &failed),
                     MLSBA_EDEVICE);
    ck_assert_int_eq(failed, 1);
    ck_assert_msg(strstr(mlsba_last_error(), "c1") != NULL, "%s",
                  mlsba_last_error());
    atomic_store(&s->fail, 0);
    run_stamps(ex, w, s, 4, run);
  }
  stamps_free(s, w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The threads start with the first run and stop with the executor; an
 * executor destroyed before any run started none. */
START_TEST(the_threads_live_from_the_first_run_to_destroy) {
  mlsba_platform_t *pl = platform(two_cores);
  int before = process_threads();
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  int64_t max[2];
  mlsba_load_t *w = NULL;
  stamps_t *s = stamps_new(8, &w);
  ck_assert_int_eq(mlsba_executor_max_units(ex, w, max), 0);
  ck_assert_int_eq(process_threads(), before);
  mlsba_executor_destroy(ex);
  ck_assert_int_eq(process_threads(), before);

  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  run_stamps(ex, w, s, 3, 1);
  ck_assert_int_eq(process_threads(), before + 2);
  mlsba_executor_destroy(ex);
  ck_assert_int_eq(process_threads(), before);
  stamps_free(s, w);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A group whose thread cannot start: the run is called off with an error
 * that says so, no device computes, the threads already started stop,
 * and the next run starts them again. */
START_TEST(a_thread_that_cannot_start_calls_the_run_off) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  stamps_t *s = stamps_new(6, &w);
  int before = process_threads();
  mlsba__executor_inject_thread_fault(2);
  int64_t units[2] = {3, 3};
  double t[2];
  long failed = 5;
  ck_assert_int_eq(mlsba_executor_run(ex, w, units, 0, t, &failed),
                   MLSBA_EDEVICE);
  mlsba__executor_inject_thread_fault(0);
  ck_assert_msg(
      strstr(mlsba_last_error(), "cannot start the thread of group 1") != NULL,
      "%s", mlsba_last_error());
  ck_assert_int_eq(failed, -1);
  ck_assert_int_eq(atomic_load(&s->calls), 0);
  ck_assert_int_eq(process_threads(), before);
  run_stamps(ex, w, s, 3, 1);
  ck_assert_int_eq(process_threads(), before + 2);
  stamps_free(s, w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A CPU function that runs the executor running it gets an error instead
 * of waiting for its own thread for ever; the outer run completes. */
START_TEST(a_cpu_function_cannot_run_its_own_executor) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  stamps_t *s = stamps_new(4, &w);
  s->nested = ex;
  s->nested_rc = -1;
  run_stamps(ex, w, s, 4, 1);
  ck_assert_int_eq(s->nested_rc, MLSBA_EINVAL);
  ck_assert_msg(strstr(s->nested_msg, "running a load already") != NULL, "%s",
                s->nested_msg);
  s->nested = NULL;
  run_stamps(ex, w, s, 2, 2);
  stamps_free(s, w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A child forked after the threads started has none of them: its runs
 * start threads of its own (instead of waiting for the parent's for
 * ever), and destroying the executor there frees without joining. */
START_TEST(a_forked_child_runs_with_threads_of_its_own) {
#ifdef __SANITIZE_THREAD__
  return; /* TSan refuses threads in a child forked with threads */
#endif
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  stamps_t *s = stamps_new(8, &w);
  run_stamps(ex, w, s, 4, 1);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    signal(SIGALRM, SIG_DFL);
    alarm(60); /* a hang fails the test instead of blocking it */
    int64_t units[2] = {5, 3};
    double t[2];
    s->run = 2;
    int bad = mlsba_executor_run(ex, w, units, 0, t, NULL) != 0;
    for (int64_t i = 0; i < s->n; i++)
      bad |= s->stamp[i] != 2;
    mlsba_executor_destroy(ex);
    stamps_free(s, w); /* nothing left for valgrind to call a leak */
    mlsba_platform_destroy(pl);
    _exit(bad ? 3 : 0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "the child's run: status %d", status);
  run_stamps(ex, w, s, 2, 3); /* the parent's threads are still there */
  stamps_free(s, w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The buffer an executor keeps for the layers above between calls (the
 * factorizations' panel copies): handed out only where it is large
 * enough, the larger of two kept, the smaller freed, and the last one
 * freed with the executor (valgrind and LeakSanitizer see no leak). */
START_TEST(the_executor_keeps_the_larger_spare_buffer) {
  mlsba_platform_t *pl = platform(two_cores);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  size_t got = 0;
  ck_assert_ptr_null(mlsba__executor_spare_take(ex, 1, &got));
  char *small = malloc(100), *large = malloc(300);
  ck_assert(small && large);
  mlsba__executor_spare_keep(ex, small, 100);
  ck_assert_ptr_null(mlsba__executor_spare_take(ex, 101, &got));
  ck_assert_ptr_eq(mlsba__executor_spare_take(ex, 40, &got), small);
  ck_assert_uint_eq(got, 100);
  ck_assert_ptr_null(mlsba__executor_spare_take(ex, 40, &got)); /* taken */
  mlsba__executor_spare_keep(ex, small, 100);
  mlsba__executor_spare_keep(ex, large, 300); /* small is freed */
  ck_assert_ptr_eq(mlsba__executor_spare_take(ex, 200, &got), large);
  ck_assert_uint_eq(got, 300);
  mlsba__executor_spare_keep(ex, large, 300);
  char *other = malloc(50);
  ck_assert_ptr_nonnull(other);
  mlsba__executor_spare_keep(ex, other, 50); /* other is freed */
  ck_assert_ptr_eq(mlsba__executor_spare_take(ex, 300, &got), large);
  mlsba__executor_spare_keep(ex, large, 300);
  mlsba__executor_spare_keep(ex, NULL, 0); /* nothing */
  mlsba_executor_destroy(ex);              /* frees large */
  mlsba_platform_destroy(pl);
}
END_TEST

static Suite *execute_suite(void) {
  Suite *s = suite_create("execute");
  TCase *tc = tcase_create("cores and sim");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc,
                 verification_accepts_a_right_product_and_catches_a_wrong_one);
  tcase_add_test(tc, verification_of_large_products_catches_a_wrong_column);
  tcase_add_test(tc, cores_compute_the_product_with_blis);
  tcase_add_test(tc, simulated_devices_take_virtual_time);
  tcase_add_test(tc, bad_runs_are_refused);
  tcase_add_test(tc, devoted_core_must_not_compute);
  tcase_add_test(tc, discovery_finds_every_core);
  tcase_add_test(tc, discovery_tells_core_kinds_apart);
  tcase_add_test(tc, the_executor_keeps_the_larger_spare_buffer);
  suite_add_tcase(s, tc);
  TCase *threads = tcase_create("the groups' threads");
  tcase_set_timeout(threads, 300);
  tcase_add_test(threads, many_runs_in_a_row_reuse_the_pinned_threads);
  tcase_add_test(threads, a_failed_run_leaves_the_executor_usable);
  tcase_add_test(threads, the_threads_live_from_the_first_run_to_destroy);
  tcase_add_test(threads, a_thread_that_cannot_start_calls_the_run_off);
  tcase_add_test(threads, a_cpu_function_cannot_run_its_own_executor);
  tcase_add_test(threads, a_forked_child_runs_with_threads_of_its_own);
  suite_add_tcase(s, threads);
  return s;
}

int main(void) { return run_suite(execute_suite()); }
