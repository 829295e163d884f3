/* A run's operands in the product's layout (plan.c): every rank's op(A)',
 * op(B)' and beta C0', from one of three sources, and C' back where the
 * caller wants it.
 *  - generated: element (i, j) of A, B, C a hash of the seed (matgen.c);
 *  - the application's fill callback, asked only for the rank's own
 *    rectangle of each matrix as the application stores it (A k x m when
 *    transa is 'T'): its own blocks, never another rank's;
 *  - the caller's arrays in any layout (a ScaLAPACK descriptor's):
 *    redistributed into the layout's rectangles (mlsba_mpi_redistribute).
 * A stored transposed is turned locally into op(A)', so the product sees
 * one orientation; alpha scales op(A)' once, beta C0' once. Where the
 * caller's layout already places a rank's part as the product's does (one
 * rank, a 1 x 1 grid), its arrays are used where they lie: nothing moves.
 * Where the caller's A or B is, element for element, the one the last run
 * moved (operands_keep.c), the layout's copy serves again: nothing moves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/bigmem.h"
#include "../core/error.h"
#include "../core/verbose.h"
#include "matrix.h"
#include "multiply.h"

/* dst (cols x rows, leading dimension ldd) = the transpose of src (rows x
 * cols, leading dimension lds), in tiles that stay in cache. */
static void transpose(const char *src, int64_t rows, int64_t cols, int64_t lds,
                      char *dst, int64_t ldd, size_t es) {
  enum { T = 32 };
  for (int64_t j0 = 0; j0 < cols; j0 += T)
    for (int64_t i0 = 0; i0 < rows; i0 += T)
      for (int64_t j = j0; j < cols && j < j0 + T; j++)
        for (int64_t i = i0; i < rows && i < i0 + T; i++)
          memcpy(dst + ((size_t)i * (size_t)ldd + (size_t)j) * es,
                 src + ((size_t)j * (size_t)lds + (size_t)i) * es, es);
}

static void scale(void *x, size_t n, double s, mlsba_precision_t p) {
  if (p == MLSBA_PRECISION_DOUBLE)
    for (size_t i = 0; i < n; i++)
      ((double *)x)[i] *= s;
  else
    for (size_t i = 0; i < n; i++)
      ((float *)x)[i] *= (float)s;
}

/* Memory that is only copied into and out of (A' and B', whose panels
 * the product copies out step by step, and a transpose's staging):
 * malloc's 4 KiB pages, not core/bigmem.c's huge pages, which pay off
 * for buffers a GEMM kernel streams (C') but whose first touch costs
 * more where it matters here. The multiplier touches A' and B' once a
 * layout, in the first run's move, after a balancing that freed its
 * scratch and often right after another job freed its memory; on this
 * project's 2-core VM the host takes back free 2 MiB blocks (its
 * balloon's free page reporting), and a huge page is a whole such
 * block: bal34f measured its first touch at 42-89 ms a MB there, busy,
 * against 21 ms for 4 KiB pages (bal34g in benchmarks/RESULTS.md). */
static void *copy_alloc(size_t bytes) { return malloc(bytes ? bytes : 1); }

static const char *const matrix_name[3] = {"A", "B", "C"};
static const char *const matrix_in[3] = {"A in", "B in", "C in"};

/* MLSBA_VERBOSE set and not 0: every rank prints what each of its
 * redistributions moved (what moves in a run, rank by rank). */
static void say_moved(const mlsba__mpi_mult_t *C, const char *what,
                      const mlsba__mpi_scratch_t *s, size_t es, double secs) {
  if (!mlsba__verbose())
    return;
  double mb = (double)es / 1e6;
  fprintf(stderr,
          "mlsba multiplier: rank %d: %s: %.1f MB kept on the rank, %.1f MB "
          "out, %.1f MB in, %.4f s\n",
          C->rank, what, (double)s->kept * mb, (double)s->sent * mb,
          (double)s->received * mb, secs);
}

