/* bench-kernels: how close the cores run to the best GEMM this machine
 * offers. For each precision and size, in interleaved rounds (medians):
 *
 *   one core   BLIS's own kernels, libmlsba's chosen kernels and OpenBLAS
 *              (its core type for this CPU), one thread each, against a
 *              core device of the platform computing the whole product
 *              through the executor (pinned, as in every balanced run);
 *   all cores  BLIS (chosen kernels) and OpenBLAS on one thread per core,
 *              against libmlsba balancing the product over the platform
 *              (the routine once, then its final distribution each round).
 *
 *   bench-kernels [--size N]... [-m M] [-k K] [--precision single|double]...
 *                 [--rounds R] [--platform auto|FILE] [--json FILE]
 *   bench-kernels --classes [--precision single|double]... [--rounds R]
 *                 [--json FILE]
 *   bench-kernels --sets [--size N]... [-m M] [-k K] [--shape M,N,K]...
 *                 [--precision single|double]... [--rounds R]
 *
 * --sets: every kernel set the choice weighs on one product C = A B of
 * m x N x k, or of each --shape M,N,K (one thread, held on its core, timed
 * by the thread's CPU time as the choice is), interleaved rounds in order
 * and in reverse after a warm-up round: the best round and the median of
 * each, and each median over the first set's. The shapes a class's
 * timing stands for (a core's block of a product, the MPI node's) are
 * measured so against the timing shape.
 *
 * --classes: every kernel set libmlsba weighs (BLIS's sub-configurations
 * this CPU runs, its private OpenBLAS) on each shape class's timing shape,
 * one thread, interleaved rounds (an odd R runs R + 1: whole pairs, one
 * round in each order): the best round and the median of each, and the
 * set the library chose for the class (docs/cpu-kernels.md).
 *
 * --size N is the product's n (and m and k unless -m / -k give them: the
 * MPI node kernel's shape is m x n x b, for instance).
 *
 * Prints a table per precision and size with every row's GFLOPS and the
 * ratios the targets are stated in: the core device over the best single
 * thread, libmlsba over the best multithreaded BLAS. */
#define _GNU_SOURCE /* sched_getcpu, CPU_SET */
#include <blis.h>
#include <inttypes.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/timing.h"
#include "devices/cpu/cpu_blas.h"
#include "devices/cpu/cpu_kernels.h"
#include "gemm_fill.h"
#include "mlsba.h"
#include "mlsba_bench/openblas.h"

enum { MAX_SIZES = 8, MAX_ROWS = 8 };

typedef struct {
  int64_t sizes[MAX_SIZES];
  size_t nsizes;
  int precisions[2];
  size_t nprec;
  int rounds;
  int64_t m, k; /* 0: the size */
  const char *platform, *json;
  int classes; /* --classes: the shape classes' table instead */
  int sets;    /* --sets: every kernel set on the given products */
  int64_t shape[MAX_SIZES][3]; /* --shape M,N,K (--sets) */
  size_t nshapes;
} args_t;

typedef struct {
  char name[160];
  double t[64]; /* one per round */
  double gflops;
} row_t;

static int usage(const char *why) {
  fprintf(stderr,
          "bench-kernels: %s\nusage: bench-kernels [--size N]... "
          "[-m M] [-k K] [--precision single|double]... [--rounds R] "
          "[--platform auto|FILE] [--json FILE]\n"
          "       bench-kernels --classes [--precision single|double]... "
          "[--rounds R] [--json FILE]\n"
          "       bench-kernels --sets [--size N]... [-m M] [-k K] "
          "[--shape M,N,K]... [--precision single|double]... [--rounds R]\n",
          why);
  return 2;
}

