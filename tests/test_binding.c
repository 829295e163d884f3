/* Devices from the process's binding: discovery under a binding to one
 * core finds that core alone, callbacks run on it, a platform file's core
 * outside it is refused naming it; the environment's controls
 * (MLSBA_CPUS, MLSBA_NCPU, MLSBA_OPENCL, MLSBA_NOPENCL) and their errors;
 * the local-rank rule that shares out a host's accelerators; and two MPI
 * ranks under mpirun --bind-to core, each on its own core. */
#define _GNU_SOURCE
#include <check.h>
#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "platform/binding.h"
#include "support/run_ranks.h"
#include "support/run_suite.h"
#include "support/run_tool.h"

static int machine_cores(void) {
  hwloc_topology_t topo;
  ck_assert_int_eq(hwloc_topology_init(&topo), 0);
  ck_assert_int_eq(hwloc_topology_load(topo), 0);
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_topology_destroy(topo);
  return n;
}

/* Binds this process (a forked test) to the processing units of core. */
static hwloc_bitmap_t bind_to_core(int core) {
  hwloc_topology_t topo;
  ck_assert_int_eq(hwloc_topology_init(&topo), 0);
  ck_assert_int_eq(hwloc_topology_load(topo), 0);
  hwloc_bitmap_t set = hwloc_bitmap_dup(
      hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)core)->cpuset);
  ck_assert_int_eq(hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS), 0);
  hwloc_topology_destroy(topo);
  return set;
}

/* The core indices of the cpu devices of the discovered platform, in
 * order, as "0 1"; OpenCL is left out so that no driver starts. */
static void discovered_cores(char *buf, size_t size) {
  setenv("MLSBA_NOPENCL", "0", 1);
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_discover(&pl) == 0, "%s", mlsba_last_error());
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++) {
    mlsba_device_info_t info;
    ck_assert_int_eq(mlsba_platform_device_info(pl, i, &info), 0);
    ck_assert_int_eq(mlsba_platform_device_type(pl, i), MLSBA_DEVICE_CPU);
    char want[32];
    snprintf(want, sizeof want, "core%d", info.core);
    ck_assert_str_eq(mlsba_platform_device_name(pl, i), want);
    at +=
        (size_t)snprintf(buf + at, size - at, "%s%d", at ? " " : "", info.core);
  }
  mlsba_platform_destroy(pl);
}

static int discover_error(void) {
  mlsba_platform_t *pl = NULL;
  int err = mlsba_platform_discover(&pl);
  mlsba_platform_destroy(pl);
  return err;
}

START_TEST(discovery_under_a_binding_to_one_core_finds_that_core) {
  int n = machine_cores();
  char got[256];
  hwloc_bitmap_free(bind_to_core(n - 1));
  discovered_cores(got, sizeof got);
  char want[16];
  snprintf(want, sizeof want, "%d", n - 1);
  ck_assert_str_eq(got, want);
}
END_TEST

static int record_cpu(void *user, int64_t first, int64_t count) {
  (void)first;
  (void)count;
  int cpu = sched_getcpu();
  if (cpu >= 0 && cpu < 1024)
    ((volatile unsigned char *)user)[cpu] = 1;
  return 0;
}

/* mlsba_balance() on the auto platform under a binding to the last core:
 * every call of the load's CPU function ran on that core. */
START_TEST(callbacks_run_within_the_binding) {
  int n = machine_cores();
  hwloc_bitmap_t set = bind_to_core(n - 1);
  setenv("MLSBA_NOPENCL", "0", 1);
  static unsigned char ran[1024];
  mlsba_load_t *load = NULL;
  ck_assert_int_eq(mlsba_load_create("where", 4096, &load), 0);
  ck_assert_int_eq(mlsba_load_set_cpu(load, record_cpu, ran), 0);
  mlsba_balancer_t *b = NULL;
  ck_assert_msg(mlsba_balance(load, &b) == 0, "%s", mlsba_last_error());
  for (int k = 0; k < 5; k++)
    ck_assert_int_eq(mlsba_balancer_run(b, NULL), 0);
  int seen = 0;
  for (int cpu = 0; cpu < 1024; cpu++) {
    if (!ran[cpu])
      continue;
    seen++;
    ck_assert_msg(hwloc_bitmap_isset(set, (unsigned)cpu),
                  "a callback ran on CPU %d, outside the binding", cpu);
  }
  ck_assert_int_ge(seen, 1);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(load);
  hwloc_bitmap_free(set);
}
END_TEST

/* A platform file naming a core the process is not bound to: the
 * executor refuses it and says which core and what the binding is. */
