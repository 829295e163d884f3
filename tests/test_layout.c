/* The 2-D block-cyclic layouts of the factorizations across nodes: the
 * homogeneous one against ScaLAPACK's index formulas (written here from
 * their definitions in TOOLS/), every layout's ownership (every block
 * once, local <-> global both ways), and seed 003's process scaling on
 * its own numbers. The tracked walks are test_layout_walk.c's. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/layout.h"
#include "support/layout_check.h"
#include "support/random_models.h"
#include "support/run_suite.h"

#define MAXQ 16

typedef const mlsba_model_t *const *models_t;

/* ---- ScaLAPACK's TOOLS/numroc.f, indxg2p.f, indxg2l.f, indxl2g.f ------
 * (1-based global and local indices, as there). */
static int64_t numroc(int64_t n, int64_t nb, int64_t iproc, int64_t isrc,
                      int64_t nprocs) {
  int64_t mydist = (nprocs + iproc - isrc) % nprocs;
  int64_t nblocks = n / nb;
  int64_t num = (nblocks / nprocs) * nb;
  int64_t extra = nblocks % nprocs;
  if (mydist < extra)
    num += nb;
  else if (mydist == extra)
    num += n % nb;
  return num;
}

static int64_t indxg2p(int64_t g, int64_t nb, int64_t isrc, int64_t nprocs) {
  return (isrc + (g - 1) / nb) % nprocs;
}

static int64_t indxg2l(int64_t g, int64_t nb, int64_t nprocs) {
  return nb * ((g - 1) / (nb * nprocs)) + (g - 1) % nb + 1;
}

static int64_t indxl2g(int64_t l, int64_t nb, int64_t iproc, int64_t isrc,
                       int64_t nprocs) {
  return nprocs * nb * ((l - 1) / nb) + (l - 1) % nb +
         ((nprocs + iproc - isrc) % nprocs) * nb + 1;
}

START_TEST(homogeneous_is_scalapack_block_cyclic) {
  rng_t g = {0x5ca1a000u + (uint64_t)_i};
  for (int k = 0; k < 60; k++) {
    int64_t m = rng_range(&g, 1, 300), n = rng_range(&g, 1, 300);
    int64_t nb = rng_range(&g, 1, 40);
    size_t P = (size_t)rng_range(&g, 1, 6), Q = (size_t)rng_range(&g, 1, 6);
    mlsba__layout_t *L = NULL;
    ck_assert_int_eq(mlsba__layout_homogeneous(m, n, nb, P, Q, &L), 0);
    check_layout_ownership(L);
    for (int64_t gi = 1; gi <= m; gi++)
      for (int64_t gj = 1; gj <= n; gj += nb) {
        int64_t bi = (gi - 1) / nb, bj = (gj - 1) / nb;
        size_t owner = (size_t)(indxg2p(gi, nb, 0, (int64_t)P) * (int64_t)Q +
                                indxg2p(gj, nb, 0, (int64_t)Q));
        ck_assert_uint_eq(mlsba__layout_owner(L, bi, bj), owner);
        size_t c = mlsba__layout_bcol_column(L, bj);
        ck_assert_int_eq(mlsba__layout_row_g2l(L, c, bi) * nb + (gi - 1) % nb +
                             1,
                         indxg2l(gi, nb, (int64_t)P));
      }
    for (int64_t gj = 1; gj <= n; gj++)
      ck_assert_int_eq(mlsba__layout_col_g2l(L, (gj - 1) / nb) * nb +
                           (gj - 1) % nb + 1,
                       indxg2l(gj, nb, (int64_t)Q));
    for (size_t p = 0; p < P; p++)
      for (size_t q = 0; q < Q; q++) {
        size_t r = p * Q + q;
        int64_t lr, lc;
        mlsba__layout_local_size(L, r, &lr, &lc);
        ck_assert_int_eq(lr, numroc(m, nb, (int64_t)p, 0, (int64_t)P));
        ck_assert_int_eq(lc, numroc(n, nb, (int64_t)q, 0, (int64_t)Q));
        for (int64_t l = 1; l <= lr; l++)
          ck_assert_int_eq(mlsba__layout_row_l2g(L, r, (l - 1) / nb) * nb +
                               (l - 1) % nb + 1,
                           indxl2g(l, nb, (int64_t)p, 0, (int64_t)P));
        for (int64_t l = 1; l <= lc; l++)
          ck_assert_int_eq(mlsba__layout_col_l2g(L, r, (l - 1) / nb) * nb +
                               (l - 1) % nb + 1,
                           indxl2g(l, nb, (int64_t)q, 0, (int64_t)Q));
      }
    mlsba__layout_destroy(L);
  }
}
END_TEST

