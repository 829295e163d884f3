/* The four 2-D block-cyclic layouts of the factorizations across nodes
 * (lib/partition/layout.h) on a cluster's node models: the LU (or
 * Cholesky) step sum the models predict for each, against the sum of the
 * node models' optimum at every trailing size, and each layout's memory
 * per node. Predictions from the models only: nothing is run.
 *
 * A cluster is a directory of node<i>.json platform files, as
 * models/cluster holds them (generate.py grenoble: the seed's 90 nodes;
 * generate.py scale N: N random heterogeneous nodes). A node's model is
 * what INPA's node models are: its time for one rank-b update of an area
 * of b x b blocks, here its devices' balanced time for that many blocks
 * (SLBA over its simulated devices' speed profiles), on a ladder of areas
 * from one block to the whole matrix. Process scaling (seed 003) gives
 * each node Ratio = its peak over the reference node's peak (eq. 1)
 * rounded to a divisor of its cores (eq. 2), the reference the slowest
 * node (so that every node's processes are about equally fast, as the
 * seed's equal shares per process want) or, with --reference median, the
 * median node (the seed's "CPU node": nodes slower than it run one
 * process); the other layouts run one rank per node.
 *
 *   bench-layout [--cluster DIR]... [--sizes "N1 N2 ..."] [--block B]
 *                [--cholesky] [--reference slowest|median] [--steps FILE]
 *
 * Defaults: models/cluster/grenoble-90, N = 16384 32768 65536 131072,
 * b = 128. --steps writes, for the last cluster and size, the predicted
 * makespan and the optimum of every step of every layout (gnuplot's
 * columns: t, then makespan and optimum per layout). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "mlsba.h"
#include "partition/layout.h"

#define MAX_NODES 4096

typedef struct {
  size_t q;
  mlsba_model_t *model[MAX_NODES];
  int64_t cores[MAX_NODES];
  double peak[MAX_NODES];
} cluster_t;

/* Node model from a platform: its devices' balanced time per area. */
static int node_model(const mlsba_platform_t *pl, double most,
                      mlsba_model_t **out, int64_t *cores, double *peak) {
  size_t p = mlsba_platform_num_devices(pl);
  const mlsba_model_t *dev[64];
  int64_t loads[64];
  if (p == 0 || p > 64)
    return -1;
  *cores = 0;
  for (size_t j = 0; j < p; j++) {
    mlsba_device_info_t info;
    dev[j] = mlsba_platform_device_model(pl, j);
    if (!dev[j] || mlsba_platform_device_info(pl, j, &info))
      return -1;
    *cores += strcmp(info.kind, "core") == 0;
  }
  if (mlsba_model_create(out))
    return -1;
  *peak = 0;
  for (double a = 1; a <= most * 1.26; a = ceil(a * 1.25)) {
    mlsba_partition_info_t info;
    if (mlsba_partition_slba_ex(dev, p, (int64_t)a, NULL, loads, &info) ||
        mlsba_model_set_point(*out, a, a / info.makespan))
      return -1;
    *peak = fmax(*peak, a / info.makespan);
  }
  return 0;
}

static int load_cluster(const char *dir, double most, cluster_t *c) {
  c->q = 0;
  for (;; c->q++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/node%zu.json", dir, c->q);
    FILE *f = fopen(path, "r");
    if (!f)
      break;
    fclose(f);
    mlsba_platform_t *pl = NULL;
    if (c->q == MAX_NODES || mlsba_platform_load(path, &pl) ||
        node_model(pl, most, &c->model[c->q], &c->cores[c->q],
                   &c->peak[c->q])) {
      fprintf(stderr, "bench-layout: %s: %s\n", path, mlsba_last_error());
      mlsba_platform_destroy(pl);
      return -1;
    }
    mlsba_platform_destroy(pl);
  }
  if (c->q == 0)
    fprintf(stderr, "bench-layout: no %s/node0.json\n", dir);
  return c->q ? 0 : -1;
}

