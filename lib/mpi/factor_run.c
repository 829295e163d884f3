/* One run of a distributed factorization or solve on a rank: its checks
 * agreed across the ranks, its node column's communicator, the mapping
 * between global and local rows, and the panel's trips (gathered onto the
 * owner of its diagonal block). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/verbose.h"
#include "factor.h"
#include "matrix.h"

int mlsba__mpi_dfac_open(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                         const void *a, int err, int panels, const char *call,
                         mlsba__mpi_dfac_t *f) {
  memset(f, 0, sizeof *f);
  f->col = MPI_COMM_NULL;
  f->t0 = f->mark = mlsba__mpi_dfac_clock();
  f->verbose = mlsba__verbose();
  /* The tests' knob; the ranks agree on it below. */
  const char *pb = getenv("MLSBA_MPI_PIECE_BYTES");
  long long piece = pb && *pb ? atoll(pb) : 0;
  f->piece = (int64_t)(piece > 0 && piece < (1LL << 30) ? piece : 1LL << 30);
  const char *gr = getenv("MLSBA_MPI_GATHER_ROWS");
  long long grows = gr && *gr ? atoll(gr) : -1;
  f->gather_rows = grows >= 0 ? (int64_t)grows : mlsba__mpi_lu_gather_rows();
  /* Without a description there is no communicator to tell the others:
   * this rank alone fails. */
  if (desc == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: the description is NULL", call);
  f->comm = desc->comm;
  f->me = desc->rank;
  f->layout = mlsba__mpi_factor_layout_of(desc);
  if (!err && f->layout == NULL)
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: the description was not made by "
                      "mlsba_mpi_factor_matrix() (redistribute "
                      "the matrix to one that was)",
                      call);
  if (!err && prec != MLSBA_PRECISION_DOUBLE && prec != MLSBA_PRECISION_SINGLE)
    err =
        mlsba__fail(MLSBA_EINVAL, "%s: unknown precision %d", call, (int)prec);
  if (!err) {
    mlsba__layout_local_size(f->layout, (size_t)f->me, &f->lrows, &f->lcols);
    if (a == NULL && f->lrows > 0 && f->lcols > 0)
      err = mlsba__fail(MLSBA_EINVAL,
                        "%s: the local array is NULL where this "
                        "rank owns %lld x %lld elements",
                        call, (long long)f->lrows, (long long)f->lcols);
  }
  const mlsba__layout_dims_t *D =
      f->layout ? mlsba__layout_dims(f->layout) : NULL;
  f->skip = (panels & MLSBA__DFAC_SKIP) != 0;
  if (!err && f->skip && !mlsba__mpi_is_smpi())
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: skip_compute is only for SimGrid's SMPI "
                      "(a run here would compute nothing and take its "
                      "time from nothing)",
                      call);
  size_t es = mlsba__mpi_elem(prec);
  f->piece /= (int64_t)es;
  f->piece = f->piece < 1 ? 1 : f->piece;
  if (!err && panels) {
    size_t bytes = (size_t)D->m * (size_t)(D->nb < D->n ? D->nb : D->n) * es;
    f->panel = mlsba__mpi_dfac_alloc(f, bytes);
    if (!f->panel)
      err = mlsba__fail(MLSBA_ENOMEM,
                        "%s: out of memory for the panel (%zu bytes)", call,
                        bytes);
  }
  if ((err = mlsba__mpi_agree(f->comm, err)) != 0) {
    mlsba__mpi_dfac_close(f);
    return err;
  }
  /* The smallest piece of all the ranks': a message cut otherwise on its
   * two sides is truncated (Open MPI aborts the job) or waits for pieces
   * that never come, and the environment differs between ranks (mpirun
   * passes it to the ranks on its own host only, without -x). The
   * smallest gather_rows likewise: a node column whose ranks disagreed
   * would gather on some and search on others. */
  int64_t knobs[2] = {f->piece, f->gather_rows};
  MPI_Allreduce(MPI_IN_PLACE, knobs, 2, MPI_INT64_T, MPI_MIN, f->comm);
  f->piece = knobs[0];
  f->gather_rows = knobs[1];
  f->m = D->m;
  f->n = D->n;
  f->nb = D->nb;
  f->lda = desc->ld;
  f->prec = prec;
  f->es = es;
  f->type = prec == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
  f->a = (char *)(uintptr_t)a; /* the factorizations write through it */
  f->mycol = mlsba__layout_rank_column(f->layout, (size_t)f->me);
  /* Ordered by rank, as the layout lists a node column's ranks. */
  MPI_Comm_split(f->comm, (int)f->mycol, f->me, &f->col);
  return 0;
}

int mlsba__mpi_dfac_panels(const mlsba_mpi_factor_opts_t *opts) {
  return MLSBA__DFAC_PANELS |
         (opts && opts->skip_compute ? MLSBA__DFAC_SKIP : 0);
}

void *mlsba__mpi_dfac_alloc(const mlsba__mpi_dfac_t *f, size_t bytes) {
  return mlsba__mpi_alloc_if(bytes, f->skip);
}

void mlsba__mpi_dfac_free(const mlsba__mpi_dfac_t *f, void *p) {
  mlsba__mpi_free_if(p, f->skip);
}

