/* mlsba-inpa under mpirun as a user runs it: four oversubscribed ranks on
 * simulated nodes (converges, JSON as documented, rectangles tiling C),
 * on real cores (verified) and on a core beside an OpenCL device (pocl:
 * its slice of C' resident, or streamed under a memory limit; verified),
 * errors on one rank (a missing file, an accelerator with no room...)
 * stopping every rank with one line, and the smpicc build under SimGrid's
 * smpirun; white-box, one rank's node giving back exactly the columns of
 * C' its accelerator kept. */
#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi/internal.h" /* white-box: one rank's node, no ranks */
#include "support/opencl_device.h"
#include "support/run_ranks.h"
#include "support/run_suite.h"

#define DATA MLSBA_SOURCE_DIR "/tests/data/mpi/"

static char mpirun[] = MLSBA_MPIRUN;
static char inpa[] = MLSBA_INPA_BIN;
static char timeout[] = MLSBA_TIMEOUT;

/* A job that hangs is killed after job_limit_s (SIGTERM, then SIGKILL: a
 * hung mpirun ignores SIGTERM) and fails its test with status 124 or 137
 * instead of blocking the suite. */
static char job_limit_s[8] = "50";
#define JOB_LIMIT_S job_limit_s

/* Runs mlsba-inpa on np oversubscribed ranks with the extra arguments
 * (NULL-terminated). */
static void run_inpa(int np, tool_run_t *r, ...) {
  char *args[32] = {inpa};
  size_t n = 1;
  va_list ap;
  va_start(ap, r);
  for (char *a; (a = va_arg(ap, char *)) != NULL && n + 1 < 32;)
    args[n++] = a;
  va_end(ap);
  args[n] = NULL;
  run_ranks(timeout, JOB_LIMIT_S, mpirun, np, args, r);
}

/* An MPMD job: ranks 0 .. np - 2 given `common`, the last rank `last`
 * (NULL-terminated lists); with np = 1 the one rank is given `last`. */
static void run_inpa_last_differs(int np, const char *const *common,
                                  const char *const *last, tool_run_t *r) {
  char npbuf[16];
  snprintf(npbuf, sizeof npbuf, "%d", np - 1);
  char *argv[64];
  size_t n = mpi_job_start(argv, timeout, JOB_LIMIT_S, mpirun);
  if (np > 1) {
    argv[n++] = "-np";
    argv[n++] = npbuf;
    argv[n++] = inpa;
    for (size_t i = 0; common[i] != NULL && n < 40; i++)
      argv[n++] = (char *)common[i];
    argv[n++] = ":";
  }
  argv[n++] = "-np";
  argv[n++] = "1";
  argv[n++] = inpa;
  for (size_t i = 0; last[i] != NULL && n + 1 < 64; i++)
    argv[n++] = (char *)last[i];
  argv[n] = NULL;
  run_tool(argv, r);
}

/* Runs the links probe on three ranks; 1 when every rank but rank 0 got
 * a link (latency below 10 ms, bandwidth above 10 MB/s), 0 when one's
 * times did not grow with the size (bandwidth 0: what a machine busy
 * with other work can make of shared memory), failing on anything else. */
static int probe_links_once(void) {
  char probe[] = MLSBA_LINKS_PROBE_BIN;
  char *args[] = {probe, NULL};
  tool_run_t r;
  run_ranks(timeout, JOB_LIMIT_S, mpirun, 3, args, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_uint_eq(count_lines(r.out), 3);
  int all = 1;
  for (int k = 0; k < 3; k++) {
    char want[32];
    snprintf(want, sizeof want, "rank %d latency ", k);
    const char *at = strstr(r.out, want);
    ck_assert_msg(at != NULL, "no line for rank %d: %s", k, r.out);
    double latency, bandwidth;
    ck_assert_int_eq(
        sscanf(at + strlen(want), "%lf bandwidth %lf", &latency, &bandwidth),
        2);
    ck_assert_double_ge(latency, 0);
    if (k == 0 || bandwidth == 0) {
      ck_assert_double_eq(latency, 0);
      all &= k == 0;
    } else {
      ck_assert_double_lt(latency, 0.01);
      ck_assert_double_gt(bandwidth, 1e7);
    }
  }
  tool_run_free(&r);
  return all;
}

/* Each rank's network link, measured by ping-pong from rank 0 over shared
 * memory; rank 0's own has none. Timing on a shared machine: up to three
 * tries for every rank to get one. */
START_TEST(ranks_measure_their_links_by_ping_pong) {
  int ok = 0;
  for (int tries = 0; tries < 3 && !ok; tries++)
    ok = probe_links_once();
  ck_assert_msg(ok, "a rank's link stayed unknown in three tries");
}
END_TEST

static json_t *parse(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "not JSON (%s): %s", e.text, text);
  return j;
}

static json_int_t int_of(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  ck_assert_msg(json_is_integer(v), "%s is not an integer", k);
  return json_integer_value(v);
}

static double num_of(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  ck_assert_msg(json_is_number(v), "%s is not a number", k);
  return json_number_value(v);
}

/* The slowest rank's time in a history entry. */
static double slowest(json_t *entry) {
  double worst = 0;
  json_t *t;
  size_t i;
  json_array_foreach(json_object_get(entry, "time"), i, t) {
    worst = json_number_value(t) > worst ? json_number_value(t) : worst;
  }
  return worst;
}

/* The report of DESIGN's contract: every field, ranks whose rectangles
 * tile the nb x nb grid exactly, devices whose columns fill their rank's
 * width, a history that ends where the result is. */