static const char *const names[4] = {"homogeneous", "process-scaling",
                                     "constant", "fpm"};

/* One layout of the four; the time it took to draw into *ms. */
static int draw(int which, const cluster_t *c, const int64_t *procs, int64_t N,
                int64_t b, const mlsba__layout_opts_t *o, mlsba__layout_t **L,
                double *ms) {
  const mlsba_model_t *const *md = (const mlsba_model_t *const *)c->model;
  size_t P, Q;
  double t0 = timing_now();
  int err = 0;
  switch (which) {
  case 0:
    mlsba__layout_grid(c->q, &P, &Q);
    err = mlsba__layout_homogeneous(N, N, b, P, Q, L);
    break;
  case 1:
    err = mlsba__layout_process_scaling(N, N, b, c->q, procs,
                                        MLSBA__GRID_ALGORITHM1, L);
    break;
  case 2:
    err = mlsba__layout_constant(md, c->q, N, N, b, o, L);
    break;
  default:
    err = mlsba__layout_fpm(md, c->q, N, N, b, o, L);
  }
  *ms = 1e3 * (timing_now() - t0);
  return err;
}

static void print_row(int which, const mlsba__layout_t *L,
                      const mlsba__layout_summary_t *s, double flops, double ms,
                      int lower) {
  const mlsba__layout_dims_t *d = mlsba__layout_dims(L);
  int64_t blocks[MAX_NODES], lo = INT64_MAX, hi = 0;
  mlsba__layout_node_blocks(L, lower, blocks);
  for (size_t i = 0; i < d->nodes; i++) {
    lo = blocks[i] < lo ? blocks[i] : lo;
    hi = blocks[i] > hi ? blocks[i] : hi;
  }
  double gib = (double)(d->nb * d->nb) * 8 / (1 << 30);
  /* The grid of ranks, or the node columns and the walk. */
  char grid[32];
  if (which < 2)
    snprintf(grid, sizeof grid, "%zux%zu", d->ranks / d->columns, d->columns);
  else
    snprintf(grid, sizeof grid, "%zu %s", d->columns,
             which == 3 ? mlsba__layout_kind_name(d->kind) + 4 : "cols");
  printf("  %-15s %-11s %9.1f %8.0f %5.3f %5.1f %5.1f %6.2f %6.2f %6.0f\n",
         names[which], grid, s->step_sum, flops / s->step_sum / 1e9,
         s->optimum_sum / s->step_sum, s->max_width_dev, s->max_height_dev,
         (double)hi * gib, (double)lo * gib, ms);
}

/* gnuplot columns of every step: t, then makespan and optimum per layout. */
static void write_steps(const char *path, mlsba__layout_step_t *const st[4],
                        int64_t K) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return;
  }
  fprintf(f, "# t");
  for (int w = 0; w < 4; w++)
    fprintf(f, " %s %s-optimum", names[w], names[w]);
  fprintf(f, "\n");
  for (int64_t t = 1; t < K; t++) {
    fprintf(f, "%lld", (long long)t);
    for (int w = 0; w < 4; w++)
      fprintf(f, " %.6g %.6g", st[w][t].makespan, st[w][t].optimum);
    fprintf(f, "\n");
  }
  fclose(f);
}