/* Whether the caller's description d lays this rank's part out exactly
 * as the product's lib does: the same elements at the same local places
 * with the same leading dimension (lib's blocks may lie over the
 * matrix's in another order: matrix.c's rects_perm). */
static int same_place(const mlsba_mpi_matrix_t *d,
                      const mlsba_mpi_matrix_t *lib) {
  int64_t area = 0, lib_area = 0;
  if (lib->nown > 0 && d->ld != lib->ld)
    return 0;
  for (size_t k = 0; k < lib->nown; k++)
    lib_area += lib->own[k].rows * lib->own[k].cols;
  for (size_t k = 0; k < d->nown; k++) {
    const mlsba_mpi_block_t *b = &d->own[k];
    /* Every block of lib that b covers: here, at b's local offsets. */
    for (int64_t j = b->col; j < b->col + b->cols;
         j = (j / lib->nb + 1) * lib->nb)
      for (int64_t i = b->row; i < b->row + b->rows;
           i = (i / lib->mb + 1) * lib->mb) {
        int64_t lr = 0, lc = 0, bi = i / lib->mb, bj = j / lib->nb;
        if (mlsba__mpi_matrix_owner_of(lib, bi, bj, &lr, &lc) != lib->rank ||
            lr + (i - bi * lib->mb) != b->local_row + (i - b->row) ||
            lc + (j - bj * lib->nb) != b->local_col + (j - b->col))
          return 0;
      }
    area += b->rows * b->cols;
  }
  return area == lib_area;
}

/* Collective (the dist form): which of the caller's arrays the product
 * can use where they lie, on every rank: no transpose to make, no alpha
 * to scale A by. */
static void borrowable(mlsba__mpi_mult_t *C, mlsba_mpi_matrix_t *const lib[3],
                       const mlsba__mpi_source_t *src, int out[3]) {
  const mlsba_mpi_multiply_opts_t *o = C->o;
  int mine[3] = {o->transa == 'N' && o->alpha == 1 &&
                     same_place(src->desc[0], lib[0]),
                 o->transb == 'N' && same_place(src->desc[1], lib[1]),
                 same_place(src->desc[2], lib[2])};
  MPI_Allreduce(mine, out, 3, MPI_INT, MPI_LAND, C->comm);
}

/* One matrix (which) into dst, in the op orientation: its stored
 * rectangle (row0, rows, col0, cols of the layout's description lib)
 * made, asked of the callback or redistributed, then transposed where
 * trans is 'T' (dst then holds cols x rows). Collective in the dist
 * form; the caller agrees on the outcome. */
static int one_matrix(mlsba__mpi_mult_t *C, int which,
                      const mlsba_mpi_matrix_t *lib,
                      const mlsba__mpi_source_t *src, char trans, void *dst,
                      mlsba__mpi_scratch_t *scratch, mlsba_mpi_split_t *split) {
  const mlsba_mpi_multiply_opts_t *o = C->o;
  const int64_t *x = lib->rect + 4 * lib->rank;
  int64_t r0 = x[0], rows = x[1], c0 = x[2], cols = x[3];
  size_t es = mlsba__mpi_elem(o->precision), n = (size_t)(rows * cols);
  void *at = dst;
  int err = 0;
  if (trans == 'T' && n > 0 && (at = copy_alloc(n * es)) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory for %s's transpose",
                       matrix_name[which]);
  double t0 = MPI_Wtime();
  if (src->dist) {
    const void *from = which == 0 ? src->a : which == 1 ? src->b : src->c;
    err = mlsba__mpi_redistribute_with(src->desc[which], from, lib, at,
                                       o->precision, scratch);
    if (!err)
      say_moved(C, matrix_in[which], scratch, es, MPI_Wtime() - t0);
    split->move_s += MPI_Wtime() - t0;
    t0 = MPI_Wtime();
  } else if (n > 0 && o->fill == NULL) {
    mlsba__mpi_fill(at, o->seed, which, r0, c0, rows, cols, o->precision);
  } else if (n > 0) {
    int rc = o->fill(o->fill_user, which, r0, c0, rows, cols, at, rows);
    if (rc != 0)
      err = mlsba__fail(MLSBA_EINVAL,
                        "the application's fill of %s rows %lld..%lld, "
                        "columns %lld..%lld returned %d",
                        matrix_name[which], (long long)r0,
                        (long long)(r0 + rows - 1), (long long)c0,
                        (long long)(c0 + cols - 1), rc);
  }
  if (!err && trans == 'T' && n > 0)
    transpose(at, rows, cols, rows, dst, cols, es);
  if (at != dst)
    free(at);
  split->fill_s += MPI_Wtime() - t0;
  return err;
}