static int parse(int argc, char **argv, args_t *a) {
  *a = (args_t){.rounds = 5, .platform = "auto"};
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--help")) {
      printf("bench-kernels [--size N]... [-m M] [-k K] [--precision "
             "single|double]... [--rounds R] [--platform auto|FILE] [--json "
             "FILE]\nbench-kernels --classes [--precision single|double]... "
             "[--rounds R] [--json FILE]\nbench-kernels --sets [--size N]... "
             "[-m M] [-k K] [--shape M,N,K]... [--precision single|double]... "
             "[--rounds R]\n");
      exit(0);
    }
    if (!strcmp(argv[i], "--classes")) {
      a->classes = 1;
      continue;
    }
    if (!strcmp(argv[i], "--sets")) {
      a->sets = 1;
      continue;
    }
    if (!v)
      return usage("a value is missing after an option");
    if (!strcmp(argv[i], "--shape") && a->nshapes < MAX_SIZES) {
      int64_t *d = a->shape[a->nshapes++];
      if (sscanf(v, "%" SCNd64 ",%" SCNd64 ",%" SCNd64, &d[0], &d[1], &d[2]) !=
              3 ||
          d[0] < 1 || d[1] < 1 || d[2] < 1 || d[0] > 32768 || d[1] > 32768 ||
          d[2] > 32768)
        return usage("--shape is M,N,K, each 1..32768");
      i++;
      continue;
    }
    if (!strcmp(argv[i], "--size") && a->nsizes < MAX_SIZES) {
      a->sizes[a->nsizes] = strtoll(v, NULL, 10);
      if (a->sizes[a->nsizes] < 1 || a->sizes[a->nsizes] > 32768)
        return usage("--size must be 1..32768");
      a->nsizes++;
    } else if (!strcmp(argv[i], "--precision") && a->nprec < 2) {
      if (strcmp(v, "single") && strcmp(v, "double"))
        return usage("--precision is single or double");
      a->precisions[a->nprec++] = !strcmp(v, "double");
    } else if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "-k")) {
      int64_t *dim = argv[i][1] == 'm' ? &a->m : &a->k;
      *dim = strtoll(v, NULL, 10);
      if (*dim < 1 || *dim > 32768)
        return usage("-m and -k must be 1..32768");
    } else if (!strcmp(argv[i], "--rounds")) {
      a->rounds = atoi(v);
      if (a->rounds < 1 || a->rounds > 64)
        return usage("--rounds must be 1..64");
    } else if (!strcmp(argv[i], "--platform")) {
      a->platform = v;
    } else if (!strcmp(argv[i], "--json")) {
      a->json = v;
    } else {
      return usage("unknown option");
    }
    i++;
  }
  if (a->nsizes == 0) {
    a->sizes[0] = 2048;
    a->sizes[1] = 4096;
    a->nsizes = 2;
  }
  if (a->nprec == 0) {
    a->precisions[0] = 0;
    a->precisions[1] = 1;
    a->nprec = 2;
  }
  return 0;
}

/* ---- what each row runs ------------------------------------------------ */

typedef struct {
  mlsba_gemm_t g;
  mlsba_executor_t *ex;
  size_t p, cores, core0; /* devices, cores, the first core's index */
  int64_t *alone, *balanced;
  double *time;
  int openblas;
} bench_t;

static double run_blis_own(bench_t *B) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  dim_t m = B->g.m, n = B->g.n, k = B->g.k;
  double t0 = timing_now();
  if (B->g.precision == MLSBA_PRECISION_DOUBLE) {
    double one = 1, zero = 0;
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                 (double *)B->g.a, 1, m, (double *)B->g.b, 1, k, &zero,
                 (double *)B->g.c, 1, m, NULL, &rntm);
  } else {
    float one = 1, zero = 0;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                 (float *)B->g.a, 1, m, (float *)B->g.b, 1, k, &zero,
                 (float *)B->g.c, 1, m, NULL, &rntm);
  }
  return timing_now() - t0;
}

static double run_chosen(bench_t *B, unsigned threads) {
  double t0 = timing_now();
  (void)mlsba_gemm_blis(&B->g, threads);
  return timing_now() - t0;
}

static double run_openblas(bench_t *B, unsigned threads) {
  double t0 = timing_now();
  openblas_gemm(&B->g, B->g.n, threads);
  double t = timing_now() - t0;
  nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL); /* its spin */
  return t;
}

/* The executor's makespan for a distribution. */
static double run_distribution(bench_t *B, const int64_t *load) {
  if (mlsba_executor_run_gemm(B->ex, &B->g, load, MLSBA_DRIVE_SHARED,
                              B->time) != 0)
    return -1;
  double t = 0;
  for (size_t j = 0; j < B->p; j++)
    t = B->time[j] > t ? B->time[j] : t;
  return t;
}