START_TEST(every_layout_owns_every_block_once) {
  rng_t g = {0x0be70000u + (uint64_t)_i};
  for (int k = 0; k < 60; k++) {
    size_t q = (size_t)rng_range(&g, 1, 12);
    int64_t nb = rng_range(&g, 1, 16);
    int64_t m = rng_range(&g, 1, 200), n = rng_range(&g, 1, 200);
    int lower = rng_uniform(&g) < 0.3;
    n = lower ? m : n;
    int64_t brows = (m - 1) / nb + 1, bcols = (n - 1) / nb + 1;
    mlsba_model_t *md[MAXQ];
    draw_layout_models(&g, q, (double)(brows * bcols), md);
    mlsba__layout_opts_t o = {lower, NULL, MLSBA__WALK_BEST, NULL, NULL, 0,
                              NULL,  0};
    int64_t procs[MAXQ];
    for (size_t i = 0; i < q; i++)
      procs[i] = rng_uniform(&g) < 0.3 ? rng_range(&g, 2, 6) : 1;
    size_t P, Q;
    mlsba__layout_grid(q, &P, &Q);
    mlsba__layout_t *L[4] = {NULL};
    ck_assert_int_eq(mlsba__layout_homogeneous(m, n, nb, P, Q, &L[0]), 0);
    ck_assert_int_eq(mlsba__layout_process_scaling(
                         m, n, nb, q, procs, MLSBA__GRID_ALGORITHM1, &L[1]),
                     0);
    int fits = (int64_t)q <= brows * bcols;
    int e1 = mlsba__layout_fpm((models_t)md, q, m, n, nb, &o, &L[2]);
    int e2 = mlsba__layout_constant((models_t)md, q, m, n, nb, &o, &L[3]);
    ck_assert_int_eq(e1, fits ? 0 : MLSBA_EINVAL);
    ck_assert_int_eq(e2, fits ? 0 : MLSBA_EINVAL);
    for (int a = 0; a < 4; a++) {
      if (!L[a])
        continue;
      check_layout_ownership(L[a]);
      const mlsba__layout_dims_t *d = mlsba__layout_dims(L[a]);
      ck_assert_uint_eq(d->nodes, q);
      for (size_t i = 0; i < q; i++)
        ck_assert_uint_eq(mlsba__layout_node_ranks(L[a], i),
                          a == 1 ? (size_t)procs[i] : 1);
      mlsba__layout_summary_t s;
      ck_assert_int_eq(mlsba__layout_measure(L[a], (models_t)md, &o, NULL, &s),
                       0);
      ck_assert(s.optimum_sum <= s.step_sum * (1 + 1e-9));
      mlsba__layout_destroy(L[a]);
    }
    free_layout_models(md, q);
  }
}
END_TEST