/* Collective (the dist form): which of the caller's A and B every rank
 * finds as the last run moved them (operands_keep.c), so that the
 * layout's copy, alpha applied, serves again: bit 0 A, bit 1 B. */
static unsigned unchanged(mlsba__mpi_mult_t *C, const mlsba__mpi_source_t *src,
                          const mlsba__mpi_operands_t *ops, size_t es) {
  const void *x[2] = {src->a, src->b};
  int mine[2], all[2];
  for (int w = 0; w < 2; w++)
    mine[w] = !ops->borrowed[w] &&
              mlsba__mpi_kept_same(&ops->kept[w], src->desc[w], x[w], es,
                                   (src->same >> w & 1u) != 0);
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_LAND, C->comm);
  return (all[0] ? 1u : 0u) | (all[1] ? 2u : 0u);
}

int mlsba__mpi_operands_make(mlsba__mpi_mult_t *C,
                             const mlsba__mpi_layout_t *lay,
                             mlsba_mpi_matrix_t *const lib[3],
                             const mlsba__mpi_source_t *src,
                             mlsba__mpi_operands_t *ops,
                             mlsba_mpi_split_t *split) {
  const mlsba_mpi_multiply_opts_t *o = C->o;
  const mlsba__mpi_part_t *p = &lay->part[C->rank];
  ops->a = ops->b = ops->c = NULL;
  ops->reused = 0;
  ops->overwrite = 0;
  memset(ops->borrowed, 0, sizeof ops->borrowed);
  if (mlsba__mpi_node_simulated(C->node))
    return 0; /* simulated devices compute nothing: no operands */
  size_t es = mlsba__mpi_elem(o->precision);
  size_t na = (size_t)(p->rows * p->aks), nb = (size_t)(p->bks * p->cols),
         nc = (size_t)(p->rows * p->cols);
  if (src->dist)
    borrowable(C, lib, src, ops->borrowed);
  const void *given[3] = {src->a, src->b, src->c};
  size_t n[3] = {na, nb, nc};
  void **at[3] = {&ops->a, &ops->b, &ops->c};
  int fresh_c = 0; /* C''s buffer new: never touched yet */
  for (int w = 0; w < 3; w++) {
    if (ops->borrowed[w]) {
      *at[w] = n[w] > 0 ? (void *)(uintptr_t)given[w] : NULL;
      continue;
    }
    if (ops->cap[w] < n[w] || ops->buf[w] == NULL) {
      if (w < 2)
        ops->kept[w].valid = 0; /* a new buffer holds nothing yet */
      free(ops->buf[w]);
      ops->buf[w] =
          w == 2 ? mlsba__big_alloc(n[w] * es) : copy_alloc(n[w] * es);
      ops->cap[w] = ops->buf[w] ? n[w] : 0;
      fresh_c |= w == 2;
    }
    *at[w] = ops->buf[w];
  }
  /* beta 0: C' starts at zero (the caller's C too, when it is C'), or,
   * on a node of cores, the product's first step writes it with beta 0
   * (ops->overwrite). A memset of C' is a pass over it each product
   * (rank 0's 36 MB at 3000^3 on three ranks: 1 to 38 ms on the 2-core
   * VM under load), but it is also a fresh buffer's first touch: its
   * page faults (10-15 ms a MB on a VM without huge pages) are paid here,
   * not inside the timed product, where the first GEMM step took them
   * (3a7d32b: run-scalapack's INPA 0.18 s -> 0.32 s at 2048). So the
   * memset stays for a new buffer of the multiplier's and for the
   * caller's C the first time it is borrowed (whose pages may be as new:
   * pdgemm-peer's calloc'ed C), and the steps overwrite C' too, so that
   * every product with beta 0 computes C' alike. */
  double t0 = MPI_Wtime();
  if (ops->c && o->beta == 0 && nc > 0) {
    ops->overwrite = mlsba__mpi_node_can_overwrite(C->node);
    if (!ops->overwrite || fresh_c ||
        (ops->borrowed[2] && ops->c != ops->warm_c))
      memset(ops->c, 0, nc * es);
  }
  ops->warm_c = ops->borrowed[2] ? ops->c : NULL;
  split->fill_s += MPI_Wtime() - t0;
  int err = (ops->a || ops->borrowed[0]) && (ops->b || ops->borrowed[1]) &&
                    (ops->c || ops->borrowed[2])
                ? 0
                : mlsba__fail(MLSBA_ENOMEM,
                              "out of memory for A', B' and C' (%zu, %zu and "
                              "%zu elements)",
                              na, nb, nc);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  t0 = MPI_Wtime();
  if (src->dist) {
    ops->reused = unchanged(C, src, ops, es);
    split->move_s += MPI_Wtime() - t0;
  }
  char trans[3] = {o->transa, o->transb, 'N'};
  void *dst[3] = {ops->a, ops->b, ops->c};
  const void *given_at[2] = {src->a, src->b};
  for (int w = 0; w < 3 && !err; w++) {
    if ((w == 2 && o->beta == 0) || ops->borrowed[w] || (ops->reused >> w & 1u))
      continue; /* never read, already where the product wants it, or
                   the caller's same operand as the last run moved */
    if (w < 2)
      ops->kept[w].valid = 0; /* the buffer is about to change */
    err = mlsba__mpi_agree(C->comm, one_matrix(C, w, lib[w], src, trans[w],
                                               dst[w], &ops->scratch, split));
    if (!err && w < 2 && src->dist) {
      t0 = MPI_Wtime();
      mlsba__mpi_kept_take(&ops->kept[w], src->desc[w], given_at[w], es,
                           !(src->same >> w & 1u));
      split->move_s += MPI_Wtime() - t0;
    }
  }
  t0 = MPI_Wtime();
  if (!err && o->alpha != 1 && !(ops->reused & 1u))
    scale(ops->a, na, o->alpha, o->precision);
  if (!err && o->beta != 0 && o->beta != 1)
    scale(ops->c, nc, o->beta, o->precision);
  split->fill_s += MPI_Wtime() - t0;
  if (err) /* an A' left without its alpha must not serve again */
    mlsba__mpi_operands_forget(ops);
  return err;
}