/* ---- one precision and size ------------------------------------------- */

static void finish_row(row_t *r, int rounds, double flop) {
  r->gflops = flop / timing_median(r->t, (size_t)rounds) * 1e-9;
}

static int balance(bench_t *B) {
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  mlsba_balance_result_t res;
  memset(&res, 0, sizeof res);
  int err = mlsba_balance_gemm(B->ex, &B->g, &o, &res);
  if (!err)
    memcpy(B->balanced, res.load, B->p * sizeof *B->balanced);
  mlsba_balance_result_free(&res);
  return err;
}

static void print_rows(const char *title, row_t *rows, size_t n) {
  printf("  %s\n", title);
  for (size_t i = 0; i < n; i++)
    printf("    %-62.62s %8.1f\n", rows[i].name, rows[i].gflops);
}

static json_t *rows_json(const row_t *rows, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(a, json_pack("{s:s, s:f}", "name", rows[i].name,
                                       "gflops", rows[i].gflops));
  return a;
}

static double best_of(const row_t *rows, size_t n) {
  double b = 0;
  for (size_t i = 0; i < n; i++)
    b = rows[i].gflops > b ? rows[i].gflops : b;
  return b;
}

static int one_case(bench_t *B, const args_t *a, int prec, int64_t n,
                    json_t *out) {
  size_t s = prec ? sizeof(double) : sizeof(float);
  int64_t m = a->m ? a->m : n, kk = a->k ? a->k : n;
  void *A = malloc((size_t)(m * kk) * s), *Bm = malloc((size_t)(kk * n) * s),
       *C = malloc((size_t)(m * n) * s);
  if (!A || !Bm || !C) {
    free(A), free(Bm), free(C);
    return MLSBA_ENOMEM;
  }
  B->g = (mlsba_gemm_t){.m = m,
                        .n = n,
                        .k = kk,
                        .precision = (mlsba_precision_t)prec,
                        .a = A,
                        .b = Bm,
                        .c = C};
  bench_fill_random(&B->g, 42);
  double flop = 2.0 * (double)m * (double)n * (double)kk;
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  row_t one[4], all[3];
  memset(one, 0, sizeof one);
  memset(all, 0, sizeof all);
  size_t n_one = 0, n_all = 0;
  snprintf(one[n_one++].name, 160, "BLIS's own kernels (%s), 1 thread",
           k.detected);
  snprintf(one[n_one++].name, 160, "libmlsba's kernels (%s), 1 thread",
           prec ? k.double_kernels : k.single_kernels);
  if (B->openblas)
    snprintf(one[n_one++].name, 160, "%s, 1 thread", openblas_label());
  snprintf(all[n_all++].name, 160, "BLIS, libmlsba's kernels, %zu threads",
           B->cores);
  if (B->openblas)
    snprintf(all[n_all++].name, 160, "%s, %zu threads", openblas_label(),
             B->cores);
  row_t device, mlsba;
  memset(&device, 0, sizeof device);
  memset(&mlsba, 0, sizeof mlsba);
  snprintf(device.name, sizeof device.name,
           "core device core0 alone (executor, pinned)");
  snprintf(mlsba.name, sizeof mlsba.name,
           "libmlsba balanced (mlsba, the platform's devices)");
  int err = balance(B);
  for (int r = -1; r < a->rounds && !err; r++) { /* round -1: warm-up */
    double t[4];
    t[0] = run_blis_own(B);
    t[1] = run_chosen(B, 1);
    if (B->openblas)
      t[2] = run_openblas(B, 1);
    double dev = run_distribution(B, B->alone);
    double a0 = run_chosen(B, (unsigned)B->cores);
    double a1 = B->openblas ? run_openblas(B, (unsigned)B->cores) : 0;
    double bal = run_distribution(B, B->balanced);
    if (dev < 0 || bal < 0)
      err = MLSBA_EDEVICE;
    if (r < 0)
      continue;
    for (size_t i = 0; i < n_one; i++)
      one[i].t[r] = t[i];
    device.t[r] = dev;
    all[0].t[r] = a0;
    if (B->openblas)
      all[1].t[r] = a1;
    mlsba.t[r] = bal;
  }
  if (!err) {
    for (size_t i = 0; i < n_one; i++)
      finish_row(&one[i], a->rounds, flop);
    for (size_t i = 0; i < n_all; i++)
      finish_row(&all[i], a->rounds, flop);
    finish_row(&device, a->rounds, flop);
    finish_row(&mlsba, a->rounds, flop);
    double best1 = best_of(one, n_one), bestp = best_of(all, n_all);
    printf("\n%s precision, m = %lld, n = %lld, k = %lld (GFLOPS, median "
           "of %d rounds)\n",
           prec ? "double" : "single", (long long)m, (long long)n,
           (long long)kk, a->rounds);
    print_rows("one thread:", one, n_one);
    print_rows("one core device:", &device, 1);
    printf("    -> %.3f of the best single thread\n", device.gflops / best1);
    print_rows("all cores:", all, n_all);
    print_rows("libmlsba:", &mlsba, 1);
    printf("    -> %.3f of the best multithreaded BLAS\n",
           mlsba.gflops / bestp);
    json_array_append_new(
        out,
        json_pack("{s:s, s:I, s:I, s:I, s:o, s:f, s:f, s:o, s:f, s:f}",
                  "precision", prec ? "double" : "single", "m", (json_int_t)m,
                  "n", (json_int_t)n, "k", (json_int_t)kk, "one_thread",
                  rows_json(one, n_one), "core_device", device.gflops,
                  "core_device_of_best", device.gflops / best1, "all_cores",
                  rows_json(all, n_all), "mlsba", mlsba.gflops, "mlsba_of_best",
                  mlsba.gflops / bestp));
  }
  free(A);
  free(Bm);
  free(C);
  return err;
}

