/* The application's own A and B in the two-dimensional product, and its
 * C back: every rank fills the rectangles A' and B' of its own C' through
 * the application's callback (by global element indices: the
 * distribution is the library's choice, so the application cannot have
 * laid its matrices out for it), keeps C' in its result, and, when asked,
 * gathers the whole C on rank 0. Without a callback A and B are the
 * generated ones (matgen.c), as mlsba-inpa runs them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "internal.h"

int mlsba__mpi_fill_operands(const mlsba_mpi_multiply_opts_t *o, int64_t r0,
                             int64_t c0, int64_t rows, int64_t cols, void *a,
                             void *b) {
  if (o->fill == NULL) {
    mlsba__mpi_fill(a, o->seed, 0, r0, c0, rows, cols, o->precision);
    mlsba__mpi_fill(b, o->seed, 1, r0, c0, rows, cols, o->precision);
    return 0;
  }
  for (int which = 0; which < 2; which++) {
    int rc =
        o->fill(o->fill_user, which, r0, c0, rows, cols, which ? b : a, rows);
    if (rc != 0)
      return mlsba__fail(MLSBA_EINVAL,
                         "the application's fill of %s rows %lld..%lld, "
                         "columns %lld..%lld returned %d",
                         which ? "B" : "A", (long long)r0,
                         (long long)(r0 + rows - 1), (long long)c0,
                         (long long)(c0 + cols - 1), rc);
  }
  return 0;
}

static long double element(const void *x, int64_t i, mlsba_precision_t p) {
  return p == MLSBA_PRECISION_DOUBLE ? ((const double *)x)[i]
                                     : ((const float *)x)[i];
}

/* Sampled elements of C' against long-double sums over the application's
 * rows of A and columns of B, asked of its callback one at a time. */
static int check_own(const mlsba_mpi_multiply_opts_t *o, const void *c,
                     int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                     uint64_t sample_seed, double *max_rel_error, int *ok) {
  size_t es = mlsba__mpi_elem(o->precision);
  void *arow = malloc((size_t)o->n * es), *bcol = malloc((size_t)o->n * es);
  int err = arow && bcol ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  double u = o->precision == MLSBA_PRECISION_DOUBLE ? 0x1.0p-53 : 0x1.0p-24;
  double worst = 0;
  *ok = 1;
  for (unsigned s = 0; !err && s < o->verify_samples; s++) {
    uint64_t h = (sample_seed + s) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    int64_t i = s == 0 ? 0 : s == 1 ? rows - 1 : (int64_t)(h % (uint64_t)rows);
    int64_t j = s == 0   ? 0
                : s == 1 ? cols - 1
                         : (int64_t)((h >> 32) % (uint64_t)cols);
    int ra = o->fill(o->fill_user, 0, r0 + i, 0, 1, o->n, arow, 1);
    int rb = o->fill(o->fill_user, 1, 0, c0 + j, o->n, 1, bcol, o->n);
    if (ra || rb) {
      err = mlsba__fail(MLSBA_EINVAL,
                        "the application's fill returned %d for a row of A "
                        "or a column of B (the check)",
                        ra ? ra : rb);
      break;
    }
    long double ref = 0, mag = 0;
    for (int64_t k = 0; k < o->n; k++) {
      long double p =
          element(arow, k, o->precision) * element(bcol, k, o->precision);
      ref += p;
      mag += fabsl(p);
    }
    long double got = element(c, j * rows + i, o->precision);
    double e = (double)(fabsl(got - ref) / (mag > 0 ? mag : 1));
    if (!(e <= 4.0 * (double)o->n * u))
      *ok = 0;
    if (!(e <= worst))
      worst = e;
  }
  free(arow);
  free(bcol);
  *max_rel_error = worst;
  return err;
}

int mlsba__mpi_check_c(const mlsba_mpi_multiply_opts_t *o, const void *c,
                       int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                       uint64_t sample_seed, double *max_rel_error, int *ok) {
  if (o->fill != NULL)
    return check_own(o, c, r0, c0, rows, cols, sample_seed, max_rel_error, ok);
  mlsba__mpi_verify(c, o->seed, o->n, r0, c0, rows, cols, o->precision,
                    o->verify_samples, sample_seed, max_rel_error, ok);
  return 0;
}