void mlsba__mpi_operands_forget(mlsba__mpi_operands_t *ops) {
  ops->kept[0].valid = ops->kept[1].valid = 0;
  ops->warm_c = NULL;
}

void mlsba__mpi_operands_free(mlsba__mpi_operands_t *ops) {
  for (int w = 0; w < 3; w++)
    free(ops->buf[w]);
  mlsba__mpi_kept_free(&ops->kept[0]);
  mlsba__mpi_kept_free(&ops->kept[1]);
  mlsba__mpi_scratch_free(&ops->scratch);
  memset(ops, 0, sizeof *ops);
}

/* Every rank's C' into the whole C on rank 0 (column-major, m x n). */
static int gather_c(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                    const void *c, mlsba_mpi_result_t *r) {
  const mlsba_mpi_multiply_opts_t *o = C->o;
  size_t es = mlsba__mpi_elem(o->precision), m = (size_t)lay->m,
         n = (size_t)lay->n;
  int err = 0;
  if (C->rank == 0 && (m * n * es / es / n != m ||
                       (r->c_all = mlsba__big_alloc(m * n * es)) == NULL))
    err = mlsba__fail(MLSBA_ENOMEM,
                      "gather: no room for C (%zu x %zu) on "
                      "rank 0",
                      m, n);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  /* One message a column of C' would be many: each rank sends its C'
   * whole, in pieces of at most 2^30 bytes so that counts fit an int. */
  const mlsba__mpi_part_t *me = &lay->part[C->rank];
  size_t bytes = (size_t)(me->rows * me->cols) * es, piece = (size_t)1 << 30;
  if (C->rank != 0) {
    for (size_t at = 0; at < bytes; at += piece)
      MPI_Send((const char *)c + at,
               (int)(bytes - at < piece ? bytes - at : piece), MPI_BYTE, 0, 0,
               C->comm);
    return mlsba__mpi_agree(C->comm, 0);
  }
  for (int i = 0; i < C->q; i++) {
    const mlsba__mpi_part_t *x = &lay->part[i];
    size_t sz = (size_t)(x->rows * x->cols) * es;
    char *buf = i == 0 ? (char *)c : mlsba__big_alloc(sz);
    if (buf == NULL) { /* drain the rank's messages anyway */
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
      buf = malloc(piece);
      for (size_t at = 0; buf && at < sz; at += piece)
        MPI_Recv(buf, (int)(sz - at < piece ? sz - at : piece), MPI_BYTE, i, 0,
                 C->comm, MPI_STATUS_IGNORE);
      free(buf);
      continue;
    }
    for (size_t at = 0; i != 0 && at < sz; at += piece)
      MPI_Recv(buf + at, (int)(sz - at < piece ? sz - at : piece), MPI_BYTE, i,
               0, C->comm, MPI_STATUS_IGNORE);
    for (int64_t j = 0; j < x->cols; j++)
      memcpy((char *)r->c_all +
                 ((size_t)(x->col0 + j) * m + (size_t)x->row0) * es,
             buf + (size_t)(j * x->rows) * es, (size_t)x->rows * es);
    if (i != 0)
      free(buf);
  }
  return mlsba__mpi_agree(C->comm, err);
}