void mlsba__mpi_dfac_close(mlsba__mpi_dfac_t *f) {
  if (f->col != MPI_COMM_NULL)
    MPI_Comm_free(&f->col);
  mlsba__mpi_dfac_free(f, f->panel);
  f->panel = NULL;
}

/* Under SMPI the simulated clock (MPI_Wtime), so that the phases say
 * where the simulated time goes; the host's elsewhere. */
double mlsba__mpi_dfac_clock(void) {
  return mlsba__mpi_is_smpi() ? MPI_Wtime() : mlsba__now();
}

void mlsba__mpi_dfac_phase(mlsba__mpi_dfac_t *f, int ph) {
  double t = mlsba__mpi_dfac_clock();
  f->phase[ph] += t - f->mark;
  f->mark = t;
}

void mlsba__mpi_dfac_step_done(mlsba__mpi_dfac_t *f, const char *call,
                               int64_t k) {
  mlsba__mpi_dfac_phase(f, MLSBA__MPI_OTHER);
  double *p = f->phase, *s = f->step0;
  if (f->verbose >= 2)
    fprintf(stderr,
            "mlsba: %s rank %d step %lld: panel %.4f wait %.4f swap %.4f "
            "update %.4f other %.4f s\n",
            call, f->me, (long long)k,
            p[MLSBA__MPI_PANEL] - s[MLSBA__MPI_PANEL],
            p[MLSBA__MPI_WAIT] - s[MLSBA__MPI_WAIT],
            p[MLSBA__MPI_SWAP] - s[MLSBA__MPI_SWAP],
            p[MLSBA__MPI_UPDATE] - s[MLSBA__MPI_UPDATE],
            p[MLSBA__MPI_OTHER] - s[MLSBA__MPI_OTHER]);
  memcpy(s, p, sizeof f->step0);
  mlsba__mpi_dfac_node_step_done(f);
}

/* Local indices before global index g of one rank's ascending blocks. */
static int64_t before(const int64_t *blocks, int64_t count, int64_t nb,
                      int64_t g) {
  int64_t b = g / nb, lo = 0, hi = count;
  while (lo < hi) { /* the first of its blocks at or after b */
    int64_t mid = lo + (hi - lo) / 2;
    if (blocks[mid] < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  /* Only a rank's last block can be partial, so every earlier one is nb
   * long; g within block b counts b's rows before it. */
  return lo * nb + (lo < count && blocks[lo] == b ? g % nb : 0);
}

int64_t mlsba__mpi_dfac_rows_before(const mlsba__mpi_dfac_t *f, size_t r,
                                    int64_t g) {
  int64_t count;
  const int64_t *rows = mlsba__layout_rank_rows(f->layout, r, &count);
  int64_t lr = before(rows, count, f->nb, g), total, cols;
  mlsba__layout_local_size(f->layout, r, &total, &cols);
  return lr < total ? lr : total;
}

int64_t mlsba__mpi_dfac_cols_before(const mlsba__mpi_dfac_t *f, size_t r,
                                    int64_t g) {
  int64_t count;
  const int64_t *cols = mlsba__layout_rank_cols(f->layout, r, &count);
  int64_t lc = before(cols, count, f->nb, g), rows, total;
  mlsba__layout_local_size(f->layout, r, &rows, &total);
  return lc < total ? lc : total;
}

void *mlsba__mpi_dfac_at(const mlsba__mpi_dfac_t *f, int64_t lr, int64_t lc) {
  return f->a + ((size_t)lc * (size_t)f->lda + (size_t)lr) * f->es;
}

int mlsba__mpi_dfac_col_rank(const mlsba__mpi_dfac_t *f, size_t rank) {
  size_t count;
  const size_t *ranks = mlsba__layout_column_ranks(
      f->layout, mlsba__layout_rank_column(f->layout, rank), &count);
  for (size_t i = 0; i < count; i++)
    if (ranks[i] == rank)
      return (int)i;
  return -1;
}

void mlsba__mpi_copy_block(size_t es, int64_t rows, int64_t cols,
                           const void *src, int64_t lds, void *dst,
                           int64_t ldd) {
  for (int64_t j = 0; j < cols && rows > 0; j++)
    memcpy((char *)dst + (size_t)(j * ldd) * es,
           (const char *)src + (size_t)(j * lds) * es, (size_t)rows * es);
}

int64_t mlsba__mpi_dfac_my_panel_rows(const mlsba__mpi_dfac_t *f, int64_t k0,
                                      int64_t p, const void *panel, int64_t g0,
                                      void *out) {
  int64_t total = f->lrows - mlsba__mpi_dfac_rows_before(f, (size_t)f->me, g0);
  int64_t at = 0, ld = f->m - k0;
  mlsba__mpi_dfac_charge_copy(f, (double)(total * p));
  if (f->skip)
    return total;
  MLSBA__MPI_FOR_RANK_ROWS(f, (size_t)f->me, g0, g, len, lrow, {
    (void)lrow;
    mlsba__mpi_copy_block(f->es, len, p,
                          (const char *)panel + (size_t)(g - k0) * f->es, ld,
                          (char *)out + (size_t)at * f->es, total);
    at += len;
  });
  return total;
}
