/* The product's options (defaults, checks, the ranks' agreement on
 * them) and mlsba_mpi_multiply(), a multiplier made, run once and
 * destroyed (multiplier.c; multiply.h says which file does what).
 *
 * Every rank first agrees on the call's arguments and options, so that an
 * error on any rank stops all of them with one message. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "multiply.h"

void mlsba_mpi_multiply_opts_init(mlsba_mpi_multiply_opts_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->algorithm = MLSBA_MPI_INPA;
  o->node_algorithm = MLSBA_MPI_NODE_MLSBA;
  o->eps = 0.05;
  o->max_iter = 20;
  o->precision = MLSBA_PRECISION_DOUBLE;
  o->seed = 1;
  o->verify_samples = 64;
  o->platform = "auto";
  o->transa = o->transb = 'N';
  o->alpha = 1;
  o->beta = 0;
  o->drift = 2 * o->eps;
}

/* The former name, kept for programs written against it. */
void mlsba_mpi_opts_init(mlsba_mpi_multiply_opts_t *o) {
  mlsba_mpi_multiply_opts_init(o);
}

void mlsba_mpi_result_free(mlsba_mpi_result_t *r) {
  if (r == NULL)
    return;
  for (int i = 0; r->ranks && i < r->nodes; i++) {
    for (size_t d = 0; r->ranks[i].devices && d < r->ranks[i].ndevices; d++)
      free(r->ranks[i].devices[d].full_name);
    free(r->ranks[i].devices);
  }
  free(r->ranks);
  free(r->history_w);
  free(r->history_time);
  free(r->history_imbalance);
  free(r->c);
  free(r->c_all);
  memset(r, 0, sizeof *r);
}

/* 'N' or 'T' for BLAS's letters ('C' is 'T' for real matrices, 0 the
 * default); 0 for anything else. */
static char op_letter(char t) {
  switch (t) {
  case 0:
  case 'N':
  case 'n':
    return 'N';
  case 'T':
  case 't':
  case 'C':
  case 'c':
    return 'T';
  default:
    return 0;
  }
}

/* N bounds every count the layer hands MPI (a panel's rows, its leading
 * dimension) and keeps products of two sizes within int64. */
static int check_size(const char *what, int64_t v) {
  if (v < 1)
    return mlsba__fail(MLSBA_EINVAL, "%s must be >= 1, got %lld", what,
                       (long long)v);
  if (v > INT32_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s %lld is above %d, the largest this layer can "
                       "index",
                       what, (long long)v, INT32_MAX);
  return 0;
}

/* The layout's cells are g x g, g the smaller side of C in blocks, and
 * every rank needs a cell: say which side is short, and the block (or the
 * rank count) that would run, rather than count C's blocks, which can be
 * many more than the ranks (7 x 1 blocks for 2 ranks). */
static int too_few_cells(const mlsba__mpi_grid_t *g, int q) {
  int64_t side = 1; /* cells a side must have: ceil(sqrt(q)) */
  while (side * side < q)
    side++;
  int64_t shorter = g->m < g->n ? g->m : g->n;
  const char *name = g->m < g->n ? "m" : "n";
  /* No block runs q ranks: the ranks that run at this block (g^2) and,
   * where that has fewer cells a side than the short side's elements, at
   * a block of 1 (shorter^2: at 2 x 2 and a block of 64, 4 ranks meet a
   * 1 x 1 layout). */
  if (shorter < side) {
    char at_one[96] = "";
    if (g->g != shorter)
      snprintf(at_one, sizeof at_one,
               " at the block of %lld, at most %lld with a block of 1",
               (long long)g->b, (long long)(shorter * shorter));
    return mlsba__fail(MLSBA_EINVAL,
                       "C is %lld x %lld: the layout gives each of %d ranks a "
                       "cell of a %lld x %lld grid of blocks, and %s = %lld "
                       "is below %lld; use at most %lld rank%s%s",
                       (long long)g->m, (long long)g->n, q, (long long)side,
                       (long long)side, name, (long long)shorter,
                       (long long)side, (long long)(g->g * g->g),
                       g->g * g->g > 1 ? "s" : "", at_one);
  }
  return mlsba__fail(MLSBA_EINVAL,
                     "C's %lld x %lld blocks of %lld give a layout of %lld x "
                     "%lld cells (the smaller side in blocks, squared) for %d "
                     "ranks, each of which needs a cell; use a block of at "
                     "most %lld (%s = %lld) or at most %lld rank%s",
                     (long long)g->rb, (long long)g->cb, (long long)g->b,
                     (long long)g->g, (long long)g->g, q,
                     (long long)(shorter / side), name, (long long)shorter,
                     (long long)(g->g * g->g), g->g > 1 ? "s" : "");
}