int mlsba__mpi_operands_hand_back(mlsba__mpi_mult_t *C,
                                  const mlsba__mpi_layout_t *lay,
                                  mlsba_mpi_matrix_t *const lib[3],
                                  const mlsba__mpi_source_t *src,
                                  mlsba__mpi_operands_t *ops,
                                  mlsba_mpi_result_t *r,
                                  mlsba_mpi_split_t *split) {
  const mlsba__mpi_part_t *me = &lay->part[C->rank];
  int sim = mlsba__mpi_node_simulated(C->node), err = 0;
  double t0 = MPI_Wtime();
  if (src->dist && !sim && !ops->borrowed[2]) {
    err = mlsba__mpi_redistribute_with(lib[2], ops->c, src->desc[2], src->c,
                                       C->o->precision, &ops->scratch);
    if (!err)
      say_moved(C, "C back", &ops->scratch, mlsba__mpi_elem(C->o->precision),
                MPI_Wtime() - t0);
    split->move_back_s += MPI_Wtime() - t0;
    split->move_s += MPI_Wtime() - t0;
    t0 = MPI_Wtime();
  }
  if (!err && C->o->gather && !sim)
    err = gather_c(C, lay, ops->c, r);
  r->c_row0 = me->row0;
  r->c_col0 = me->col0;
  r->c_rows = me->rows;
  r->c_cols = me->cols;
  if (!err && !src->dist && ops->c) { /* the result owns C' now */
    r->c = ops->c;
    ops->c = ops->buf[2] = NULL;
    ops->cap[2] = 0;
  }
  split->gather_s += MPI_Wtime() - t0;
  return err;
}