START_TEST(create_rejects_a_bad_ownership) {
  size_t rank_column[2] = {0, 0}, bcol_column[2] = {0, 0};
  size_t row_owner[2] = {0, 1}, node[2] = {0, 0};
  mlsba__layout_spec_t s = {4, 4,    2,           2,           2,
                            1, NULL, rank_column, bcol_column, row_owner};
  mlsba__layout_t *L = NULL;
  ck_assert_int_eq(mlsba__layout_create(&s, &L), 0);
  check_layout_ownership(L);
  mlsba__layout_destroy(L);
  s.rank_node = node; /* node 1 runs no rank */
  ck_assert_int_eq(mlsba__layout_create(&s, &L), MLSBA_EINVAL);
  ck_assert_ptr_null(L);
  s.rank_node = NULL;
  s.columns = 2; /* column 1 has no rank */
  ck_assert_int_eq(mlsba__layout_create(&s, &L), MLSBA_EINVAL);
  s.columns = 1;
  row_owner[1] = 2; /* no such rank */
  ck_assert_int_eq(mlsba__layout_create(&s, &L), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "block row 1"));
  row_owner[1] = 1;
  bcol_column[1] = 1; /* no such column */
  ck_assert_int_eq(mlsba__layout_create(&s, &L), MLSBA_EINVAL);
  bcol_column[1] = 0;
  s.nb = 0;
  ck_assert_int_eq(mlsba__layout_create(&s, &L), MLSBA_EINVAL);
  s.nb = 2;
  s.m = (MLSBA__LAYOUT_MAX_BLOCKS + 1) * 2;
  ck_assert_int_eq(mlsba__layout_create(&s, &L), MLSBA_EINVAL);
  s.m = 4;
  /* A row owned by a rank of another column. */
  size_t rc2[2] = {0, 1}, ro2[4] = {0, 1, 1, 1}, bc2[2] = {0, 1};
  mlsba__layout_spec_t t = {4, 4, 2, 2, 2, 2, NULL, rc2, bc2, ro2};
  ck_assert_int_eq(mlsba__layout_create(&t, &L), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "not a rank of"));
  ck_assert_int_eq(mlsba__layout_homogeneous(4, 4, 2, 0, 1, &L), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__layout_homogeneous(0, 4, 2, 1, 1, &L), MLSBA_EINVAL);
}
END_TEST

/* ---- seed 003 ---------------------------------------------------------- */

START_TEST(the_grid_is_the_nearest_to_square) {
  for (size_t T = 1; T <= 500; T++) {
    size_t P, Q;
    mlsba__layout_grid(T, &P, &Q);
    ck_assert_uint_eq(P * Q, T);
    ck_assert_uint_le(P, Q);
    for (size_t p = P + 1; p * p <= T; p++)
      ck_assert_msg(T % p != 0, "T = %zu: %zu x %zu is squarer than %zu x %zu",
                    T, p, T / p, P, Q);
  }
}
END_TEST

START_TEST(process_counts_follow_eqs_1_and_2) {
  /* The seed's own example: Ratio 5 on 12 cores, delta = -1, 4 processes;
   * its best counts were 4 (Cluster A, 8 cores) and 6 (2 GPUs). */
  ck_assert_int_eq(mlsba__process_scaling_count(5, 12), 4);
  ck_assert_int_eq(mlsba__process_scaling_count(5, 8), 4);
  ck_assert_int_eq(mlsba__process_scaling_count(6, 12), 6);
  ck_assert_int_eq(mlsba__process_scaling_count(7, 12), 6);
  ck_assert_int_eq(mlsba__process_scaling_count(9, 12), 6);
  ck_assert_int_eq(mlsba__process_scaling_count(9.5, 12), 12);
  ck_assert_int_eq(mlsba__process_scaling_count(3, 7), 1);
  ck_assert_int_eq(mlsba__process_scaling_count(0.4, 8), 1);
  ck_assert_int_eq(mlsba__process_scaling_count(NAN, 8), 1);
  ck_assert_int_eq(mlsba__process_scaling_count(2.5, 0), 2);
  ck_assert_int_eq(mlsba__process_scaling_count(2.6, 0), 3);
}
END_TEST

/* Seed 003's Table II: 4 GPU nodes of 4 processes and 8 CPU nodes, a
 * 4 x 6 grid, N = 81,920, NB = 512. */