static void check_report(json_t *j, int nodes, json_int_t n, json_int_t b) {
  static const char *const fields[] = {"algorithm",
                                       "nodes",
                                       "n",
                                       "block",
                                       "iterations",
                                       "converged",
                                       "imbalance",
                                       "half_perimeter_sum",
                                       "half_perimeter_lower_bound",
                                       "makespan_s",
                                       "gflops",
                                       "comm_share",
                                       "verified",
                                       "history",
                                       "ranks",
                                       "run_iteration"};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
    ck_assert_msg(json_object_get(j, fields[i]) != NULL, "no %s", fields[i]);
  ck_assert_int_eq(int_of(j, "nodes"), nodes);
  ck_assert_int_eq(int_of(j, "n"), n);
  ck_assert_int_eq(int_of(j, "block"), b);
  ck_assert(json_is_boolean(json_object_get(j, "converged")));
  /* converged is exactly a balanced run or a fixed point; balanced means
   * the node times are within eps. */
  const char *stop = json_string_value(json_object_get(j, "stop"));
  ck_assert_msg(stop != NULL, "no stop");
  int conv = json_is_true(json_object_get(j, "converged"));
  ck_assert_int_eq(conv,
                   !strcmp(stop, "balanced") || !strcmp(stop, "fixed-point"));
  ck_assert(num_of(j, "makespan_s") > 0 && num_of(j, "gflops") > 0);
  double share = num_of(j, "comm_share");
  ck_assert(share >= 0 && share < 1);
  ck_assert(num_of(j, "half_perimeter_sum") + 1e-9 >=
            num_of(j, "half_perimeter_lower_bound"));
  json_int_t nb = n / b, area = 0, hp = 0;
  json_t *ranks = json_object_get(j, "ranks");
  ck_assert_uint_eq(json_array_size(ranks), (size_t)nodes);
  /* Every block of C owned exactly once. */
  unsigned char *owned = calloc((size_t)(nb * nb), 1);
  for (int r = 0; r < nodes; r++) {
    json_t *k = json_array_get(ranks, (size_t)r);
    ck_assert_int_eq(int_of(k, "rank"), r);
    json_int_t m = int_of(k, "m"), w = int_of(k, "n"), row = int_of(k, "row"),
               col = int_of(k, "col");
    ck_assert_int_eq(int_of(k, "w"), m * w);
    ck_assert(m >= 1 && w >= 1 && row + m <= nb && col + w <= nb);
    for (json_int_t x = row; x < row + m; x++)
      for (json_int_t y = col; y < col + w; y++)
        ck_assert_msg(!owned[x * nb + y]++, "block %lld,%lld owned twice",
                      (long long)x, (long long)y);
    area += m * w;
    hp += m + w;
    json_int_t cols = 0;
    json_t *devs = json_object_get(k, "devices"), *d;
    size_t i;
    ck_assert(json_array_size(devs) >= 1);
    json_array_foreach(devs, i, d) {
      ck_assert(json_is_string(json_object_get(d, "name")));
      cols += int_of(d, "load");
      ck_assert(num_of(d, "time") >= 0);
    }
    ck_assert_int_eq(cols, w * b);
    ck_assert(num_of(k, "time") > 0);
  }
  free(owned);
  ck_assert_int_eq(area, nb * nb);
  ck_assert_int_eq(hp, int_of(j, "half_perimeter_sum"));
  json_t *hist = json_object_get(j, "history");
  ck_assert_uint_eq(json_array_size(hist), (size_t)int_of(j, "iterations"));
  json_t *last = json_array_get(hist, json_array_size(hist) - 1);
  /* balanced: the last run was within eps (the run that stopped INPA). */
  if (!strcmp(stop, "balanced"))
    ck_assert(num_of(last, "imbalance") <= num_of(j, "eps"));
  /* The product ran the fastest distribution measured, and the report's
   * imbalance and areas are that run's. */
  json_int_t ran = int_of(j, "run_iteration");
  ck_assert(ran >= 1 && ran <= int_of(j, "iterations"));
  json_t *chosen = json_array_get(hist, (size_t)(ran - 1));
  ck_assert_double_eq_tol(num_of(chosen, "imbalance"), num_of(j, "imbalance"),
                          1e-6);
  json_t *h;
  size_t k;
  json_array_foreach(hist, k, h) {
    ck_assert_uint_eq(json_array_size(json_object_get(h, "w")), (size_t)nodes);
    ck_assert_msg(slowest(chosen) <= slowest(h),
                  "ran %lld (%g s), %zu took %g s", (long long)ran,
                  slowest(chosen), k + 1, slowest(h));
  }
  for (int r = 0; r < nodes; r++)
    ck_assert_int_eq(int_of(json_array_get(ranks, (size_t)r), "w"),
                     json_integer_value(json_array_get(
                         json_object_get(chosen, "w"), (size_t)r)));
}

/* A slower distribution than one measured was run (before, the product
 * ran INPA's last distribution: here the fourth, slower than the
 * third). */