START_TEST(a_core_outside_the_binding_is_an_error_that_says_so) {
  int n = machine_cores();
  if (n < 2)
    return; /* one core: nothing lies outside a binding */
  hwloc_bitmap_free(bind_to_core(0));
  char json[256];
  snprintf(json, sizeof json,
           "{\"devices\": [{\"name\": \"far\", \"type\": \"cpu\", "
           "\"core\": %d}]}",
           n - 1);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(json, "test", &pl), 0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), MLSBA_EDEVICE);
  char want[128];
  snprintf(want, sizeof want,
           "far: core %d is outside this process's binding (core 0", n - 1);
  ck_assert_msg(strstr(mlsba_last_error(), want) != NULL, "%s",
                mlsba_last_error());
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(mlsba_cpus_and_mlsba_ncpu_choose_the_cores) {
  int n = machine_cores();
  char got[256], want[256];
  setenv("MLSBA_NCPU", "1", 1);
  discovered_cores(got, sizeof got);
  ck_assert_str_eq(got, "0");
  unsetenv("MLSBA_NCPU");
  snprintf(want, sizeof want, "%d", n - 1);
  setenv("MLSBA_CPUS", want, 1);
  discovered_cores(got, sizeof got);
  ck_assert_str_eq(got, want);
  /* A range, then at most one of it. */
  snprintf(want, sizeof want, "0-%d", n - 1);
  setenv("MLSBA_CPUS", want, 1);
  setenv("MLSBA_NCPU", "1", 1);
  discovered_cores(got, sizeof got);
  ck_assert_str_eq(got, "0");
}
END_TEST

/* Each bad value stops discovery with MLSBA_EINVAL and a message that
 * names the variable and what is wrong with it. */
START_TEST(bad_environment_values_are_errors_naming_them) {
  static const struct {
    const char *var, *value, *says;
  } cases[] = {
      {"MLSBA_CPUS", "x", "MLSBA_CPUS: 'x' is not a list of indices"},
      {"MLSBA_CPUS", "3-1", "MLSBA_CPUS: '3-1' is not a list"},
      {"MLSBA_CPUS", "0,", "MLSBA_CPUS: '0,' is not"},
      {"MLSBA_CPUS", "100000", "MLSBA_CPUS: core 100000 does not exist"},
      {"MLSBA_NCPU", "-1", "MLSBA_NCPU: '-1' is not a number of devices"},
      {"MLSBA_NCPU", "two", "MLSBA_NCPU: 'two' is not"},
      {"MLSBA_NOPENCL", "1x", "MLSBA_NOPENCL: '1x' is not"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    unsetenv("MLSBA_CPUS");
    unsetenv("MLSBA_NCPU");
    unsetenv("MLSBA_NOPENCL");
    unsetenv("MLSBA_OPENCL");
    setenv(cases[i].var, cases[i].value, 1);
    if (strcmp(cases[i].var, "MLSBA_NOPENCL") != 0)
      setenv("MLSBA_OPENCL", "none", 1);
    ck_assert_msg(discover_error() == MLSBA_EINVAL, "%s=%s accepted",
                  cases[i].var, cases[i].value);
    ck_assert_msg(strstr(mlsba_last_error(), cases[i].says) != NULL,
                  "%s=%s: %s", cases[i].var, cases[i].value,
                  mlsba_last_error());
  }
  /* No device at all is an error too, not an empty platform. */
  unsetenv("MLSBA_NOPENCL");
  setenv("MLSBA_NCPU", "0", 1);
  setenv("MLSBA_OPENCL", "none", 1);
  ck_assert_int_eq(discover_error(), MLSBA_EDEVICE);
  ck_assert(strstr(mlsba_last_error(), "no device left") != NULL);
}
END_TEST

static void chosen_text(const unsigned char *c, size_t n, char *buf) {
  for (size_t j = 0; j < n; j++)
    buf[j] = c[j] ? '1' : '0';
  buf[n] = '\0';
}

/* Ranks on one host take every local_size-th accelerator from their
 * local rank, so no two drive one device; MLSBA_OPENCL chooses by index
 * (whatever the rank); MLSBA_NOPENCL caps the count. */
START_TEST(local_ranks_share_out_the_accelerators) {
  unsigned char c[8];
  char got[9];
  ck_assert_int_eq(mlsba__binding_select_opencl(5, 1, 2, c), 0);
  chosen_text(c, 5, got);
  ck_assert_str_eq(got, "01010");
  ck_assert_int_eq(mlsba__binding_select_opencl(5, 0, 2, c), 0);
  chosen_text(c, 5, got);
  ck_assert_str_eq(got, "10101");
  ck_assert_int_eq(mlsba__binding_select_opencl(1, 1, 2, c), 0);
  chosen_text(c, 1, got);
  ck_assert_str_eq(got, "0");
  ck_assert_int_eq(mlsba__binding_select_opencl(3, 2, 3, c), 0);
  chosen_text(c, 3, got);
  ck_assert_str_eq(got, "001");
  setenv("MLSBA_OPENCL", "0,2", 1);
  ck_assert_int_eq(mlsba__binding_select_opencl(3, 1, 2, c), 0);
  chosen_text(c, 3, got);
  ck_assert_str_eq(got, "101");
  setenv("MLSBA_NOPENCL", "1", 1);
  ck_assert_int_eq(mlsba__binding_select_opencl(3, 1, 2, c), 0);
  chosen_text(c, 3, got);
  ck_assert_str_eq(got, "100");
  unsetenv("MLSBA_NOPENCL");
  setenv("MLSBA_OPENCL", "none", 1);
  ck_assert_int_eq(mlsba__binding_select_opencl(3, 0, 1, c), 0);
  chosen_text(c, 3, got);
  ck_assert_str_eq(got, "000");
  ck_assert(mlsba__binding_no_opencl());
  setenv("MLSBA_OPENCL", "3", 1);
  ck_assert_int_eq(mlsba__binding_select_opencl(3, 0, 1, c), MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(),
                   "MLSBA_OPENCL: OpenCL device 3 does not exist") != NULL);
}
END_TEST

