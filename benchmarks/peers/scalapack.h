/* What ScaLAPACK's peers share (pdgemm_peer.c, pdfactor_peer.c): BLACS's
 * and ScaLAPACK's prototypes (Fortran symbols; Debian:
 * libscalapack-openmpi-dev), each rank pinned to the core named for it,
 * the squarest process grid, a local index's global one. Header only, so
 * that each peer stays one program of one source. */
#ifndef MLSBA_PEERS_SCALAPACK_H
#define MLSBA_PEERS_SCALAPACK_H

#include <sched.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctx, int what, int *val);
void Cblacs_gridinit(int *ctx, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctx, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctx);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc,
            const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb,
               const int *nb, const int *irsrc, const int *icsrc,
               const int *ctx, const int *lld, int *info);

/* Pins this process to the me-th core of cores ("0,1,1"); a list too
 * short leaves it where it is. */
static inline void pin(const char *cores, int me) {
  const char *s = cores;
  for (int k = 0; k < me && s; k++)
    s = (s = strchr(s, ',')) ? s + 1 : NULL;
  if (s) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(s), &set);
    sched_setaffinity(0, sizeof set, &set);
  }
}

/* The squarest row-major BLACS grid of np processes: its context, its
 * shape and this process's place in it. */
static inline int squarest_grid(int np, int *nprow, int *npcol, int *myrow,
                                int *mycol) {
  int rows = 1, ctx;
  for (int r = 1; r * r <= np; r++)
    if (np % r == 0)
      rows = r;
  Cblacs_get(-1, 0, &ctx);
  Cblacs_gridinit(&ctx, "Row-major", rows, np / rows);
  Cblacs_gridinfo(ctx, nprow, npcol, myrow, mycol);
  return ctx;
}

/* Global index of local index l on process p of np, block nb. */
static inline long global_of(int l, int nb, int p, int np) {
  return ((long)(l / nb) * np + p) * nb + l % nb;
}

/* Doubles in increasing order (qsort), for the median of the runs. */
static inline int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
