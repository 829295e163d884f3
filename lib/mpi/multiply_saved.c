/* The ranks' distribution kept for the next job (opts.model_dir): INPA's
 * runs cost a second or so on a few ranks, as much as several products,
 * and a program started again on the same ranks, platforms and shape
 * would find the same distribution. After a balancing, rank 0 writes the
 * rectangles chosen and the ranks' times into model_dir, under a name
 * that holds the shape, the block, the precision, the algorithms and a
 * hash of every rank's host and platform path. The next balancing for
 * that name takes the saved distribution without a run of its own: each
 * node is made ready for its rectangle (a node of one device without any
 * run), and the products are the check. Products whose rank times
 * (medians of the last three) are further apart than when the
 * distribution was saved (or than eps), with half again of slack for
 * timing noise, or than opts.drift, count what they lose against it;
 * once they have lost what a balancing costs, the multiplier balances
 * with INPA from the start (multiplier.c), and INPA's result replaces
 * the file. A timed run of its own cost as much as a product (about
 * 0.4 s at N = 3000 on two cores) and, being a few steps, was noisier
 * than the products that now check it. A file that does not tile the grid
 * exactly (a damaged or foreign one) is never run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "multiply.h"

/* Version 2 adds each rank's time after its rectangle; version 1 files
 * are read, their times taken as 0 (unknown). */
enum { SAVED_VERSION = 2 };

/* FNV-1a over the bytes of s, continuing from h. */
static uint64_t hash_text(uint64_t h, const char *s) {
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

uint64_t mlsba__mpi_mult_signature(const char *platform_path) {
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0)
    host[0] = '\0';
  return hash_text(hash_text(0xcbf29ce484222325ULL, host), platform_path);
}

/* Collective: the file's path on rank 0 (every rank's signature in its
 * hash); 0 when the path does not fit. */
static int saved_path(const mlsba__mpi_mult_t *C, char *path, size_t n) {
  uint64_t *all = C->rank == 0 ? malloc((size_t)C->q * sizeof *all) : NULL;
  uint64_t sig = C->signature;
  MPI_Gather(&sig, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, C->comm);
  if (C->rank != 0)
    return 1;
  if (all == NULL)
    return 0;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < C->q; i++)
    h = (h ^ all[i]) * 0x100000001b3ULL;
  free(all);
  const mlsba_mpi_multiply_opts_t *o = C->o;
  int len = snprintf(
      path, n, "%s/inpa-q%d-%lldx%lldx%lld-b%lld-%c-a%d-n%d-c%d-%016llx.txt",
      o->model_dir, C->q, (long long)o->m, (long long)o->n, (long long)o->k,
      (long long)o->block, o->precision == MLSBA_PRECISION_SINGLE ? 's' : 'd',
      (int)o->algorithm, (int)o->node_algorithm, (int)o->comm_model,
      (unsigned long long)h);
  return len > 0 && (size_t)len < n;
}

/* Whether q rectangles (4 numbers each, in cells) tile the g x g grid:
 * inside it, each at least a cell, no two overlapping, nothing left. */
static int tiles(const int64_t *rc, int q, int64_t g) {
  if (g <= 0 || g > 8192)
    return 0;
  unsigned char *seen = calloc((size_t)(g * g), 1);
  int64_t area = 0;
  int ok = seen != NULL;
  for (int i = 0; ok && i < q; i++) {
    const int64_t *x = rc + 4 * i; /* m, n, row, col */
    ok = x[0] >= 1 && x[1] >= 1 && x[2] >= 0 && x[3] >= 0 && x[0] <= g - x[2] &&
         x[1] <= g - x[3];
    for (int64_t r = x[2]; ok && r < x[2] + x[0]; r++)
      for (int64_t c = x[3]; ok && c < x[3] + x[1]; c++)
        ok = !seen[r * g + c]++;
    area += ok ? x[0] * x[1] : 0;
  }
  free(seen);
  return ok && area == g * g;
}

/* Rank 0: the saved rectangles, the ranks' times (0 where the file has
 * none) and the imbalance they were saved with; 0 when there is no
 * usable file. */
static int read_saved(const char *path, int q, int64_t g, int64_t *rc,
                      double *t, double *imbalance) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  int version = 0, nq = 0, ok;
  long long ng = 0;
  ok = fscanf(f, "mlsba-inpa-distribution %d %d %lld %lf", &version, &nq, &ng,
              imbalance) == 4 &&
       (version == 1 || version == SAVED_VERSION) && nq == q && ng == g &&
       *imbalance >= 0 && *imbalance <= 1;
  for (int i = 0; ok && i < q; i++) {
    long long v[4];
    ok = fscanf(f, "%lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3]) == 4;
    for (int j = 0; ok && j < 4; j++)
      rc[4 * i + j] = v[j];
    t[i] = 0;
    if (ok && version >= 2)
      ok = fscanf(f, "%lf", &t[i]) == 1 && isfinite(t[i]) && t[i] >= 0;
  }
  fclose(f);
  return ok && tiles(rc, q, g);
}