/* Every rank's C' into the whole C on rank 0 (column-major, N x N). */
static int gather_c(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o,
                    const void *c, const int64_t me[4], mlsba_mpi_result_t *r) {
  int rank, q;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &q);
  size_t es = mlsba__mpi_elem(o->precision), n = (size_t)o->n;
  int64_t *all = rank == 0 ? malloc((size_t)q * 4 * sizeof *all) : NULL;
  int err = rank == 0 && !all ? mlsba__fail(MLSBA_ENOMEM, "out of memory") : 0;
  if (rank == 0 && !err && n * n * es / es / n != n)
    err = mlsba__fail(MLSBA_EINVAL, "gather: C does not fit in memory");
  if (rank == 0 && !err && (r->c_all = malloc(n * n * es)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM,
                      "gather: no room for C (%zu x %zu) on "
                      "rank 0",
                      n, n);
  if ((err = mlsba__mpi_agree(comm, err)) != 0) {
    free(all);
    return err;
  }
  MPI_Gather(me, 4, MPI_INT64_T, all, 4, MPI_INT64_T, 0, comm);
  /* One message a column of C' would be many: each rank sends its C' whole,
   * in pieces of at most 2^30 bytes so that counts fit an int. */
  size_t bytes = (size_t)(me[2] * me[3]) * es, piece = (size_t)1 << 30;
  if (rank != 0) {
    for (size_t at = 0; at < bytes; at += piece)
      MPI_Send((const char *)c + at,
               (int)(bytes - at < piece ? bytes - at : piece), MPI_BYTE, 0, 0,
               comm);
  } else {
    for (int i = 0; i < q; i++) {
      int64_t row0 = all[4 * i], col0 = all[4 * i + 1], rows = all[4 * i + 2],
              cols = all[4 * i + 3];
      size_t sz = (size_t)(rows * cols) * es;
      char *buf = i == 0 ? (char *)c : malloc(sz ? sz : 1);
      if (buf == NULL) { /* drain the rank's messages anyway */
        err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
        buf = malloc(piece);
        for (size_t at = 0; buf && at < sz; at += piece)
          MPI_Recv(buf, (int)(sz - at < piece ? sz - at : piece), MPI_BYTE, i,
                   0, comm, MPI_STATUS_IGNORE);
        free(buf);
        continue;
      }
      for (size_t at = 0; i != 0 && at < sz; at += piece)
        MPI_Recv(buf + at, (int)(sz - at < piece ? sz - at : piece), MPI_BYTE,
                 i, 0, comm, MPI_STATUS_IGNORE);
      for (int64_t j = 0; j < cols; j++)
        memcpy((char *)r->c_all + ((size_t)(col0 + j) * n + (size_t)row0) * es,
               buf + (size_t)(j * rows) * es, (size_t)rows * es);
      if (i != 0)
        free(buf);
    }
  }
  free(all);
  return mlsba__mpi_agree(comm, err);
}

int mlsba__mpi_hand_back_c(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o,
                           void **c, int64_t r0, int64_t c0, int64_t rows,
                           int64_t cols, mlsba_mpi_result_t *r) {
  r->c_row0 = r0;
  r->c_col0 = c0;
  r->c_rows = rows;
  r->c_cols = cols;
  /* A rank that gathers while another does not would wait for ever. */
  int gather = o->gather != 0, head = gather;
  MPI_Bcast(&head, 1, MPI_INT, 0, comm);
  int err = mlsba__mpi_agree(
      comm, gather == head
                ? 0
                : mlsba__fail(MLSBA_EINVAL,
                              "option gather is %d here, %d on rank 0: every "
                              "rank must pass the same options",
                              gather, head));
  if (!err && o->gather && *c != NULL) {
    int64_t me[4] = {r0, c0, rows, cols};
    err = gather_c(comm, o, *c, me, r);
  }
  r->c = *c; /* the result owns it now */
  *c = NULL;
  return err;
}