/* ---- --classes ---------------------------------------------------------- */

static const char *const class_shapes[MLSBA__CPU_CLASSES] = {
    "4096 x 256 x 384, C = A B",
    "3072 x 384 x nb, C -= A B (nb 256 single, 192 double)",
    "TRMM + TRSM, 192-triangle on 768, both sides",
    "3072 x w x nb, w = 128, 64, 32, and 3072 x w x w, w = 64, 32, 16"};

enum { MAX_SETS = 16 };

/* One precision's table: every kernel set on every class, interleaved
 * rounds after a warm-up round, each class's sets in order and in
 * reverse on alternate rounds (as the choice runs them), an even count
 * of them (the caller's): a set's speed depends on where it runs in its
 * class, and a median of more rounds in one order than the other leans
 * the way that order does, as the choice's did. */
static json_t *classes_of(mlsba__cpu_timing_t *ws, const int *ids, size_t n,
                          int prec, int rounds) {
  static double t[MLSBA__CPU_CLASSES][MAX_SETS][64];
  double flops[MLSBA__CPU_CLASSES] = {0};
  mlsba_precision_t p = (mlsba_precision_t)prec;
  for (int r = -1; r < rounds; r++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++)
      for (size_t i = 0; i < n; i++) {
        /* In order, then in reverse, as the choice's rounds run them:
         * the call before each is the same one as there. */
        size_t j = (r + 1) % 2 ? n - 1 - i : i;
        double s = mlsba__cpu_class_time(ws, ids[j], p, (mlsba__cpu_class_t)c,
                                         &flops[c], NULL);
        if (r >= 0)
          t[c][j][r] = s;
      }
  json_t *out = json_array();
  printf("\n%s precision, one thread, GFLOPS (best and median of %d "
         "rounds)\n",
         prec ? "double" : "single", rounds);
  for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
    mlsba__cpu_class_t cls = (mlsba__cpu_class_t)c;
    int chosen = mlsba__cpu_kernel_of(p, cls);
    printf("  %s (%s)\n", mlsba__cpu_class_name(cls), class_shapes[c]);
    json_t *cands = json_array();
    for (size_t j = 0; j < n; j++) {
      double best = t[c][j][0];
      for (int r = 1; r < rounds; r++)
        best = t[c][j][r] < best ? t[c][j][r] : best;
      double g_best = flops[c] / best * 1e-9,
             g_med = flops[c] / timing_median(t[c][j], (size_t)rounds) * 1e-9;
      const char *name = mlsba__cpu_kernel_id_name(ids[j]);
      printf("    %-10s %8.1f %8.1f%s\n", name, g_best, g_med,
             ids[j] == chosen ? "   <- chosen" : "");
      json_array_append_new(cands, json_pack("{s:s, s:f, s:f}", "kernels", name,
                                             "best_gflops", g_best,
                                             "median_gflops", g_med));
    }
    json_array_append_new(
        out, json_pack("{s:s, s:s, s:s, s:s, s:o}", "precision",
                       prec ? "double" : "single", "class",
                       mlsba__cpu_class_name(cls), "shape", class_shapes[c],
                       "chosen", mlsba__cpu_kernel_id_name(chosen),
                       "candidates", cands));
  }
  return out;
}