int mlsba__mpi_multiply_resolve(const mlsba_mpi_multiply_opts_t *in, int q,
                                mlsba_mpi_multiply_opts_t *o) {
  *o = *in;
  if (o->m == 0)
    o->m = o->n;
  if (o->k == 0)
    o->k = o->n;
  if (o->platform == NULL || o->platform[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "no platform file given");
  if (o->block < 1)
    return mlsba__fail(MLSBA_EINVAL, "block must be >= 1, got %lld",
                       (long long)o->block);
  int err = check_size("size", o->n);
  if (!err)
    err = check_size("m", o->m);
  if (!err)
    err = check_size("k", o->k);
  if (err)
    return err;
  mlsba__mpi_grid_t g;
  mlsba__mpi_grid_init(&g, o->m, o->n, o->k, o->block);
  if (g.g > INT32_MAX / g.g)
    return mlsba__fail(MLSBA_EINVAL, "%lld x %lld blocks of C: too many blocks",
                       (long long)g.rb, (long long)g.cb);
  if (g.g * g.g < q)
    return too_few_cells(&g, q);
  if ((o->transa = op_letter(in->transa)) == 0 ||
      (o->transb = op_letter(in->transb)) == 0)
    return mlsba__fail(MLSBA_EINVAL, "trans%c must be 'N' or 'T', got '%c'",
                       op_letter(in->transa) ? 'b' : 'a',
                       op_letter(in->transa) ? in->transb : in->transa);
  if (!isfinite(o->alpha) || !isfinite(o->beta))
    return mlsba__fail(MLSBA_EINVAL, "alpha and beta must be finite");
  if (!(o->eps >= 0) || o->max_iter < 1 || !(o->drift >= 0) ||
      !isfinite(o->drift))
    return mlsba__fail(MLSBA_EINVAL,
                       "eps and drift must be >= 0 and max_iter >= 1");
  if ((unsigned)o->comm_model > MLSBA_MPI_COMM_LINKS)
    return mlsba__fail(MLSBA_EINVAL, "unknown communication model %d",
                       (int)o->comm_model);
  if ((unsigned)o->algorithm > MLSBA_MPI_HOMOGENEOUS ||
      (unsigned)o->node_algorithm > MLSBA_MPI_NODE_IDPA ||
      (o->precision != MLSBA_PRECISION_DOUBLE &&
       o->precision != MLSBA_PRECISION_SINGLE))
    return mlsba__fail(MLSBA_EINVAL, "unknown algorithm or precision");
  if (o->model_dir != NULL && o->model_dir[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "model_dir is \"\": give a directory "
                                     "or NULL");
  return 0;
}

static const char *spell_op(int64_t v) {
  return v == 'N' ? "N" : v == 'T' ? "T" : NULL;
}

/* The options every rank must share, as rank 0 has them: a rank with
 * another size or block sizes its messages differently (a buffer
 * overflow, a truncated message), another precision sends other types,
 * another algorithm runs another loop, a fill on some ranks only makes
 * the others' A and B another product's, a gather on some ranks only
 * leaves rank 0 waiting for C. The platform path and the model directory
 * are each rank's own (an MPMD launch may name a file per rank). */
int mlsba__mpi_multiply_agree_opts(MPI_Comm comm,
                                   const mlsba_mpi_multiply_opts_t *o) {
  int fill = o->fill != NULL;
  const mlsba__mpi_value_t same[] = {
      MLSBA__MPI_NUMBER("option n (the size)", o->n),
      MLSBA__MPI_NUMBER("option m", o->m),
      MLSBA__MPI_NUMBER("option k", o->k),
      MLSBA__MPI_NUMBER("option block", o->block),
      MLSBA__MPI_ENUM_VALUE("option transa", o->transa, spell_op),
      MLSBA__MPI_ENUM_VALUE("option transb", o->transb, spell_op),
      MLSBA__MPI_NUMBER("option alpha", o->alpha),
      MLSBA__MPI_NUMBER("option beta", o->beta),
      MLSBA__MPI_ENUM_VALUE("option algorithm", o->algorithm,
                            mlsba__mpi_spell_algo),
      MLSBA__MPI_ENUM_VALUE("option node_algorithm", o->node_algorithm,
                            mlsba__mpi_spell_node_algo),
      MLSBA__MPI_NUMBER("option eps", o->eps),
      MLSBA__MPI_NUMBER("option max_iter", o->max_iter),
      MLSBA__MPI_NUMBER("option drift", o->drift),
      MLSBA__MPI_ENUM_VALUE("option precision", o->precision,
                            mlsba__mpi_spell_precision),
      MLSBA__MPI_NUMBER("option seed", o->seed),
      MLSBA__MPI_NUMBER("option verify_samples", o->verify_samples),
      MLSBA__MPI_ENUM_VALUE("option comm_model", o->comm_model,
                            mlsba__mpi_spell_comm_model),
      MLSBA__MPI_ENUM_VALUE("option fill", fill, mlsba__mpi_spell_set),
      MLSBA__MPI_NUMBER("option gather", o->gather)};
  return mlsba__mpi_agree_values(comm, same, sizeof same / sizeof *same,
                                 "every rank must pass the same options");
}

int mlsba_mpi_multiply(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o,
                       mlsba_mpi_result_t *r) {
  if (r != NULL)
    memset(r, 0, sizeof *r);
  int bad = r == NULL ? mlsba__fail(MLSBA_EINVAL,
                                    "mlsba_mpi_multiply: result is NULL")
                      : 0;
  mlsba_mpi_multiplier_t *M = NULL;
  int err =
      mlsba__mpi_multiplier_create(comm, o, bad, "mlsba_mpi_multiply", &M);
  if (err)
    return err;
  err = mlsba_mpi_multiplier_run(M, r);
  const mlsba_mpi_result_t *bal = mlsba_mpi_multiplier_balancing(M);
  if (!err) { /* the whole call: the balancing too */
    r->wall_s += bal->wall_s;
    r->split.balance_s += bal->split.balance_s;
    r->rebalanced = 1;
  }
  mlsba_mpi_multiplier_destroy(M);
  return err;
}