START_TEST(process_scaling_reproduces_table_ii) {
  int64_t procs[12] = {4, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1, 1}, blocks[12];
  const int64_t optimized[12] = {4320, 4320, 4320, 4320, 1040, 1040,
                                 1040, 1040, 1040, 1040, 1040, 1040};
  const int64_t by_default[12] = {4320, 4240, 4240, 4320, 1040, 1040,
                                  1080, 1080, 1080, 1080, 1040, 1040};
  mlsba__layout_t *L = NULL;
  ck_assert_int_eq(mlsba__layout_process_scaling(81920, 81920, 512, 12, procs,
                                                 MLSBA__GRID_ALGORITHM1, &L),
                   0);
  ck_assert_uint_eq(mlsba__layout_dims(L)->ranks, 24);
  ck_assert_uint_eq(mlsba__layout_dims(L)->columns, 6);
  mlsba__layout_node_blocks(L, 0, blocks);
  for (int i = 0; i < 12; i++)
    ck_assert_int_eq(blocks[i], optimized[i]);
  mlsba__layout_destroy(L);
  ck_assert_int_eq(mlsba__layout_process_scaling(81920, 81920, 512, 12, procs,
                                                 MLSBA__GRID_ROW_MAJOR, &L),
                   0);
  mlsba__layout_node_blocks(L, 0, blocks);
  for (int i = 0; i < 12; i++)
    ck_assert_int_eq(blocks[i], by_default[i]);
  mlsba__layout_destroy(L);
}
END_TEST

/* The rows (grid rows) of node i's processes. */
static size_t rows_of_node(const mlsba__layout_t *L, size_t node) {
  const mlsba__layout_dims_t *d = mlsba__layout_dims(L);
  size_t rows = 0, Q = d->columns;
  for (size_t p = 0; p < d->ranks / Q; p++) {
    int here = 0;
    for (size_t c = 0; c < Q; c++)
      here |= mlsba__layout_rank_node(L, p * Q + c) == node;
    rows += (size_t)here;
  }
  return rows;
}

START_TEST(algorithm1_keeps_each_node_in_its_row) {
  /* 2 x 4 + 56 = 64 processes: 8 x 8, but 8 GPU processes are fewer
   * than 2P, so the grid becomes 2 x 32 (P' = 2 <= g_num). */
  int64_t procs[58];
  for (int i = 0; i < 58; i++)
    procs[i] = i < 2 ? 4 : 1;
  mlsba__layout_t *L = NULL;
  ck_assert_int_eq(mlsba__layout_process_scaling(1000, 1000, 10, 58, procs,
                                                 MLSBA__GRID_ALGORITHM1, &L),
                   0);
  ck_assert_uint_eq(mlsba__layout_dims(L)->columns, 32);
  ck_assert_uint_eq(rows_of_node(L, 0), 1);
  ck_assert_uint_eq(rows_of_node(L, 1), 1);
  check_layout_ownership(L);
  mlsba__layout_destroy(L);
  /* 3 x 4 + 20 = 32: 4 x 8 with 3 GPU nodes for 4 rows: each splits in
   * two pieces of 2 (g_num < P < g_num mpi_g alpha). */
  for (int i = 0; i < 23; i++)
    procs[i] = i < 3 ? 4 : 1;
  ck_assert_int_eq(mlsba__layout_process_scaling(1000, 1000, 10, 23, procs,
                                                 MLSBA__GRID_ALGORITHM1, &L),
                   0);
  ck_assert_uint_eq(mlsba__layout_dims(L)->columns, 8);
  for (size_t i = 0; i < 3; i++)
    ck_assert_uint_eq(rows_of_node(L, i), 2);
  mlsba__layout_destroy(L);
  procs[0] = 0;
  ck_assert_int_eq(mlsba__layout_process_scaling(1000, 1000, 10, 23, procs,
                                                 MLSBA__GRID_ALGORITHM1, &L),
                   MLSBA_EINVAL);
}
END_TEST

static Suite *layout_suite(void) {
  Suite *s = suite_create("layout");
  TCase *tc = tcase_create("cases");
  tcase_add_test(tc, create_rejects_a_bad_ownership);
  tcase_add_test(tc, the_grid_is_the_nearest_to_square);
  tcase_add_test(tc, process_counts_follow_eqs_1_and_2);
  tcase_add_test(tc, process_scaling_reproduces_table_ii);
  tcase_add_test(tc, algorithm1_keeps_each_node_in_its_row);
  suite_add_tcase(s, tc);
  tc = tcase_create("random");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, homogeneous_is_scalapack_block_cyclic, 0, 4);
  tcase_add_loop_test(tc, every_layout_owns_every_block_once, 0, 4);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(layout_suite()); }