/* What the choice saw when it was timed in this process: per class and
 * precision, each kernel set's rounds (GFLOPS by the thread's CPU time;
 * "-" not run, the first a cold one left out) and their median, then the
 * ratio of OpenBLAS's median to the BLIS set's kept. */
static json_t *choice_rounds(void) {
  json_t *out = json_array();
  for (int prec = 0; prec < 2; prec++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
      enum { R = MLSBA__CPU_TRACE_ROUNDS };
      int ids[MAX_SETS], rounds;
      static double cpu[MAX_SETS * R], wall[MAX_SETS * R];
      mlsba_precision_t p = (mlsba_precision_t)prec;
      mlsba__cpu_class_t cls = (mlsba__cpu_class_t)c;
      size_t n =
          mlsba__cpu_choice_rounds(p, cls, ids, cpu, wall, MAX_SETS, &rounds);
      if (n == 0)
        continue;
      if (c == 0)
        printf("the choice's rounds, %s precision (GFLOPS by the thread's "
               "CPU time; median)\n",
               prec ? "double" : "single");
      json_t *sets = json_array();
      for (size_t j = 0; j < n; j++) {
        printf("  %-8s %-8s", mlsba__cpu_class_name(cls),
               mlsba__cpu_kernel_id_name(ids[j]));
        json_t *rc = json_array(), *rw = json_array();
        for (int r = 0; r < rounds; r++) {
          double g = cpu[j * R + r];
          if (g > 0)
            printf(" %5.1f", g);
          else
            printf("     -");
          json_array_append_new(rc, json_real(g));
          json_array_append_new(rw, json_real(wall[j * R + r]));
        }
        double med = mlsba__cpu_rounds_speed(cpu + j * R, rounds);
        printf("; %.1f\n", med);
        json_array_append_new(
            sets, json_pack("{s:s, s:f, s:o, s:o}", "kernels",
                            mlsba__cpu_kernel_id_name(ids[j]), "median_gflops",
                            med, "cpu_gflops", rc, "wall_gflops", rw));
      }
      json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:o}", "precision",
                                           prec ? "double" : "single", "class",
                                           mlsba__cpu_class_name(cls), "chosen",
                                           mlsba__cpu_kernel_id_name(
                                               mlsba__cpu_kernel_of(p, cls)),
                                           "sets", sets));
    }
  return out;
}

