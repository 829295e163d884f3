/* mlsba_mpi_multiply: INPA across the ranks of a communicator, then the
 * two-dimensional blocked product with the arrangement it found
 * (multiply.h says which file does what).
 *
 * Every rank first agrees on the call's arguments and options, then the
 * two phases run: the balancing (multiply_balance.c) leaves every rank
 * with its rectangle of C and its node balanced for it; the product
 * (product.c) runs on the rank's own A', B', C'. Every exchange is
 * preceded by a collective status check, so an error on any rank stops
 * all of them with one message. */
#include <limits.h>
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

static int check_opts(const mlsba_mpi_multiply_opts_t *o, int q) {
  if (o->platform == NULL || o->platform[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "no platform file given");
  if (o->block < 1)
    return mlsba__fail(MLSBA_EINVAL, "block must be >= 1, got %lld",
                       (long long)o->block);
  if (o->n < 1 || o->n % o->block != 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "size %lld is not a positive multiple of the block %lld",
                       (long long)o->n, (long long)o->block);
  /* N bounds every count the layer hands MPI (a panel's rows, its
   * leading dimension) and keeps N^2 and N b within int64. */
  if (o->n > INT32_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "size %lld is above %d, the largest this layer can "
                       "index",
                       (long long)o->n, INT32_MAX);
  int64_t nb = o->n / o->block;
  if (nb > INT32_MAX / nb || nb * nb < q)
    return mlsba__fail(MLSBA_EINVAL, "%lld x %lld blocks for %d ranks: %s",
                       (long long)nb, (long long)nb, q,
                       nb * nb < q ? "fewer blocks than nodes"
                                   : "too many blocks");
  if (!(o->eps >= 0) || o->max_iter < 1)
    return mlsba__fail(MLSBA_EINVAL, "eps must be >= 0 and max_iter >= 1");
  if ((unsigned)o->comm_model > MLSBA_MPI_COMM_LINKS)
    return mlsba__fail(MLSBA_EINVAL, "unknown communication model %d",
                       (int)o->comm_model);
  if ((unsigned)o->algorithm > MLSBA_MPI_HOMOGENEOUS ||
      (unsigned)o->node_algorithm > MLSBA_MPI_NODE_IDPA ||
      (o->precision != MLSBA_PRECISION_DOUBLE &&
       o->precision != MLSBA_PRECISION_SINGLE))
    return mlsba__fail(MLSBA_EINVAL, "unknown algorithm or precision");
  return 0;
}

/* The options every rank must share, as rank 0 has them: a rank with
 * another size or block sizes its messages differently (a buffer
 * overflow, a truncated message), another precision sends other types,
 * another algorithm runs another loop, a fill on some ranks only makes
 * the others' A and B another product's, a gather on some ranks only
 * leaves rank 0 waiting for C. The platform path is each rank's own (an
 * MPMD launch may name a file per rank). */
static int agree_on_opts(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o) {
  int fill = o->fill != NULL;
  const mlsba__mpi_value_t same[] = {
      MLSBA__MPI_NUMBER("option n (the size)", o->n),
      MLSBA__MPI_NUMBER("option block", o->block),
      MLSBA__MPI_ENUM_VALUE("option algorithm", o->algorithm,
                            mlsba__mpi_spell_algo),
      MLSBA__MPI_ENUM_VALUE("option node_algorithm", o->node_algorithm,
                            mlsba__mpi_spell_node_algo),
      MLSBA__MPI_NUMBER("option eps", o->eps),
      MLSBA__MPI_NUMBER("option max_iter", o->max_iter),
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

/* The product on this rank's own A', B', C' (made from global indices),
 * then the check of sampled elements of C'. */
static int product(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r) {
  int err = mlsba__mpi_mult_check_memory(
      C, mlsba__mpi_mult_rect_bytes(C, C->mine.m, C->mine.n, 1), "the product");
  if (err)
    return err;
  const mlsba_mpi_multiply_opts_t *o = C->o;
  int64_t b = o->block;
  int64_t *lay4 = malloc((size_t)C->q * 4 * sizeof *lay4);
  int64_t *m = malloc((size_t)C->q * 4 * sizeof *m);
  err = (!lay4 || !m) ? mlsba__fail(MLSBA_ENOMEM, "out of memory") : 0;
  int sim = mlsba__mpi_node_simulated(C->node);
  int64_t bm = C->mine.m * b, bn = C->mine.n * b;
  size_t es = mlsba__mpi_elem(o->precision);
  void *a = NULL, *bb = NULL, *c = NULL;
  if (!err && !sim) {
    a = malloc((size_t)(bm * bn) * es);
    bb = malloc((size_t)(bm * bn) * es);
    c = calloc((size_t)(bm * bn), es);
    if (!a || !bb || !c)
      err = mlsba__fail(MLSBA_ENOMEM,
                        "out of memory for A', B' and C' (%lld x %lld each)",
                        (long long)bm, (long long)bn);
  }
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  if (!sim)
    err = mlsba__mpi_fill_operands(o, C->mine.row * b, C->mine.col * b, bm, bn,
                                   a, bb);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  int64_t me4[4] = {C->mine.m, C->mine.n, C->mine.row, C->mine.col};
  MPI_Allgather(me4, 4, MPI_INT64_T, lay4, 4, MPI_INT64_T, C->comm);
  int q = C->q;
  for (int i = 0; i < q; i++)
    for (int f = 0; f < 4; f++)
      m[f * q + i] = lay4[4 * i + f];
  mlsba__mpi_layout_t lay = {q, C->nb, b, m, m + q, m + 2 * q, m + 3 * q};
  mlsba__mpi_product_stats_t st;
  if ((err = mlsba__mpi_product(C->comm, &lay, C->node, o->precision, a, bb, c,
                                &st)) != 0)
    goto done;
  int ok = 1, all_ok = 1;
  double rel = 0;
  if (!sim && o->verify_samples > 0)
    err = mlsba__mpi_check_c(o, c, C->mine.row * b, C->mine.col * b, bm, bn,
                             o->seed * 7919u + (uint64_t)C->rank, &rel, &ok);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, C->comm);
  MPI_Allreduce(&rel, &r->max_rel_error, 1, MPI_DOUBLE, MPI_MAX, C->comm);
  r->verified = sim || o->verify_samples == 0 ? -1 : all_ok;
  if ((err = mlsba__mpi_mult_report(C, &st, r)) == 0)
    err = mlsba__mpi_hand_back_c(C->comm, o, &c, C->mine.row * b,
                                 C->mine.col * b, bm, bn, r);
done:
  free(lay4);
  free(m);
  free(a);
  free(bb);
  free(c);
  return err;
}

/* The head's scalars, for every rank. */
static void share_head_scalars(MPI_Comm comm, mlsba_mpi_result_t *r) {
  const mlsba__mpi_value_t scalars[] = {
      MLSBA__MPI_NUMBER("iterations", r->iterations),
      MLSBA__MPI_NUMBER("converged", r->converged),
      MLSBA__MPI_NUMBER("imbalance", r->imbalance),
      MLSBA__MPI_NUMBER("half_perimeter_sum", r->half_perimeter_sum),
      MLSBA__MPI_NUMBER("half_perimeter_lower_bound",
                        r->half_perimeter_lower_bound),
      MLSBA__MPI_ENUM_VALUE("stop", r->stop, NULL),
      MLSBA__MPI_NUMBER("run_iteration", r->run_iteration)};
  mlsba__mpi_share_values(comm, 0, scalars, sizeof scalars / sizeof *scalars);
}

int mlsba_mpi_multiply(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o,
                       mlsba_mpi_result_t *r) {
  if (r != NULL)
    memset(r, 0, sizeof *r);
  if (comm == MPI_COMM_NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_multiply: comm is "
                                     "MPI_COMM_NULL");
  mlsba__mpi_mult_t C = {.comm = comm, .host = MPI_COMM_NULL, .o = o};
  MPI_Comm_rank(comm, &C.rank);
  MPI_Comm_size(comm, &C.q);
  /* Every rank's arguments before anything else: a rank that returned
   * alone would leave the others waiting in their first message. */
  int err = o == NULL || r == NULL
                ? mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_multiply: %s is NULL",
                              o == NULL ? "opts" : "result")
                : check_opts(o, C.q);
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    return err;
  r->nodes = C.q;
  char path[1024];
  int local_rank = 0, local_size = 1;
  /* Collective on every rank (the split of the ranks by host, the
   * expansion of %r, %h and %l), then the head's options agreed on. */
  int e = mlsba__mpi_local_rank(comm, &local_rank, &local_size);
  int ep = mlsba_mpi_platform_path(comm, o->platform, path, sizeof path);
  if ((err = mlsba__mpi_agree(comm, e ? e : ep)) != 0 ||
      (err = agree_on_opts(comm, o)) != 0)
    return err;
  C.nb = o->n / o->block;
  err = mlsba__mpi_node_open_at(path, local_rank, local_size, o, &C.node);
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    return err;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &C.host);
  if ((err = mlsba__mpi_mult_balance(&C, r)) == 0 &&
      (err = product(&C, r)) == 0)
    share_head_scalars(comm, r);
  if (C.host != MPI_COMM_NULL)
    MPI_Comm_free(&C.host);
  mlsba__inpa_destroy(C.head);
  free(C.links);
  free(C.link_source);
  mlsba__mpi_node_close(C.node);
  if (err)
    mlsba_mpi_result_free(r);
  return err;
}