/* Rank 0's record of the one run, as INPA's history would hold it. */
static int record(mlsba__mpi_mult_t *C, const int64_t *rc, const double *t,
                  double imb, mlsba_mpi_result_t *r) {
  size_t q = (size_t)C->q;
  r->history_w = malloc(q * sizeof *r->history_w);
  r->history_time = malloc(q * sizeof *r->history_time);
  r->history_imbalance = malloc(sizeof *r->history_imbalance);
  if (!r->history_w || !r->history_time || !r->history_imbalance)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  r->history_len = 1;
  int64_t b = C->grid.b, half = 0;
  double lower = 0;
  for (size_t i = 0; i < q; i++) {
    const int64_t *x = rc + 4 * i;
    mlsba__mpi_part_t p; /* blocks of C, as the report counts them */
    mlsba__mpi_grid_part(&C->grid, x[0], x[1], x[2], x[3], &p);
    r->history_w[i] = (p.rows + b - 1) / b * ((p.cols + b - 1) / b);
    r->history_time[i] = t[i];
    half += x[0] + x[1];
    lower += 2 * sqrt((double)(x[0] * x[1]));
  }
  r->history_imbalance[0] = imb;
  r->iterations = r->run_iteration = 1;
  r->imbalance = imb;
  r->stop = imb <= C->o->eps ? MLSBA_STOP_BALANCED : MLSBA_STOP_FIXED_POINT;
  r->converged = 1;
  r->half_perimeter_sum = (double)half;
  r->half_perimeter_lower_bound = lower;
  return 0;
}

int mlsba__mpi_mult_try_saved(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r,
                              int *used) {
  char path[1100];
  int64_t *rc = malloc((size_t)C->q * 4 * sizeof *rc);
  double saved_imb = 0, *t = malloc((size_t)C->q * sizeof *t);
  int found = 0, named = saved_path(C, path, sizeof path);
  *used = 0;
  if (rc && t && named && C->rank == 0)
    found = read_saved(path, C->q, C->grid.g, rc, t, &saved_imb);
  MPI_Bcast(&found, 1, MPI_INT, 0, C->comm);
  int err = 0;
  if (found) {
    MPI_Scatter(rc, 4, MPI_INT64_T, &C->mine, 4, MPI_INT64_T, 0, C->comm);
    err = mlsba__mpi_agree(C->comm, mlsba__mpi_mult_place_rect(C));
    if (!err && C->rank == 0)
      err = record(C, rc, t, saved_imb, r);
    err = mlsba__mpi_agree(C->comm, err);
    *used = !err;
    /* The products check it (multiplier.c): their rank times within half
     * again of the saved imbalance (or eps), or within drift. */
    double bar = 1.5 * (saved_imb > C->o->eps ? saved_imb : C->o->eps);
    MPI_Bcast(&bar, 1, MPI_DOUBLE, 0, C->comm);
    C->check_bar = bar > C->o->drift ? bar : C->o->drift;
    C->unchecked = *used;
  }
  free(rc);
  free(t);
  return err;
}

void mlsba__mpi_mult_save(mlsba__mpi_mult_t *C, double imbalance,
                          const double *times) {
  char path[1100], tmp[1200];
  int64_t *rc = C->rank == 0 ? malloc((size_t)C->q * 4 * sizeof *rc) : NULL;
  int64_t me[4] = {C->mine.m, C->mine.n, C->mine.row, C->mine.col};
  MPI_Gather(me, 4, MPI_INT64_T, rc, 4, MPI_INT64_T, 0, C->comm);
  int named = saved_path(C, path, sizeof path);
  if (C->rank != 0 || rc == NULL || !named ||
      snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >=
          (int)sizeof tmp) {
    free(rc);
    return;
  }
  /* Written whole under another name, then renamed over the old one: a
   * job that stops half way never leaves half a file under the name. */
  FILE *f = fopen(tmp, "w");
  int ok = f != NULL &&
           fprintf(f, "mlsba-inpa-distribution %d %d %lld %.17g\n",
                   SAVED_VERSION, C->q, (long long)C->grid.g,
                   imbalance >= 0 && imbalance <= 1 ? imbalance : 1) > 0;
  for (int i = 0; ok && i < C->q; i++)
    ok = fprintf(f, "%lld %lld %lld %lld %.9g\n", (long long)rc[4 * i],
                 (long long)rc[4 * i + 1], (long long)rc[4 * i + 2],
                 (long long)rc[4 * i + 3],
                 times && isfinite(times[i]) && times[i] >= 0 ? times[i]
                                                              : 0.0) > 0;
  if (f != NULL)
    ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0)
    remove(tmp);
  free(rc);
}