static int classes_table(const args_t *a) {
  double t0 = timing_now();
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  double choice_s = timing_now() - t0;
  printf("cores run: %s\n  (%s)\nthe choice took %.3f s in this process\n",
         k.description, k.reason, choice_s);
  json_t *seen = choice_rounds();
  int ids[MAX_SETS];
  size_t n = mlsba__cpu_kernel_timed(ids, MAX_SETS);
  if (mlsba__cpu_kernel_openblas_why()[0])
    printf("no OpenBLAS row: %s\n", mlsba__cpu_kernel_openblas_why());
  mlsba__cpu_timing_t *ws = mlsba__cpu_timing_create();
  if (ws == NULL) {
    fprintf(stderr, "bench-kernels: out of memory\n");
    return 1;
  }
  /* On one core, as the cores run and as the choice times. */
  cpu_set_t core;
  CPU_ZERO(&core);
  CPU_SET(sched_getcpu() > 0 ? sched_getcpu() : 0, &core);
  (void)sched_setaffinity(0, sizeof core, &core);
  /* Whole pairs of rounds, one in each order (classes_of says why). */
  int rounds = a->rounds + a->rounds % 2;
  if (rounds != a->rounds)
    printf("%d rounds: whole pairs, one round in each order\n", rounds);
  json_t *all = json_array();
  for (size_t i = 0; i < a->nprec; i++) {
    json_t *one = classes_of(ws, ids, n, a->precisions[i], rounds);
    json_array_extend(all, one);
    json_decref(one);
  }
  mlsba__cpu_timing_destroy(ws);
  int err = 0;
  if (a->json) {
    json_t *doc =
        json_pack("{s:s, s:s, s:f, s:o, s:o}", "kernels", k.description,
                  "reason", k.reason, "choice_s", choice_s, "classes",
                  json_incref(all), "choice_rounds", json_incref(seen));
    if (json_dump_file(doc, a->json, JSON_INDENT(1)) != 0) {
      fprintf(stderr, "bench-kernels: cannot write %s\n", a->json);
      err = 1;
    }
    json_decref(doc);
  }
  json_decref(all);
  json_decref(seen);
  return err;
}

/* ---- --sets ------------------------------------------------------------ */

/* The calling thread's CPU time, as the choice times its rounds: what
 * other processes took of the core is left out. */
static double thread_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return timing_now();
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int sets_table(const args_t *a) {
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  printf("cores run: %s\n", k.description);
  int ids[MAX_SETS];
  size_t n = mlsba__cpu_kernel_timed(ids, MAX_SETS);
  cpu_set_t core;
  CPU_ZERO(&core);
  CPU_SET(sched_getcpu() > 0 ? sched_getcpu() : 0, &core);
  (void)sched_setaffinity(0, sizeof core, &core);
  int rounds = a->rounds + a->rounds % 2;
  size_t nsh = a->nshapes ? a->nshapes : a->nsizes;
  for (size_t pi = 0; pi < a->nprec; pi++)
    for (size_t si = 0; si < nsh; si++) {
      int prec = a->precisions[pi];
      int64_t nn = a->nshapes ? a->shape[si][1] : a->sizes[si],
              m = a->nshapes ? a->shape[si][0]
                  : a->m     ? a->m
                             : nn,
              kk = a->nshapes ? a->shape[si][2]
                   : a->k     ? a->k
                              : nn;
      size_t s = prec ? sizeof(double) : sizeof(float);
      mlsba_gemm_t g = {.m = m,
                        .n = nn,
                        .k = kk,
                        .precision = (mlsba_precision_t)prec,
                        .a = malloc((size_t)(m * kk) * s),
                        .b = malloc((size_t)(kk * nn) * s),
                        .c = malloc((size_t)(m * nn) * s)};
      if (!g.a || !g.b || !g.c) {
        free((void *)g.a), free((void *)g.b), free(g.c);
        fprintf(stderr, "bench-kernels: out of memory\n");
        return 1;
      }
      bench_fill_random(&g, 42);
      static double t[MAX_SETS][64];
      for (int r = -1; r < rounds; r++)
        for (size_t i = 0; i < n; i++) {
          size_t j = (r + 1) % 2 ? n - 1 - i : i;
          double t0 = thread_seconds();
          mlsba__cpu_gemm_with(ids[j], g.precision, 'N', 'N', m, nn, kk, 1.0,
                               g.a, m, g.b, kk, 0.0, g.c, m);
          if (r >= 0)
            t[j][r] = thread_seconds() - t0;
        }
      double flop = 2.0 * (double)m * (double)nn * (double)kk, first = 0;
      printf("\n%s precision, m = %lld, n = %lld, k = %lld, one thread "
             "(GFLOPS: best, median of %d rounds; median over the first)\n",
             prec ? "double" : "single", (long long)m, (long long)nn,
             (long long)kk, rounds);
      for (size_t j = 0; j < n; j++) {
        double best = t[j][0];
        for (int r = 1; r < rounds; r++)
          best = t[j][r] < best ? t[j][r] : best;
        double med = flop / timing_median(t[j], (size_t)rounds) * 1e-9;
        first = j == 0 ? med : first;
        printf("  %-10s %8.1f %8.1f %7.3f", mlsba__cpu_kernel_id_name(ids[j]),
               flop / best * 1e-9, med, med / first);
        cntx_t *cx = mlsba__cpu_kernel_context_of(ids[j]);
        num_t dt = prec ? BLIS_DOUBLE : BLIS_FLOAT;
        if (cx) /* a BLIS set's blocking: why it runs a shape as it does */
          printf("   MR %d NR %d MC %d KC %d NC %d",
                 (int)bli_cntx_get_blksz_def_dt(dt, BLIS_MR, cx),
                 (int)bli_cntx_get_blksz_def_dt(dt, BLIS_NR, cx),
                 (int)bli_cntx_get_blksz_def_dt(dt, BLIS_MC, cx),
                 (int)bli_cntx_get_blksz_def_dt(dt, BLIS_KC, cx),
                 (int)bli_cntx_get_blksz_def_dt(dt, BLIS_NC, cx));
        printf("\n");
      }
      free((void *)g.a), free((void *)g.b), free(g.c);
    }
  return 0;
}