START_TEST(product_runs_the_fastest_distribution_measured) {
  tool_run_t r;
  run_inpa(4, &r, "--platform", DATA "sim%r.json", "--size", "1024", "--block",
           "64", "--max-iter", "4", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 4, 1024, 64);
  ck_assert_int_eq(int_of(j, "iterations"), 4);
  ck_assert_int_eq(int_of(j, "run_iteration"), 3);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* --comm-model links with every rank's link in its platform file: the
 * report gives each rank's link as the file has it and the panels the
 * model predicts for its rectangle, nb (2 latency + (m + n) b^2 8 /
 * bandwidth); rank 2's link is 10 to 100 times slower than the others'
 * and gets the smallest share. */
START_TEST(links_from_the_platform_files_are_in_the_models) {
  static const double lat[4] = {5e-5, 5e-5, 1e-4, 5e-5},
                      bw[4] = {1.25e8, 1.25e9, 1.25e7, 1.25e8};
  tool_run_t r;
  run_inpa(4, &r, "--platform", DATA "net%r.json", "--size", "2048", "--block",
           "64", "--comm-model", "links", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 4, 2048, 64);
  ck_assert_str_eq(json_string_value(json_object_get(j, "comm_model")),
                   "links");
  json_t *ranks = json_object_get(j, "ranks");
  double nb = 2048 / 64;
  json_int_t least = 1 << 30;
  for (size_t i = 0; i < 4; i++) {
    json_t *rk = json_array_get(ranks, i), *link = json_object_get(rk, "link");
    ck_assert_ptr_nonnull(link);
    ck_assert_str_eq(json_string_value(json_object_get(link, "source")),
                     "platform");
    ck_assert_double_eq_tol(num_of(link, "latency"), lat[i], 1e-12);
    ck_assert_double_eq_tol(num_of(link, "bandwidth"), bw[i], 1e-3);
    double want =
        nb * (2 * lat[i] + (double)(int_of(rk, "m") + int_of(rk, "n")) * 64 *
                               64 * 8 / bw[i]);
    ck_assert_double_eq_tol(num_of(rk, "comm_modelled_s"), want, 1e-9 * want);
    if (i != 2)
      least = int_of(rk, "w") < least ? int_of(rk, "w") : least;
  }
  ck_assert_int_lt(int_of(json_array_get(ranks, 2), "w"), least);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* Without a network link in the files the links are measured from rank 0
 * (rank 0 takes the fastest path it measured); without --comm-model the
 * report says none and carries no links. */
START_TEST(links_are_measured_where_the_files_give_none) {
  for (int with = 0; with < 2; with++) {
    tool_run_t r;
    run_inpa(3, &r, "--platform", DATA "sim%r.json", "--size", "1024",
             "--block", "64", "--json", "-", "--comm-model",
             with ? "links" : "none", NULL);
    ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
    json_t *j = parse(r.out);
    check_report(j, 3, 1024, 64);
    ck_assert_str_eq(json_string_value(json_object_get(j, "comm_model")),
                     with ? "links" : "none");
    for (size_t i = 0; i < 3; i++) {
      json_t *rk = json_array_get(json_object_get(j, "ranks"), i);
      json_t *link = json_object_get(rk, "link");
      if (!with) {
        ck_assert_ptr_null(link);
        ck_assert_ptr_null(json_object_get(rk, "comm_modelled_s"));
        continue;
      }
      ck_assert_str_eq(json_string_value(json_object_get(link, "source")),
                       "measured");
      ck_assert_double_ge(num_of(link, "latency"), 0);
      ck_assert_double_ge(num_of(link, "bandwidth"), 0);
      ck_assert_double_ge(num_of(rk, "comm_modelled_s"), 0);
    }
    json_decref(j);
    tool_run_free(&r);
  }
}
END_TEST

START_TEST(simulated_nodes_converge) {
  tool_run_t r;
  run_inpa(4, &r, "--platform", DATA "sim%r.json", "--size", "2048", "--block",
           "64", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 4, 2048, 64);
  ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "inpa");
  ck_assert(json_is_null(json_object_get(j, "verified")));
  ck_assert(json_is_true(json_object_get(j, "converged")));
  /* The nodes differ fourfold and more in speed: the even start is far
   * off, and INPA ends far closer. */
  json_t *hist = json_object_get(j, "history");
  double first = num_of(json_array_get(hist, 0), "imbalance");
  ck_assert_msg(first > 0.5, "first imbalance %g", first);
  ck_assert_msg(num_of(j, "imbalance") < 0.25 * first, "imbalance %g of %g",
                num_of(j, "imbalance"), first);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(homogeneous_baseline_stays_uneven) {
  tool_run_t r;
  run_inpa(4, &r, "--platform", DATA "sim%r.json", "--size", "2048", "--block",
           "64", "--algo", "homogeneous", "--node-algo", "idpa", "--json", "-",
           NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 4, 2048, 64);
  ck_assert_int_eq(int_of(j, "iterations"), 1);
  ck_assert(num_of(j, "imbalance") > 0.5);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(real_cores_verify) {
  tool_run_t r;
  /* Four ranks on two shared cores time each other's interference: a
   * generous eps, and steps of a few milliseconds so that the node times
   * are not thread start-up. */
  run_inpa(4, &r, "--platform", DATA "cpu%r.json", "--size", "2048", "--block",
           "128", "--eps", "0.2", "--max-iter", "8", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 4, 2048, 128);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  /* Whether INPA converges here depends on what else runs on the two
   * cores (ctest runs suites in parallel): it did in most runs, not in
   * all, so convergence is asserted on the simulated nodes only. */
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* Thirteen equal ranks make four columns whose rows do not line up, so
 * A's panel reaches the last column through a rank of another that
 * passes its rows on (the tree over columns); every C' must still be
 * right. All ranks share core 0: it is the data that is checked. */
START_TEST(a_panel_relayed_over_four_columns_verifies) {
  tool_run_t r;
  run_inpa(13, &r, "--platform", DATA "cpu0.json", "--size", "1024", "--block",
           "32", "--algo", "homogeneous", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 13, 1024, 32);
  json_t *ranks = json_object_get(j, "ranks");
  json_int_t cols[13], rows_end[13];
  size_t ncols = 0;
  int misaligned = 0;
  for (size_t i = 0; i < 13; i++) {
    json_t *k = json_array_get(ranks, i);
    json_int_t c = int_of(k, "col"), e = int_of(k, "row") + int_of(k, "m");
    size_t x = 0;
    while (x < ncols && cols[x] != c)
      x++;
    if (x == ncols)
      cols[ncols++] = c;
    rows_end[i] = e;
    for (size_t o = 0; o < i; o++)
      misaligned |= int_of(json_array_get(ranks, o), "col") != c &&
                    rows_end[o] != e && rows_end[o] < 32 && e < 32;
  }
  ck_assert_uint_ge(ncols, 4);
  ck_assert(misaligned);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* 1, saying so, when there is no OpenCL device for the test. */
static int skipped_without_opencl(const char *test) {
  /* pocl builds CLBlast's kernels on first use, tens of seconds on a
   * busy machine: an OpenCL job gets most of its test's 240 s. */
  snprintf(job_limit_s, sizeof job_limit_s, "200");
  if (have_opencl_device())
    return 0;
  printf("%s: skipped (no OpenCL device)\n", test);
  return 1;
}

/* The columns rank 0's device of that name got. */
static json_int_t rank0_columns(json_t *j, const char *device) {
  json_t *devs = json_object_get(json_array_get(json_object_get(j, "ranks"), 0),
                                 "devices"),
         *d;
  size_t i;
  json_array_foreach(devs, i, d) {
    if (!strcmp(json_string_value(json_object_get(d, "name")), device))
      return int_of(d, "load");
  }
  ck_abort_msg("rank 0 has no device %s", device);
  return -1;
}

/* Converged, or said it did not: then the node times are apart by more
 * than eps (the last distribution's imbalance is the report's). */
static void check_stopped_honestly(json_t *j, double eps) {
  if (!json_is_true(json_object_get(j, "converged")))
    ck_assert_msg(num_of(j, "imbalance") > eps, "not converged at imbalance %g",
                  num_of(j, "imbalance"));
}

/* Rank 0: a core and pocl in one group, rank 1 a core. pocl computes on
 * the cores of the others and would be left out here, where it makes
 * them slower (--keep-shared keeps it): its columns of C' stay on it
 * across the steps (pocl has gigabytes) and come back for the check. */
START_TEST(core_and_opencl_device_verify) {
  if (skipped_without_opencl(__func__))
    return;
  /* With the core on its fastest kernels pocl is worth a few columns at
   * most, and on a busy machine none; on BLIS's reference kernels the
   * core is a third as fast, so pocl's share is never empty and its
   * resident C' is what this case checks. */
  setenv("MLSBA_CPU_KERNELS", "generic", 1);
  tool_run_t r;
  run_inpa(2, &r, "--platform", DATA "pocl%r.json", "--size", "512", "--block",
           "64", "--eps", "0.2", "--max-iter", "6", "--keep-shared", "--json",
           "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 2, 512, 64);
  check_stopped_honestly(j, 0.2);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  ck_assert_msg(rank0_columns(j, "ocl0") > 0, "the OpenCL device got none");
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* pocl alone under mem_limit_mb 1, single precision: A_(b) (512 x 64)
 * and the 512 columns of B_(b) and C' take 1.25 MiB, so the device
 * streams its columns of C' through in chunks every step. */
START_TEST(opencl_device_streams_what_does_not_fit) {
  if (skipped_without_opencl(__func__))
    return;
  tool_run_t r;
  run_inpa(1, &r, "--platform", DATA "pocl-1mb%r.json", "--size", "512",
           "--block", "64", "--precision", "single", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 1, 512, 64);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  json_int_t cols = rank0_columns(j, "ocl0"), bm = 512, b = 64;
  ck_assert_msg((bm * b + cols * (bm + b)) * (json_int_t)sizeof(float) >
                    1048576,
                "%lld columns would fit: not streamed", (long long)cols);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* One line naming the rank and the problem, a non-zero exit, no hang. */
static void check_one_line_error(tool_run_t *r, const char *want) {
  ck_assert_msg(r->exited && r->status != 0, "status %d", r->status);
  const char *hit = strstr(r->err, "mlsba-inpa: ");
  ck_assert_msg(hit != NULL, "no message: %s", r->err);
  ck_assert_msg(strstr(hit + 1, "mlsba-inpa: ") == NULL, "two messages: %s",
                r->err);
  const char *eol = strchr(hit, '\n');
  ck_assert_msg(strstr(hit, want) != NULL && strstr(hit, want) < eol,
                "'%s' not in: %s", want, r->err);
}

/* A missing and a malformed platform on one rank, fewer cells than
 * ranks (a size that is not a multiple of the block runs: test_multiply). */
static const struct {
  int np;
  const char *platform, *size, *want;
} bad[] = {
    {5, DATA "sim%r.json", "1024", "rank 4: " DATA "sim4.json: cannot open"},
    {5, DATA "cpu%r.json", "1024", "rank 4: " DATA "cpu4.json"},
    {4, DATA "sim%r.json", "64",
     "each of which needs a cell; use a block of at most 32"},
    /* No block runs 5 ranks on 2 x 2: the counts that run, at the
     * block given and at a block of 1 (before: "at most 4 ranks", which
     * at b = 64 met a 1 x 1 layout). */
    {5, DATA "sim%r.json", "2",
     "use at most 1 rank at the block of 64, at most 4 with a block of 1"},
    /* "%%r" is the text "%r" (before: "%0"). */
    {2, DATA "sim%%r.json", "1024", "rank 0: " DATA "sim%r.json: cannot open"},
};

START_TEST(an_error_on_any_rank_stops_all) {
  tool_run_t r;
  run_inpa(bad[_i].np, &r, "--platform", bad[_i].platform, "--size",
           bad[_i].size, "--block", "64", NULL);
  check_one_line_error(&r, bad[_i].want);
  tool_run_free(&r);
}
END_TEST

/* At N = 1024, b = 128, A_(b) alone takes the 1 MiB: the device can take
 * no column, and a node of it alone has nothing to run the load on. */
START_TEST(opencl_device_without_room_stops_the_run) {
  if (skipped_without_opencl(__func__))
    return;
  tool_run_t r;
  run_inpa(1, &r, "--platform", DATA "pocl-1mb%r.json", "--size", "1024",
           "--block", "128", NULL);
  check_one_line_error(&r, "rank 0: balance: the devices can hold 0 units");
  tool_run_free(&r);
}
END_TEST

/* A platform file with the given text, in a fresh temporary path. */
static void write_platform(char *path, const char *text) {
  strcpy(path, "/tmp/mlsba-test-platform-XXXXXX");
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
  close(fd);
}

/* ---- agreement: ranks given different command lines ------------------ */

/* Under the sanitizers, one rank and four (the singleton's path and the
 * ranks'), to shorten CI's sanitizer stage: 2 and 8 run in the plain
 * build. */
#if defined(__SANITIZE_ADDRESS__)
static const int rank_counts[] = {1, 4};
#else
static const int rank_counts[] = {1, 2, 4, 8};
#endif
#define RUN_ARGS(...)                                                          \
  "--platform", DATA "sim0.json", "--size", "1024", "--block", "64",           \
      __VA_ARGS__ NULL

/* The last rank's arguments fail to parse: every rank exits with status 2
 * and rank 0 prints the last rank's reason once (before this, that rank
 * finalized alone and the others waited forever). */
START_TEST(usage_error_on_one_rank_stops_all) {
  int np = rank_counts[_i];
  const char *common[] = {RUN_ARGS("--quiet", )};
  const char *last[] = {RUN_ARGS("--quiet", "--size", "10x24", )};
  tool_run_t r;
  run_inpa_last_differs(np, common, last, &r);
  ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
  char want[96];
  snprintf(want, sizeof want, "rank %d: bad value for --size: 10x24", np - 1);
  check_one_line_error(&r, want);
  tool_run_free(&r);
}
END_TEST

/* --help on the last rank only: the others would run; all stop with
 * status 2 naming it. Alone, it is the help. */
START_TEST(help_on_one_rank_only_stops_all) {
  int np = rank_counts[_i];
  const char *common[] = {RUN_ARGS("--quiet", )};
  const char *last[] = {"--help", NULL};
  tool_run_t r;
  run_inpa_last_differs(np, common, last, &r);
  if (np == 1) {
    ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert(strstr(r.out, "usage: mpirun") != NULL);
  } else {
    char want[96];
    snprintf(want, sizeof want, "rank %d: was given --help, rank 0", np - 1);
    check_one_line_error(&r, want);
    ck_assert_int_eq(r.status, 2);
  }
  tool_run_free(&r);
}
END_TEST

/* The last rank passes another value of an option the head uses: every
 * rank fails before any message is sized by it, naming the rank and the
 * option (before: a heap overflow in the product for --size or --block,
 * MPI_ERR_TRUNCATE for --precision, a silent run for --algo). Alone, the
 * rank runs. */
static const struct {
  int np;
  const char *opt, *value, *want;
} differ[] = {
    {2, "--size", "512", "option n (the size) is 512 here, 1024 on rank 0"},
    {4, "--block", "32", "option block is 32 here, 64 on rank 0"},
    {8, "--precision", "single",
     "option precision is single here, double on rank 0"},
    {4, "--algo", "homogeneous",
     "option algorithm is homogeneous here, inpa on rank 0"},
    {8, "--max-iter", "3", "option max_iter is 3 here, 20 on rank 0"},
    {1, "--size", "512", NULL},
};

START_TEST(options_differing_on_one_rank_stop_all) {
  int np = differ[_i].np;
  const char *common[] = {RUN_ARGS("--json", "-", )};
  const char *last[] = {
      RUN_ARGS("--json", "-", differ[_i].opt, differ[_i].value, )};
  tool_run_t r;
  run_inpa_last_differs(np, common, last, &r);
  if (differ[_i].want == NULL) {
    ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
    json_t *j = parse(r.out);
    check_report(j, 1, 512, 64);
    json_decref(j);
  } else {
    char want[160];
    snprintf(want, sizeof want, "rank %d: %s", np - 1, differ[_i].want);
    check_one_line_error(&r, want);
    ck_assert_int_eq(r.status, 1);
  }
  tool_run_free(&r);
}
END_TEST

/* The command line as the other tools read it (tools/common/options.c):
 * an unknown option, every option's bad and missing value each get their
 * own words. */
static const struct {
  const char *arg, *value, *want;
} cli[] = {
    {"--bogus", NULL, "rank 0: unknown option --bogus"},
    {"--eps", "", "rank 0: bad value for --eps: \"\""},
    {"--size", "", "rank 0: bad value for --size: \"\""},
    {"--max-iter", "0", "rank 0: bad value for --max-iter: 0"},
    {"--eps", NULL, "rank 0: a value is missing after --eps"},
    {"stray", NULL, "rank 0: unexpected argument stray"},
    {"--comm-model", "fast", "rank 0: bad value for --comm-model: fast"},
    {"--comm-model", "", "rank 0: bad value for --comm-model: \"\""},
    /* Every other option's bad value and missing value (the last
     * argument: a missing value after the run's own options). */
    {"--platform", "", "rank 0: bad value for --platform: \"\""},
    {"--block", "0", "rank 0: bad value for --block: 0"},
    {"--size", "1099511627777", "rank 0: bad value for --size: 1099511627777"},
    {"--algo", "fast", "rank 0: bad value for --algo: fast"},
    {"--node-algo", "fast", "rank 0: bad value for --node-algo: fast"},
    {"--precision", "half", "rank 0: bad value for --precision: half"},
    {"--max-iter", "10001", "rank 0: bad value for --max-iter: 10001"},
    {"--eps", "1", "rank 0: bad value for --eps: 1"},
    {"--json", "", "rank 0: bad value for --json: \"\""},
    {"--platform", NULL, "rank 0: a value is missing after --platform"},
    {"--size", NULL, "rank 0: a value is missing after --size"},
    {"--block", NULL, "rank 0: a value is missing after --block"},
    {"--algo", NULL, "rank 0: a value is missing after --algo"},
    {"--node-algo", NULL, "rank 0: a value is missing after --node-algo"},
    {"--max-iter", NULL, "rank 0: a value is missing after --max-iter"},
    {"--precision", NULL, "rank 0: a value is missing after --precision"},
    {"--json", NULL, "rank 0: a value is missing after --json"},
    {"--comm-model", NULL, "rank 0: a value is missing after --comm-model"},
    /* The product's shape and repeats. */
    {"-m", "0", "rank 0: bad value for -m: 0"},
    {"-n", "1099511627777", "rank 0: bad value for -n: 1099511627777"},
    {"-k", "x", "rank 0: bad value for -k: x"},
    {"--repeat", "100001", "rank 0: bad value for --repeat: 100001"},
    {"-m", NULL, "rank 0: a value is missing after -m"},
    {"-n", NULL, "rank 0: a value is missing after -n"},
    {"-k", NULL, "rank 0: a value is missing after -k"},
    {"--repeat", NULL, "rank 0: a value is missing after --repeat"},
    {"--transa", "x", "rank 0: unexpected argument x"},
};

/* Each as a singleton (one rank without mpirun, under the same timeout):
 * the parser's words are the subject here, and the cases on more ranks
 * above check that one rank's error stops them all; without mpirun's
 * start a case takes about a third less time. Under the sanitizers, the
 * first six (an unknown option, bad values, a missing value, a stray
 * argument: each way the command line is refused) to shorten CI's
 * sanitizer stage: the value parsers run under ASan in tools/fuzz
 * (fuzz_args) and test_tools, every option's words in the plain build. */
#if defined(__SANITIZE_ADDRESS__)
enum { cli_cases = 6 };
#else
enum { cli_cases = (int)(sizeof cli / sizeof *cli) };
#endif

START_TEST(command_line_errors_say_what_is_wrong) {
  char *argv[] = {
      timeout, "-k",
      "5",     JOB_LIMIT_S,
      inpa,    RUN_ARGS((char *)cli[_i].arg, (char *)cli[_i].value, )};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_int_eq(r.status, 2);
  check_one_line_error(&r, cli[_i].want);
  tool_run_free(&r);
}
END_TEST

/* A repeated option: the last one wins, as in the other tools. */
START_TEST(the_last_of_a_repeated_option_wins) {
  tool_run_t r;
  run_inpa(1, &r, "--platform", DATA "nothere.json", "--platform",
           DATA "sim0.json", "--size", "512", "--size", "1024", "--block", "32",
           "--block", "64", "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 1, 1024, 64);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(version_on_every_rank) {
  tool_run_t r;
  run_inpa(2, &r, "--version", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_msg(!strncmp(r.out, "mlsba-inpa (libmlsba) ", 22) &&
                    count_lines(r.out) == 1,
                "%s", r.out);
  tool_run_free(&r);
}
END_TEST

/* ---- device names ------------------------------------------------------ */

/* 62 bytes of "a" then an "e" with an acute accent (2 bytes in UTF-8):
 * the 64-byte name field cut it in two, json_pack refused the invalid
 * string and the device vanished from the report (its rank's columns no
 * longer summed to its width); a newline in a name forged a table line. */
#define LONG_NAME                                                              \
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9-gpu"

START_TEST(device_names_reach_the_report_whole) {
  int np = rank_counts[_i];
  char path[64];
  write_platform(path, "{\"devices\": ["
                       "{\"name\": \"" LONG_NAME "\", \"type\": \"sim\", "
                       "\"speed\": [[1, 300.0], [4096, 1000.0]]},"
                       "{\"name\": \"core\\nforged 0 0 0\", \"type\": \"sim\", "
                       "\"speed\": [[1, 300.0], [4096, 900.0]]}]}");
  tool_run_t r;
  run_inpa(np, &r, "--platform", path, "--size", "1024", "--block", "64",
           "--json", "-", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, np, 1024, 64);
  json_t *rk = json_array_get(json_object_get(j, "ranks"), (size_t)np - 1);
  json_t *devs = json_object_get(rk, "devices");
  ck_assert_uint_eq(json_array_size(devs), 2);
  ck_assert_str_eq(
      json_string_value(json_object_get(json_array_get(devs, 0), "name")),
      LONG_NAME);
  ck_assert_str_eq(
      json_string_value(json_object_get(json_array_get(devs, 1), "name")),
      "core\nforged 0 0 0");
  json_decref(j);
  tool_run_free(&r);
  /* The table: the newline written as \x0a, no line of its own. */
  run_inpa(np, &r, "--platform", path, "--size", "1024", "--block", "64", NULL);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_msg(strstr(r.out, "core\\x0aforged") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "\nforged") == NULL, "%s", r.out);
  ck_assert(strstr(r.out, LONG_NAME) != NULL);
  tool_run_free(&r);
  unlink(path);
}
END_TEST

/* ---- a node's memory limit -------------------------------------------- */

/* Rank 0's one device holds 300 blocks (259 for the head: a column lost
 * to whole columns, a side of C to the arrangement's rounding), the
 * others have no limit; C has 40 x 40 blocks. The even first split gave
 * rank 0 more than it holds (800 of 1600 on two ranks) and the whole job
 * stopped though a valid split exists; now no distribution exceeds it.
 * Alone, rank 0 cannot hold C: refused at once, in words. */
START_TEST(no_distribution_exceeds_a_nodes_capacity) {
  int np = rank_counts[_i];
  char dir[] = "/tmp/mlsba-test-caps-XXXXXX", pattern[64], path[64];
  ck_assert(mkdtemp(dir) != NULL);
  for (int r = 0; r < np; r++) {
    snprintf(path, sizeof path, "%s/p%d.json", dir, r);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fprintf(f,
            "{\"devices\": [{\"name\": \"d\", \"type\": \"sim\", "
            "\"speed\": [[1, %s]]%s}]}\n",
            r == 0 ? "900.0" : "200.0", r == 0 ? ", \"max_load\": 300" : "");
    fclose(f);
  }
  snprintf(pattern, sizeof pattern, "%s/p%%r.json", dir);
  tool_run_t r;
  run_inpa(np, &r, "--platform", pattern, "--size", "2560", "--block", "64",
           "--json", "-", NULL);
  if (np == 1) {
    check_one_line_error(&r, "rank 0: inpa: the nodes hold 259 blocks "
                             "together, C has 1600");
  } else {
    ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
    json_t *j = parse(r.out);
    check_report(j, np, 2560, 64);
    json_t *h;
    size_t k;
    json_array_foreach(json_object_get(j, "history"), k, h) {
      json_int_t w0 =
          json_integer_value(json_array_get(json_object_get(h, "w"), 0));
      ck_assert_msg(w0 <= 300, "run %zu gave rank 0 %lld blocks", k + 1,
                    (long long)w0);
    }
    json_decref(j);
  }
  tool_run_free(&r);
  for (int k = 0; k < np; k++) {
    snprintf(path, sizeof path, "%s/p%d.json", dir, k);
    unlink(path);
  }
  rmdir(dir);
}
END_TEST

/* ---- sizes the layer cannot run --------------------------------------- */

/* Refused before the first run with the reason, on every rank count: a
 * size past what an MPI count and int64 products index (before: 3.7e21
 * GFLOPS and status 0), and products whose memory no host has (before:
 * ranks killed by the kernel partway through): a real node's A', B', C'
 * at N = 2^20 (24 TiB), a simulated node's panels at N = 2^24, b = 2^14
 * (which outside SMPI are real bytes). */
START_TEST(sizes_that_cannot_run_are_refused_up_front) {
  int np = rank_counts[_i];
  static const struct {
    const char *platform, *size, *block, *want;
  } big[] = {
      {DATA "sim0.json", "1099511627776", "1073741824",
       "rank 0: size 1099511627776 is above 2147483647"},
      {DATA "cpu0.json", "1048576", "4096",
       "rank 0: the product at the even distribution needs "},
      {DATA "sim0.json", "16777216", "16384",
       "rank 0: the product at the even distribution needs "},
  };
  for (size_t k = 0; k < sizeof big / sizeof *big; k++) {
    tool_run_t r;
    run_inpa(np, &r, "--platform", big[k].platform, "--size", big[k].size,
             "--block", big[k].block, NULL);
    check_one_line_error(&r, big[k].want);
    ck_assert_int_eq(r.status, 1);
    ck_assert(k == 0 || strstr(r.err, "GiB of memory") != NULL);
    tool_run_free(&r);
  }
}
END_TEST

/* ---- outputs that cannot be written ----------------------------------- */

/* A shell line of mlsba-inpa as a singleton (one rank without mpirun), so
 * that its own stdout is what the line redirects. */
static void run_singleton(const char *redirect, tool_run_t *r, ...) {
  char line[2048];
  int n = snprintf(line, sizeof line, "exec %s -k 5 %s %s", timeout,
                   JOB_LIMIT_S, inpa);
  va_list ap;
  va_start(ap, r);
  for (const char *a; (a = va_arg(ap, const char *)) != NULL;)
    n += snprintf(line + n, sizeof line - (size_t)n, " '%s'", a);
  va_end(ap);
  snprintf(line + n, sizeof line - (size_t)n, " %s", redirect);
  char *argv[] = {"/bin/sh", "-c", line, NULL};
  run_tool(argv, r);
}

/* The table or the report to a full disk: status 1 and a line saying so
 * (before: status 0). */
START_TEST(output_to_a_full_disk_fails) {
  tool_run_t r;
  run_singleton(">/dev/full", &r, RUN_ARGS());
  ck_assert_msg(r.exited && r.status == 1, "status %d: %s", r.status, r.err);
  ck_assert(strstr(r.err, "cannot write the output") != NULL);
  tool_run_free(&r);
  run_singleton("", &r, RUN_ARGS("--quiet", "--json", "/dev/full", ));
  ck_assert_msg(r.exited && r.status == 1, "status %d: %s", r.status, r.err);
  ck_assert(strstr(r.err, "--json: /dev/full: cannot write: No space left"));
  tool_run_free(&r);
}
END_TEST

/* A FIFO as --json is refused before the run, on every rank (before: rank
 * 0 blocked opening it after the run while the others spun). */
START_TEST(json_to_a_fifo_is_refused_up_front) {
  char fifo[] = "/tmp/mlsba-test-fifo-XXXXXX";
  ck_assert(mkdtemp(fifo) != NULL);
  char path[64];
  snprintf(path, sizeof path, "%s/report", fifo);
  ck_assert(mkfifo(path, 0600) == 0);
  tool_run_t r;
  run_inpa(2, &r, RUN_ARGS("--json", path, ));
  char want[128];
  snprintf(want, sizeof want, "rank 0: --json: not a regular file: %s", path);
  check_one_line_error(&r, want);
  ck_assert_int_eq(r.status, 2);
  tool_run_free(&r);
  unlink(path);
  rmdir(fifo);
}
END_TEST

/* One rank's node alone (no mpirun), as the product drives it, with
 * small integers in A_(b), B_(b) and a C' that does not start at zero, so
 * every sum is exact: after balancing (C' is scratch then) and C' reset,
 * s steps must leave C' = C0 + s A_(b) B_(b) exactly in every column,
 * those the OpenCL device kept too, once they are given back by a flush
 * or a new shape. Resident beside a core; and streamed, alone under
 * mem_limit_mb 1 (A_(b) 256 KiB and 4.5 KiB a column: 170 of 512 fit). */
static const struct {
  const char *platform;
  int64_t bm, bn;
} node_cases[] = {{DATA "pocl0.json", 256, 384},
                  {DATA "pocl-1mb0.json", 512, 512}};

static void fill_small_integers(double *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (double)((int)(seed >> 16) % 9 - 4);
  }
}

/* Whether c = c0 + s a b (bm x b times b x bn), exactly. */
static int64_t wrong_elements(const double *c, const double *c0,
                              const double *a, const double *b, int64_t bm,
                              int64_t bn, int64_t k, int s) {
  int64_t wrong = 0;
  for (int64_t j = 0; j < bn; j++)
    for (int64_t i = 0; i < bm; i++) {
      double sum = 0;
      for (int64_t p = 0; p < k; p++)
        sum += a[p * bm + i] * b[j * k + p];
      wrong += c[j * bm + i] != c0[j * bm + i] + s * sum;
    }
  return wrong;
}

/* A node of a platform file, balanced on integer operands (bm x k times
 * k x bn), with C' reset to C0 after the balancing, its OpenCL device
 * (the last device of these files) holding columns. */
typedef struct {
  mlsba__mpi_node_t *nd;
  int64_t bm, bn, k;
  double *a, *b, *c, *c0;
} node_run_t;

static void node_run_open(node_run_t *x, const char *platform, int64_t bm,
                          int64_t bn) {
  int64_t k = 64;
  *x = (node_run_t){.bm = bm, .bn = bn, .k = k};
  mlsba_mpi_opts_t o; /* what the node reads of them */
  memset(&o, 0, sizeof o);
  o.precision = MLSBA_PRECISION_DOUBLE;
  o.node_algorithm = MLSBA_MPI_NODE_MLSBA;
  o.block = k;
  o.keep_shared = 1;
  o.eps = 0.2;
  o.max_iter = 6;
  ck_assert_msg(mlsba__mpi_node_open(platform, &o, &x->nd) == 0, "%s",
                mlsba_last_error());
  x->a = malloc((size_t)(bm * k) * sizeof *x->a);
  x->b = malloc((size_t)(k * bn) * sizeof *x->b);
  x->c = malloc((size_t)(bm * bn) * sizeof *x->c);
  x->c0 = malloc((size_t)(bm * bn) * sizeof *x->c0);
  fill_small_integers(x->a, (size_t)(bm * k), 1);
  fill_small_integers(x->b, (size_t)(k * bn), 2);
  fill_small_integers(x->c0, (size_t)(bm * bn), 3);
  double t;
  ck_assert_msg(mlsba__mpi_node_shape(x->nd, bm, bn, x->a, x->b, x->c) == 0 &&
                    mlsba__mpi_node_balance(x->nd, MLSBA_MPI_INPA, &t) == 0,
                "%s", mlsba_last_error());
  int64_t cols;
  mlsba__mpi_node_device(x->nd, mlsba__mpi_node_num_devices(x->nd) - 1, &cols,
                         &t);
  ck_assert_msg(cols > 0, "the OpenCL device got no columns");
  memcpy(x->c, x->c0, (size_t)(bm * bn) * sizeof *x->c);
}

/* Elements of C' that are not C0 + s A_(b) B_(b). */
static int64_t node_run_wrong(const node_run_t *x, int s) {
  return wrong_elements(x->c, x->c0, x->a, x->b, x->bm, x->bn, x->k, s);
}

static void node_run_close(node_run_t *x) {
  mlsba__mpi_node_close(x->nd);
  free(x->a);
  free(x->b);
  free(x->c);
  free(x->c0);
}

START_TEST(node_gives_back_the_columns_its_accelerator_kept) {
  if (skipped_without_opencl(__func__))
    return;
  node_run_t x;
  node_run_open(&x, node_cases[_i].platform, node_cases[_i].bm,
                node_cases[_i].bn);
  double t;
  for (int s = 1; s <= 3; s++) {
    ck_assert_msg(mlsba__mpi_node_step(x.nd, &t) == 0, "%s",
                  mlsba_last_error());
    if (s == 2) { /* the product's end */
      ck_assert_int_eq(mlsba__mpi_node_flush(x.nd), 0);
      ck_assert_int_eq(node_run_wrong(&x, 2), 0);
    }
  }
  /* A new shape gives back what the third step left on the device. */
  double one = 0;
  ck_assert_int_eq(mlsba__mpi_node_shape(x.nd, 1, 1, &one, &one, &one), 0);
  ck_assert_int_eq(node_run_wrong(&x, 3), 0);
  node_run_close(&x);
}
END_TEST

#ifdef MLSBA_HAVE_OPENCL
#include "devices/device.h" /* the test-only fault injection hook */
#include "mlsba/opencl.h"

/* An OpenCL failure (injected through the backend's test hook) when the
 * device would take its slice of C': the step fails as MLSBA_EDEVMEM
 * naming the device; the next step takes the slice itself, and C' comes
 * out right. */
START_TEST(node_reports_a_failed_accelerator_and_goes_on) {
  if (skipped_without_opencl(__func__))
    return;
  node_run_t x;
  node_run_open(&x, DATA "pocl0.json", 256, 384);
  double t;
  mlsba__opencl_inject_fault(1, CL_OUT_OF_RESOURCES);
  int err = mlsba__mpi_node_step(x.nd, &t);
  mlsba__opencl_inject_fault(0, 0);
  ck_assert_int_eq(err, MLSBA_EDEVMEM);
  ck_assert_msg(strstr(mlsba_last_error(), "ocl0") != NULL, "%s",
                mlsba_last_error());
  ck_assert_msg(mlsba__mpi_node_step(x.nd, &t) == 0, "%s", mlsba_last_error());
  ck_assert_int_eq(mlsba__mpi_node_flush(x.nd), 0);
  ck_assert_int_eq(node_run_wrong(&x, 1), 0);
  node_run_close(&x);
}
END_TEST
#endif

#ifdef MLSBA_INPA_SMPI_BIN
/* mlsba-inpa-smpi under smpirun on np simulated ranks; speed is a
 * --cfg=smpi/host-speed:... or "" for none. */
static void run_smpi(int np, const char *speed, const char *platform,
                     tool_run_t *r) {
  char smpirun[] = MLSBA_SMPIRUN, bin[] = MLSBA_INPA_SMPI_BIN, npbuf[16];
  snprintf(npbuf, sizeof npbuf, "%d", np);
  char *argv[] = {timeout,
                  "-k",
                  "5",
                  JOB_LIMIT_S,
                  smpirun,
                  "-np",
                  npbuf,
                  "-platform",
                  DATA "smpi.xml",
                  "-hostfile",
                  DATA "smpi.hosts",
                  "--cfg=smpi/simulate-computation:no",
                  "--cfg=smpi/privatization:no",
                  "--cfg=smpi/coll-selector:ompi",
                  "--cfg=smpi/bcast:binomial_tree",
                  "--cfg=network/solver:fairbottleneck",
                  "--log=root.thres:warning",
                  bin,
                  "--platform",
                  (char *)platform,
                  "--size",
                  "2048",
                  "--block",
                  "64",
                  "--json",
                  "-",
                  *speed ? (char *)speed : NULL,
                  NULL};
  run_tool(argv, r);
}
#endif

START_TEST(smpi_run_of_the_smpicc_build) {
#ifdef MLSBA_INPA_SMPI_BIN
  tool_run_t r;
  run_smpi(4, "--cfg=smpi/host-speed:10Gf", DATA "sim%r.json", &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse(r.out);
  check_report(j, 4, 2048, 64);
  ck_assert(json_is_true(json_object_get(j, "converged")));
  /* SimGrid's network: 2048 x 64 doubles per panel over 10 Gbps links
   * takes time, and the ranks wait for each other. */
  ck_assert(num_of(j, "comm_share") > 0);
  json_decref(j);
  tool_run_free(&r);
#endif
}
END_TEST

/* The devices' virtual time is charged as the seconds their models give,
 * whatever smpi/host-speed says (before: smpi_execute scaled it by that
 * flag over the hosts' 10 Gf, a product 580 times faster without it, 10
 * times slower at 1 Gf, each rank's own time unchanged): the product is
 * never shorter than a rank's compute time. */
START_TEST(smpi_times_do_not_depend_on_the_host_speed_flag) {
#ifdef MLSBA_INPA_SMPI_BIN
  const char *flags[3] = {"--cfg=smpi/host-speed:10Gf",
                          "--cfg=smpi/host-speed:1Gf", ""};
  double makespan[3];
  for (int k = 0; k < 3; k++) {
    tool_run_t r;
    run_smpi(4, flags[k], DATA "sim%r.json", &r);
    ck_assert_msg(r.exited && r.status == 0, "%s: status %d: %s", flags[k],
                  r.status, r.err);
    json_t *j = parse(r.out);
    makespan[k] = num_of(j, "makespan_s");
    json_t *rk;
    size_t i;
    json_array_foreach(json_object_get(j, "ranks"), i, rk) {
      ck_assert_msg(num_of(rk, "time") <= makespan[k] * (1 + 1e-9),
                    "%s: rank %zu computes %g s in a %g s product", flags[k], i,
                    num_of(rk, "time"), makespan[k]);
    }
    json_decref(j);
    tool_run_free(&r);
  }
  ck_assert_double_eq_tol(makespan[1], makespan[0], 1e-9 * makespan[0]);
  ck_assert_double_eq_tol(makespan[2], makespan[0], 1e-9 * makespan[0]);
#endif
}
END_TEST

/* Simulated ranks share one process: a failing rank's message must be its
 * own, not one another rank wrote into a shared buffer meanwhile (ranks
 * 4 and 5 both lack their files; the first is named, with its file). */
START_TEST(smpi_error_names_the_failing_ranks_own_file) {
#ifdef MLSBA_INPA_SMPI_BIN
  tool_run_t r;
  run_smpi(6, "", DATA "sim%r.json", &r);
  check_one_line_error(&r, "rank 4: " DATA "sim4.json: cannot open");
  tool_run_free(&r);
#endif
}
END_TEST

/* White-box, as the one rank of `mpirun -np 1 test_mpi
 * --product-without-memory`: a product of 2^46 steps (an inner size of
 * 2^46 in blocks of 1), whose plan (a column per step) cannot be
 * allocated, fails as
 * MLSBA_ENOMEM and frees what it holds once. Prints the error. */
/* A step must follow a balancing of its shape: balancing there would run
 * trial distributions on the caller's C' and leave their sums in it. */
START_TEST(node_step_before_balancing_is_refused) {
  mlsba_mpi_opts_t o;
  memset(&o, 0, sizeof o);
  o.precision = MLSBA_PRECISION_DOUBLE;
  o.block = 2;
  o.eps = 0.2;
  o.max_iter = 2;
  mlsba__mpi_node_t *nd = NULL;
  ck_assert_msg(mlsba__mpi_node_open(DATA "cpu0.json", &o, &nd) == 0, "%s",
                mlsba_last_error());
  double a[8] = {1, 1, 1, 1, 1, 1, 1, 1}, b[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  double c[16] = {0}, t = -1;
  ck_assert_int_eq(mlsba__mpi_node_shape(nd, 4, 4, a, b, c), 0);
  ck_assert_int_eq(mlsba__mpi_node_step(nd, &t), MLSBA_EINVAL);
  ck_assert_msg(strstr(mlsba_last_error(), "balanced") != NULL, "%s",
                mlsba_last_error());
  for (int i = 0; i < 16; i++)
    ck_assert(c[i] == 0);
  mlsba__mpi_node_close(nd);
}
END_TEST

/* Valid in blocks, rescaled to columns of a thin C' (bm = b = 2^20: a
 * column is 2^-20 of a block): a max_load of 2^53 blocks (the largest a
 * file may give) is 2^73 columns, whose cast to int64 was undefined (a
 * negative limit the file never had), and is now no limit; a speed of
 * 1e29 blocks/s is 1e35 columns/s, past a model's 1e30, and is refused
 * naming the rescaling. */
START_TEST(node_rescales_its_profiles_within_bounds) {
  static const char *const text[2] = {
      "{\"devices\": [{\"name\": \"g\", \"type\": \"sim\", \"speed\": "
      "[[1, 200.0]], \"max_load\": 9007199254740992}]}",
      "{\"devices\": [{\"name\": \"g\", \"type\": \"sim\", \"speed\": "
      "[[1, 1e29]]}]}"};
  for (int k = 0; k < 2; k++) {
    char path[64];
    write_platform(path, text[k]);
    mlsba_mpi_opts_t o; /* what the node reads of them */
    memset(&o, 0, sizeof o);
    o.precision = MLSBA_PRECISION_DOUBLE;
    o.block = 1 << 20;
    o.eps = 0.05;
    o.max_iter = 2;
    mlsba__mpi_node_t *nd = NULL;
    ck_assert_msg(mlsba__mpi_node_open(path, &o, &nd) == 0, "%s",
                  mlsba_last_error());
    int err = mlsba__mpi_node_shape(nd, 1 << 20, 1 << 20, NULL, NULL, NULL);
    if (k == 0) {
      ck_assert_msg(err == 0, "%s", mlsba_last_error());
    } else {
      ck_assert_int_ne(err, 0);
      ck_assert_msg(strstr(mlsba_last_error(), "in columns of this rank's "
                                               "1048576-tall C'") != NULL,
                    "%s", mlsba_last_error());
    }
    mlsba__mpi_node_close(nd);
    unlink(path);
  }
}
END_TEST

/* A rank reads its platform file once (before, a simulated node read it
 * again with a bare json_load_file: a file replaced in between gave the
 * two parses different texts, a heap over-read). Counted with strace on
 * a one-rank run; skipped where strace is not installed. */
START_TEST(a_rank_opens_its_platform_file_once) {
  if (access("/usr/bin/strace", X_OK) != 0) {
    printf("%s: skipped: no /usr/bin/strace\n", __func__);
    return;
  }
  char log[] = "/tmp/mlsba-test-strace-XXXXXX";
  int fd = mkstemp(log);
  ck_assert(fd >= 0);
  close(fd);
  char *argv[] = {
      timeout, "-k",      "5",          JOB_LIMIT_S,         "/usr/bin/strace",
      "-f",    "-qq",     "-e",         "trace=open,openat", "-o",
      log,     inpa,      "--platform", DATA "sim0.json",    "--size",
      "1024",  "--block", "64",         "--quiet",           NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  tool_run_free(&r);
  FILE *f = fopen(log, "r");
  ck_assert(f != NULL);
  char line[4096];
  int opens = 0;
  while (fgets(line, sizeof line, f))
    opens += strstr(line, "mpi/sim0.json\"") != NULL;
  fclose(f);
  unlink(log);
  ck_assert_int_eq(opens, 1);
}
END_TEST

static int product_without_memory(void) {
  MPI_Init(NULL, NULL);
  mlsba_mpi_opts_t o; /* what the node reads of them */
  memset(&o, 0, sizeof o);
  o.precision = MLSBA_PRECISION_DOUBLE;
  o.block = 1;
  o.eps = 0.2;
  o.max_iter = 2;
  mlsba__mpi_node_t *nd = NULL;
  /* A simulated node: one rank of real cores runs the whole product as
   * one step, without a plan. */
  int err = mlsba__mpi_node_open(DATA "sim1.json", &o, &nd);
  if (!err) {
    int64_t steps = (int64_t)1 << 46;
    mlsba__mpi_part_t part = {0, 1, 0, 1, 0, steps, 0, steps};
    mlsba__mpi_layout_t lay = {1, 1, 1, steps, 1, &part};
    double a = 1, b = 1, c = 0;
    mlsba__mpi_product_stats_t st;
    err = mlsba__mpi_product(MPI_COMM_WORLD, &lay, nd, o.precision, &a, &b, &c,
                             &st);
  }
  printf("%d %s\n", err, err ? mlsba_last_error() : "");
  mlsba__mpi_node_close(nd);
  MPI_Finalize();
  return 0;
}

/* White-box, as the one rank of `mpirun -np 1 test_mpi --bad-arguments`:
 * the public calls refuse what they cannot use (before:
 * mlsba_mpi_algo_from_name stored through NULL, MPI_COMM_NULL aborted the
 * job through MPI's default error handler). Prints both codes. */
static int bad_arguments(void) {
  MPI_Init(NULL, NULL);
  int a = mlsba_mpi_algo_from_name("inpa", NULL);
  mlsba_mpi_opts_t o;
  mlsba_mpi_opts_init(&o);
  o.platform = DATA "sim0.json";
  o.n = 1024;
  o.block = 64;
  mlsba_mpi_result_t res;
  int c = mlsba_mpi_multiply(MPI_COMM_NULL, &o, &res);
  printf("%d %d %s\n", a, c, mlsba_mpi_last_error());
  MPI_Finalize();
  return 0;
}

START_TEST(public_calls_refuse_null_arguments) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert(len > 0);
  self[len] = '\0';
  char *argv[] = {
      timeout,     "-k",   "5",  JOB_LIMIT_S,       mpirun, "-np", "1",
      "--bind-to", "none", self, "--bad-arguments", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s%s", r.status, r.out,
                r.err);
  char want[64];
  snprintf(want, sizeof want, "%d %d ", MLSBA_EINVAL, MLSBA_EINVAL);
  ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0 &&
                    strstr(r.out, "MPI_COMM_NULL"),
                "%s", r.out);
  tool_run_free(&r);
}
END_TEST

START_TEST(product_without_memory_for_its_plan_fails_cleanly) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert(len > 0);
  self[len] = '\0';
  /* Under ASan, an allocation beyond its limit returns NULL as malloc
   * does, instead of stopping the rank. */
  const char *asan = getenv("ASAN_OPTIONS");
  char opts[600];
  snprintf(opts, sizeof opts, "%s%sallocator_may_return_null=1",
           asan ? asan : "", asan && *asan ? ":" : "");
  setenv("ASAN_OPTIONS", opts, 1);
  char *argv[] = {
      mpirun, "-np", "1", "--bind-to", "none", self, "--product-without-memory",
      NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s%s", r.status, r.out,
                r.err);
  char want[64];
  snprintf(want, sizeof want, "%d ", MLSBA_ENOMEM);
  ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0 &&
                    strstr(r.out, "out of memory"),
                "%s", r.out);
  tool_run_free(&r);
}
END_TEST

static Suite *mpi_suite(void) {
  Suite *s = suite_create("mpi");
  TCase *tc = tcase_create("mlsba-inpa");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, simulated_nodes_converge);
  tcase_add_test(tc, links_from_the_platform_files_are_in_the_models);
  tcase_add_test(tc, links_are_measured_where_the_files_give_none);
  tcase_add_test(tc, ranks_measure_their_links_by_ping_pong);
  tcase_add_test(tc, homogeneous_baseline_stays_uneven);
  tcase_add_test(tc, product_runs_the_fastest_distribution_measured);
  tcase_add_test(tc, real_cores_verify);
  tcase_add_test(tc, a_panel_relayed_over_four_columns_verifies);
  tcase_add_test(tc, node_step_before_balancing_is_refused);
  tcase_add_test(tc, node_rescales_its_profiles_within_bounds);
  tcase_add_test(tc, a_rank_opens_its_platform_file_once);
  tcase_add_loop_test(tc, an_error_on_any_rank_stops_all, 0,
                      (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, product_without_memory_for_its_plan_fails_cleanly);
  tcase_add_test(tc, public_calls_refuse_null_arguments);
  suite_add_tcase(s, tc);
  /* Oversubscribed jobs of up to 8 ranks on a busy machine. */
  tc = tcase_create("agreement");
  tcase_set_timeout(tc, 90);
  int counts = (int)(sizeof rank_counts / sizeof *rank_counts);
  tcase_add_loop_test(tc, usage_error_on_one_rank_stops_all, 0, counts);
  tcase_add_loop_test(tc, help_on_one_rank_only_stops_all, 0, counts);
  tcase_add_loop_test(tc, options_differing_on_one_rank_stop_all, 0,
                      (int)(sizeof differ / sizeof *differ));
  tcase_add_loop_test(tc, command_line_errors_say_what_is_wrong, 0, cli_cases);
  tcase_add_test(tc, version_on_every_rank);
  tcase_add_test(tc, the_last_of_a_repeated_option_wins);
  tcase_add_loop_test(tc, device_names_reach_the_report_whole, 0, counts);
  tcase_add_loop_test(tc, no_distribution_exceeds_a_nodes_capacity, 0, counts);
  tcase_add_loop_test(tc, sizes_that_cannot_run_are_refused_up_front, 0,
                      counts);
  tcase_add_test(tc, output_to_a_full_disk_fails);
  tcase_add_test(tc, json_to_a_fifo_is_refused_up_front);
  suite_add_tcase(s, tc);
  /* pocl builds CLBlast's kernels on first use: seconds, tens of seconds
   * with an empty kernel cache. */
  tc = tcase_create("opencl");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, core_and_opencl_device_verify);
  tcase_add_test(tc, opencl_device_streams_what_does_not_fit);
  tcase_add_test(tc, opencl_device_without_room_stops_the_run);
  tcase_add_loop_test(tc, node_gives_back_the_columns_its_accelerator_kept, 0,
                      (int)(sizeof node_cases / sizeof node_cases[0]));
#ifdef MLSBA_HAVE_OPENCL
  tcase_add_test(tc, node_reports_a_failed_accelerator_and_goes_on);
#endif
  suite_add_tcase(s, tc);
  tc = tcase_create("smpi");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, smpi_run_of_the_smpicc_build);
  tcase_add_test(tc, smpi_times_do_not_depend_on_the_host_speed_flag);
  tcase_add_test(tc, smpi_error_names_the_failing_ranks_own_file);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--product-without-memory"))
    return product_without_memory();
  if (argc == 2 && !strcmp(argv[1], "--bad-arguments"))
    return bad_arguments();
  /* Open MPI as root (CI runs as root); the ranks without the leak
   * check under the sanitizers (this process keeps it). */
  mpi_job_environment();
#ifndef MLSBA_INPA_SMPI_BIN
  printf("smpi: skipped: mlsba-inpa-smpi not built (no smpicc, Debian: "
         "libsimgrid-dev; or a sanitizer build)\n");
#endif
  /* The OpenCL cases run as their own test (mpi_opencl: CK_RUN_CASE),
   * skipped as test_opencl is when there is no device. */
  const char *only = getenv("CK_RUN_CASE");
  if (only && !strcmp(only, "opencl") && !have_opencl_device()) {
    printf("no OpenCL device: skipped\n");
    return 77;
  }
  return run_suite(mpi_suite());
}