START_TEST(the_local_rank_comes_from_the_launcher) {
  int r, s;
  mlsba__binding_local_rank(&r, &s);
  ck_assert(r == 0 && s == 1);
  setenv("MPI_LOCALRANKID", "2", 1);
  setenv("MPI_LOCALNRANKS", "4", 1);
  mlsba__binding_local_rank(&r, &s);
  ck_assert(r == 2 && s == 4);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
  mlsba__binding_local_rank(&r, &s);
  ck_assert(r == 1 && s == 3);
  /* A rank past the size is no rank: the next launcher's, or none. */
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  mlsba__binding_local_rank(&r, &s);
  ck_assert(r == 2 && s == 4);
}
END_TEST

#ifdef MLSBA_BINDING_RANKS_BIN
/* A CPU list "0,3" into a set. */
static unsigned long long cpu_mask(const char *list) {
  unsigned long long m = 0;
  for (const char *p = list; *p >= '0' && *p <= '9';) {
    char *end;
    long c = strtol(p, &end, 10);
    ck_assert_msg(end != p && c >= 0 && c < 64, "CPU list '%s'", list);
    m |= 1ULL << c;
    p = *end == ',' ? end + 1 : end;
  }
  return m;
}

/* Two ranks under mpirun --bind-to core: each discovers one core, its
 * callbacks run only on the CPUs of its binding, and the ranks' CPUs do
 * not overlap. */
START_TEST(two_ranks_bound_to_cores_each_use_their_own_core) {
  if (machine_cores() < 2)
    return; /* --bind-to core needs a core per rank */
  char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT,
       prog[] = MLSBA_BINDING_RANKS_BIN;
  char *argv[MPI_JOB_START_WORDS + 7];
  size_t n = mpi_job_start_bound(argv, timeout, "60", mpirun, "core");
  char *rest[] = {"-np", "2", "-x", "MLSBA_NOPENCL=0", prog, NULL};
  memcpy(argv + n, rest, sizeof rest);
  mpi_job_environment();
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "mpirun: %.300s%.1500s", r.out,
                r.err);
  unsigned long long used = 0;
  for (int rank = 0; rank < 2; rank++) {
    char head[32];
    snprintf(head, sizeof head, "rank %d cores 1 bound ", rank);
    const char *line = strstr(r.out, head);
    ck_assert_msg(line != NULL, "no '%s' in:\n%s", head, r.out);
    const char *ran = strstr(line, " ran ");
    ck_assert(ran != NULL);
    unsigned long long bound = cpu_mask(line + strlen(head)),
                       cpus = cpu_mask(ran + 5);
    ck_assert_msg(cpus != 0 && (cpus & ~bound) == 0,
                  "rank %d ran outside its binding:\n%s", rank, r.out);
    ck_assert_msg((cpus & used) == 0, "the ranks shared a CPU:\n%s", r.out);
    used |= cpus;
  }
  tool_run_free(&r);
}
END_TEST
#endif

static Suite *binding_suite(void) {
  Suite *s = suite_create("binding");
  TCase *tc = tcase_create("binding");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, discovery_under_a_binding_to_one_core_finds_that_core);
  tcase_add_test(tc, callbacks_run_within_the_binding);
  tcase_add_test(tc, a_core_outside_the_binding_is_an_error_that_says_so);
  tcase_add_test(tc, mlsba_cpus_and_mlsba_ncpu_choose_the_cores);
  tcase_add_test(tc, bad_environment_values_are_errors_naming_them);
  tcase_add_test(tc, local_ranks_share_out_the_accelerators);
  tcase_add_test(tc, the_local_rank_comes_from_the_launcher);
#ifdef MLSBA_BINDING_RANKS_BIN
  tcase_add_test(tc, two_ranks_bound_to_cores_each_use_their_own_core);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(binding_suite()); }