int main(int argc, char **argv) {
  args_t a;
  int status = parse(argc, argv, &a);
  if (status)
    return status;
  if (a.classes)
    return classes_table(&a);
  if (a.sets)
    return sets_table(&a);
  bench_t B = {0};
  mlsba_platform_t *pl = NULL;
  int err = strcmp(a.platform, "auto") == 0
                ? mlsba_platform_discover(&pl)
                : mlsba_platform_load(a.platform, &pl);
  if (!err)
    err = mlsba_executor_create(pl, &B.ex);
  if (err) {
    fprintf(stderr, "bench-kernels: %s\n", mlsba_last_error());
    mlsba_platform_destroy(pl);
    return 1;
  }
  B.p = mlsba_platform_num_devices(pl);
  B.core0 = B.p;
  for (size_t j = 0; j < B.p; j++)
    if (mlsba_platform_device_type(pl, j) == MLSBA_DEVICE_CPU) {
      B.cores++;
      B.core0 = B.core0 < B.p ? B.core0 : j;
    }
  const char *why;
  B.openblas = openblas_load(&why) == 0;
  B.alone = calloc(B.p, sizeof *B.alone);
  B.balanced = calloc(B.p, sizeof *B.balanced);
  B.time = calloc(B.p, sizeof *B.time);
  if (B.cores == 0 || !B.alone || !B.balanced || !B.time) {
    fprintf(stderr, "bench-kernels: %s\n",
            B.cores ? "out of memory" : "the platform has no core");
    err = 1;
  }
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  if (!err) {
    printf("cores run: %s\n  (%s)\n", k.description, k.reason);
    if (!B.openblas)
      printf("no OpenBLAS rows: %s\n", why);
  }
  json_t *cases = json_array();
  for (size_t i = 0; i < a.nprec && !err; i++)
    for (size_t j = 0; j < a.nsizes && !err; j++) {
      memset(B.alone, 0, B.p * sizeof *B.alone);
      B.alone[B.core0] = a.sizes[j];
      err = one_case(&B, &a, a.precisions[i], a.sizes[j], cases);
      if (err)
        fprintf(stderr, "bench-kernels: %s\n", mlsba_last_error());
    }
  if (!err && a.json) {
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:o}", "kernels",
                            k.description, "reason", k.reason, "openblas",
                            B.openblas ? openblas_label() : "", "platform",
                            a.platform, "cases", json_incref(cases));
    if (json_dump_file(doc, a.json, JSON_INDENT(1)) != 0) {
      fprintf(stderr, "bench-kernels: cannot write %s\n", a.json);
      err = 1;
    }
    json_decref(doc);
  }
  json_decref(cases);
  free(B.alone);
  free(B.balanced);
  free(B.time);
  mlsba_executor_destroy(B.ex);
  mlsba_platform_destroy(pl);
  return err ? 1 : 0;
}