static int run_size(const cluster_t *c, const int64_t *procs, int64_t N,
                    int64_t b, int lower, const char *steps_path) {
  mlsba__layout_opts_t o = {lower, NULL, MLSBA__WALK_BEST, NULL, NULL, 0,
                            NULL,  0};
  int64_t K = (N - 1) / b + 1;
  double flops = (lower ? 1.0 : 2.0) / 3 * (double)N * (double)N * (double)N;
  mlsba__layout_step_t *st[4] = {NULL};
  printf("N = %lld (%lld x %lld blocks of %lld)\n", (long long)N, (long long)K,
         (long long)K, (long long)b);
  printf("  %-15s %-11s %9s %8s %5s %5s %5s %6s %6s %6s\n", "layout", "grid",
         "sum (s)", "GFLOPS", "eff", "devW", "devH", "maxGiB", "minGiB", "ms");
  int err = 0;
  for (int w = 0; w < 4 && !err; w++) {
    mlsba__layout_t *L = NULL;
    mlsba__layout_summary_t s;
    double ms;
    st[w] = malloc((size_t)K * sizeof *st[w]);
    err = !st[w] || draw(w, c, procs, N, b, &o, &L, &ms);
    if (!err)
      err = mlsba__layout_measure(L, (const mlsba_model_t *const *)c->model, &o,
                                  st[w], &s);
    if (err)
      fprintf(stderr, "bench-layout: %s: %s\n", names[w], mlsba_last_error());
    else
      print_row(w, L, &s, flops, ms, lower);
    mlsba__layout_destroy(L);
  }
  if (!err && steps_path)
    write_steps(steps_path, st, K);
  for (int w = 0; w < 4; w++)
    free(st[w]);
  return err;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The peak of seed 003's reference node: the slowest's, or the median. */
static double reference(const cluster_t *c, int median) {
  static double peak[MAX_NODES];
  memcpy(peak, c->peak, c->q * sizeof *peak);
  qsort(peak, c->q, sizeof *peak, by_value);
  return median ? peak[c->q / 2] : peak[0];
}

static int usage(void) {
  fprintf(stderr, "usage: bench-layout [--cluster DIR]... [--sizes \"N ...\"] "
                  "[--block B]\n                    [--cholesky] "
                  "[--reference slowest|median] [--steps FILE]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *dirs[16], *sizes = "16384 32768 65536 131072", *steps = NULL;
  int ndirs = 0, lower = 0, median = 0;
  int64_t b = 128;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cluster") && i + 1 < argc && ndirs < 16)
      dirs[ndirs++] = argv[++i];
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = argv[++i];
    else if (!strcmp(argv[i], "--block") && i + 1 < argc)
      b = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = argv[++i];
    else if (!strcmp(argv[i], "--cholesky"))
      lower = 1;
    else if (!strcmp(argv[i], "--reference") && i + 1 < argc)
      median = !strcmp(argv[++i], "median");
    else
      return usage();
  }
  if (ndirs == 0)
    dirs[ndirs++] = MLSBA_SOURCE_DIR "/models/cluster/grenoble-90";
  int64_t N[16], nsizes = 0, Nmax = 0;
  for (const char *p = sizes; *p && nsizes < 16;) {
    char *end;
    N[nsizes] = strtoll(p, &end, 10);
    if (end == p || N[nsizes] < 1 || b < 1)
      return usage();
    Nmax = N[nsizes] > Nmax ? N[nsizes] : Nmax;
    nsizes++;
    p = end + strspn(end, " ");
  }
  double most = pow((double)((Nmax - 1) / b + 1), 2);
  static cluster_t c;
  for (int k = 0; k < ndirs; k++) {
    if (load_cluster(dirs[k], most, &c))
      return 1;
    static int64_t procs[MAX_NODES];
    double ref = reference(&c, median);
    int64_t T = 0;
    for (size_t i = 0; i < c.q; i++) {
      procs[i] = mlsba__process_scaling_count(c.peak[i] / ref, c.cores[i]);
      T += procs[i];
    }
    printf("== %s: %zu nodes; process scaling runs %lld processes\n", dirs[k],
           c.q, (long long)T);
    for (int64_t s = 0; s < nsizes; s++)
      if (run_size(&c, procs, N[s], b, lower,
                   k == ndirs - 1 && s == nsizes - 1 ? steps : NULL))
        return 1;
    for (size_t i = 0; i < c.q; i++)
      mlsba_model_destroy(c.model[i]);
  }
  return 0;
}
