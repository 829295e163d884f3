/* The tracked layout's walks (lib/partition/layout_walk.c): the node
 * models' optimum at a size against its definition and SLBA; every walk
 * within a block of shares that do not move; within a block plus the
 * optimum's own drift where they do; the best walk never predicted
 * slower than another or than the constant layout; caps; and the walk
 * against brute force over every ownership of tiny matrices. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/layout.h"
#include "partition/layout_shares.h"
#include "support/layout_check.h"
#include "support/random_models.h"
#include "support/run_suite.h"

#define MAXQ 16

typedef const mlsba_model_t *const *models_t;

/* ---- the node models' optimum ------------------------------------------ */

START_TEST(the_optimum_is_the_least_common_finish) {
  rng_t g = {0x0b7100u + (uint64_t)_i};
  for (int k = 0; k < 200; k++) {
    size_t q = (size_t)rng_range(&g, 1, MAXQ);
    int64_t W = rng_range(&g, 1, 20000), cap[MAXQ], held = 0;
    mlsba_model_t *md[MAXQ];
    draw_layout_models(&g, q, (double)W, md);
    for (size_t i = 0; i < q; i++) {
      cap[i] = rng_uniform(&g) < 0.3 ? rng_range(&g, 0, W / (int64_t)q) : -1;
      held += cap[i] < 0 ? W : cap[i];
    }
    double area[MAXQ], T;
    int err = mlsba__layout_optimum((models_t)md, cap, q, (double)W, area, &T);
    if (held < W) {
      ck_assert_int_eq(err, MLSBA_ECAPACITY);
      free_layout_models(md, q);
      continue;
    }
    ck_assert_int_eq(err, 0);
    double sum = 0, below = 0;
    for (size_t i = 0; i < q; i++) {
      ck_assert(area[i] >= 0);
      ck_assert(cap[i] < 0 || area[i] <= (double)cap[i] * (1 + 1e-12));
      double t;
      mlsba_model_time(md[i], area[i], &t);
      ck_assert(t <= T * (1 + 1e-9));
      double x;
      mlsba_model_load_by_time(md[i], T * (1 - 1e-6), &x);
      below += cap[i] >= 0 && x > (double)cap[i] ? (double)cap[i] : x;
      sum += area[i];
    }
    ck_assert(fabs(sum - (double)W) <= 1e-9 * (double)W);
    /* Least: a little earlier the nodes run less than W together. */
    ck_assert(below < (double)W);
    /* No integer distribution finishes earlier. */
    int64_t loads[MAXQ];
    for (size_t i = 0; i < q; i++)
      mlsba_model_set_max_load(md[i], cap[i]);
    double ms;
    ck_assert_int_eq(mlsba_partition_slba((models_t)md, q, W, loads), 0);
    mlsba_partition_makespan((models_t)md, q, loads, &ms);
    ck_assert(T <= ms * (1 + 1e-9));
    free_layout_models(md, q);
  }
}
END_TEST

/* ---- the walks --------------------------------------------------------- */

static const mlsba__layout_walk_t walks[] = {
    MLSBA__WALK_BEST, MLSBA__WALK_REVERSE, MLSBA__WALK_FORWARD,
    MLSBA__WALK_FROZEN};

START_TEST(fixed_shares_stay_within_a_block) {
  rng_t g = {0xf1c5u + (uint64_t)_i};
  for (int k = 0; k < 40; k++) {
    size_t q = (size_t)rng_range(&g, 1, 12);
    int64_t nb = rng_range(&g, 1, 5);
    int64_t m = rng_range(&g, 1, 300), n = rng_range(&g, 1, 300);
    int lower = rng_uniform(&g) < 0.3;
    n = lower ? m : n;
    if ((int64_t)q > ((m - 1) / nb + 1) * ((n - 1) / nb + 1))
      continue;
    mlsba_model_t *md[MAXQ];
    for (size_t i = 0; i < q; i++)
      md[i] = constant_model(pow(10, 3 * rng_uniform(&g)));
    for (int w = 0; w < 4; w++) {
      mlsba__layout_opts_t o = {lower, NULL, walks[w], NULL, NULL, 0, NULL, 0};
      mlsba__layout_t *L = NULL;
      ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, m, n, nb, &o, &L), 0);
      mlsba__layout_summary_t s;
      ck_assert_int_eq(mlsba__layout_measure(L, (models_t)md, &o, NULL, &s), 0);
      ck_assert_msg(s.max_width_dev <= 1 + 1e-6 && s.max_height_dev <= 1 + 1e-6,
                    "walk %d: %g, %g blocks off", w, s.max_width_dev,
                    s.max_height_dev);
      mlsba__layout_destroy(L);
    }
    free_layout_models(md, q);
  }
}
END_TEST

/* Whether the owners own[0..len) from the end, in aligned groups of k,
 * hold each owner o want[o] times a group (nowners of them). */
static int even_groups(const size_t *own, int64_t len, size_t k,
                       const size_t *want, size_t nowners) {
  for (int64_t end = len; end - (int64_t)k >= 0; end -= (int64_t)k) {
    size_t seen[MAXQ] = {0};
    for (int64_t j = end - (int64_t)k; j < end; j++)
      seen[own[j]]++;
    for (size_t o = 0; o < nowners; o++)
      if (seen[o] != want[o])
        return 0;
  }
  return 1;
}

/* Equal speeds: Kalinov and Lastovetsky's layout is block-cyclic in the
 * counts, each aligned group of block columns (rows) from the bottom
 * right holding every node column (node) its share, and balanced to a
 * block; within a group the block columns' order turns (0 1 1 0 0 1 ...
 * on two) so that the block a trailing matrix has over passes between
 * the nodes rather than staying with one. */
START_TEST(equal_speeds_are_block_cyclic) {
  for (size_t q = 1; q <= 10; q++) {
    mlsba_model_t *md[MAXQ];
    for (size_t i = 0; i < q; i++)
      md[i] = constant_model(3);
    int64_t n = 24 * 3 + 5, nb = 1, B = n;
    mlsba__layout_t *L = NULL;
    ck_assert_int_eq(
        mlsba__layout_constant((models_t)md, q, n, n, nb, NULL, &L), 0);
    check_layout_ownership(L);
    const mlsba__layout_dims_t *d = mlsba__layout_dims(L);
    size_t own[24 * 3 + 5];
    for (int64_t j = 0; j < B; j++)
      own[j] = mlsba__layout_bcol_column(L, j);
    size_t want[MAXQ], one[MAXQ];
    for (size_t c = 0; c < d->columns; c++)
      mlsba__layout_column_ranks(L, c, &want[c]);
    for (size_t i = 0; i < MAXQ; i++)
      one[i] = 1;
    ck_assert(even_groups(own, B, q, want, d->columns));
    if (q == 2) /* the turn: from the end 0 1 1 0 0 1 1 0 ... */
      for (int64_t j = 0; j < B; j++)
        ck_assert_uint_eq(own[j], (size_t)(((B - 1 - j + 1) / 2) % 2));
    for (size_t c = 0; c < d->columns; c++) {
      size_t k;
      const size_t *ranks = mlsba__layout_column_ranks(L, c, &k);
      for (int64_t i = 0; i < B; i++) {
        size_t r = mlsba__layout_row_owner(L, c, i), e = 0;
        while (e < k && ranks[e] != r)
          e++;
        ck_assert_uint_lt(e, k);
        own[i] = e;
      }
      ck_assert(even_groups(own, B, k, one, k));
    }
    mlsba__layout_summary_t s;
    ck_assert_int_eq(mlsba__layout_measure(L, (models_t)md, NULL, NULL, &s), 0);
    ck_assert(s.max_width_dev <= 1 + 1e-9 && s.max_height_dev <= 1 + 1e-9);
    /* 24 x 24 from the bottom right: every node the same blocks when q and
     * its column's size divide 24. */
    int64_t nodes[MAXQ];
    mlsba__layout_t *S = NULL;
    ck_assert_int_eq(
        mlsba__layout_constant((models_t)md, q, 24, 24, 1, NULL, &S), 0);
    mlsba__layout_node_blocks(S, 0, nodes);
    int divides = 24 % q == 0;
    for (size_t c = 0; c < mlsba__layout_dims(S)->columns; c++) {
      size_t k;
      mlsba__layout_column_ranks(S, c, &k);
      divides &= 24 % k == 0;
    }
    for (size_t i = 0; divides && i < q; i++)
      ck_assert_int_eq(nodes[i], 24 * 24 / (int64_t)q);
    mlsba__layout_destroy(S);
    mlsba__layout_destroy(L);
    free_layout_models(md, q);
  }
}
END_TEST

/* ---- tracking ---------------------------------------------------------- */

/* The optimum's targets for a square layout of B x B blocks: tau[t C + c]
 * the block columns of node column c, sig[t q + i] the block rows of node
 * i in its column, for t < B; and the drift, per t, of each: the largest
 * move of a target from t + 1 to t beyond its steady growth, |C (f(t) -
 * f(t + 1))|. */
typedef struct {
  size_t q, C;
  int64_t B;
  double *tau, *sig, *jw, *jh;
} targets_t;

static void targets(const mlsba__layout_t *L, models_t md, int lower,
                    targets_t *T) {
  const mlsba__layout_dims_t *d = mlsba__layout_dims(L);
  size_t q = d->nodes, C = d->columns, rc[MAXQ], cs[MAXQ] = {0};
  int64_t B = d->brows, cap[MAXQ];
  *T = (targets_t){q,
                   C,
                   B,
                   calloc((size_t)B * C, sizeof(double)),
                   calloc((size_t)B * q, sizeof(double)),
                   calloc((size_t)B, sizeof(double)),
                   calloc((size_t)B, sizeof(double))};
  for (size_t i = 0; i < q; i++) {
    rc[i] = mlsba__layout_rank_column(L, i);
    cs[rc[i]]++;
  }
  mlsba__layout_caps(md, q, NULL, cap);
  for (int64_t t = 0; t < B; t++) {
    double a[MAXQ], f[MAXQ], g[MAXQ], opt;
    double W = mlsba__layout_trailing_area(B, B, t, lower);
    ck_assert_int_eq(mlsba__layout_optimum(md, cap, q, W, a, &opt), 0);
    mlsba__layout_fractions(q, C, rc, cs, a, f, g);
    for (size_t c = 0; c < C; c++)
      T->tau[(size_t)t * C + c] = f[c] * (double)(B - t);
    for (size_t i = 0; i < q; i++)
      T->sig[(size_t)t * q + i] = g[i] * (double)(B - t);
  }
  for (int64_t t = 0; t + 1 < B; t++) {
    for (size_t c = 0; c < C; c++) {
      double now = T->tau[(size_t)t * C + c];
      double J = now - T->tau[(size_t)(t + 1) * C + c] - now / (double)(B - t);
      T->jw[t] = fmax(T->jw[t], fabs(J));
    }
    for (size_t i = 0; i < q; i++) {
      double now = T->sig[(size_t)t * q + i];
      double J = now - T->sig[(size_t)(t + 1) * q + i] - now / (double)(B - t);
      T->jh[t] = fmax(T->jh[t], fabs(J));
    }
  }
}

static void targets_free(targets_t *T) {
  free(T->tau);
  free(T->sig);
  free(T->jw);
  free(T->jh);
}

/* The drift a walk has to absorb at t: the reverse walk the moves from
 * the bottom up to t, the forward one those from the top down to t. */
static double drift(const double *J, int64_t B, int64_t t, int forward) {
  double sum = 0;
  for (int64_t s = forward ? 0 : t; s < (forward ? t + 1 : B - 1); s++)
    sum += s < B - 1 ? J[s] : 0;
  return sum;
}

/* Checks every t of a square layout drawn by a walk against its targets:
 * widths and heights within 1 + drift blocks. */
static void check_tracking(const mlsba__layout_t *L, const targets_t *T,
                           int forward) {
  int64_t width[MAXQ] = {0}, rows[MAXQ] = {0};
  for (int64_t t = T->B - 1; t >= 0; t--) {
    width[mlsba__layout_bcol_column(L, t)]++;
    for (size_t c = 0; c < T->C; c++)
      rows[mlsba__layout_row_owner(L, c, t)]++;
    double dw = 0, dh = 0;
    for (size_t c = 0; c < T->C; c++)
      dw = fmax(dw, fabs(T->tau[(size_t)t * T->C + c] - (double)width[c]));
    for (size_t i = 0; i < T->q; i++)
      dh = fmax(dh, fabs(T->sig[(size_t)t * T->q + i] - (double)rows[i]));
    double bw = 1 + drift(T->jw, T->B, t, forward);
    double bh = 1 + drift(T->jh, T->B, t, forward);
    ck_assert_msg(dw <= bw + 1e-6 && dh <= bh + 1e-6,
                  "t = %lld: %g and %g blocks off, bounds %g and %g",
                  (long long)t, dw, dh, bw, bh);
  }
}

START_TEST(walks_track_the_optimum_within_its_drift) {
  rng_t g = {0xd71f7u + (uint64_t)_i};
  for (int k = 0; k < 30; k++) {
    size_t q = (size_t)rng_range(&g, 1, 12);
    int64_t nb = rng_range(&g, 1, 4), m = rng_range(&g, 4, 400);
    int64_t B = (m - 1) / nb + 1;
    int lower = rng_uniform(&g) < 0.4;
    if ((int64_t)q > B * B)
      continue;
    mlsba_model_t *md[MAXQ];
    draw_layout_models(&g, q, (double)(B * B), md);
    for (int w = MLSBA__WALK_REVERSE; w <= MLSBA__WALK_FORWARD; w++) {
      mlsba__layout_opts_t o = {
          lower, NULL, (mlsba__layout_walk_t)w, NULL, NULL, 0, NULL, 0};
      mlsba__layout_t *L = NULL;
      ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, m, m, nb, &o, &L), 0);
      targets_t T;
      targets(L, (models_t)md, lower, &T);
      check_tracking(L, &T, w == MLSBA__WALK_FORWARD);
      targets_free(&T);
      mlsba__layout_destroy(L);
    }
    free_layout_models(md, q);
  }
}
END_TEST

/* A random case of the arrangement tests: 2 to max_q nodes' models (md,
 * freed by the caller) for an m x n matrix of 8 to max_mn rows and
 * columns, square when lower (three cases in ten), which it returns. */
static int draw_matrix(rng_t *g, int64_t max_q, int64_t max_mn, size_t *q,
                       int64_t *m, int64_t *n, mlsba_model_t **md) {
  *q = (size_t)rng_range(g, 2, max_q);
  *m = rng_range(g, 8, max_mn);
  *n = rng_range(g, 8, max_mn);
  int lower = rng_uniform(g) < 0.3;
  *n = lower ? *m : *n;
  draw_layout_models(g, *q, (double)(*m * *n), md);
  return lower;
}

START_TEST(the_best_walk_is_never_predicted_slower) {
  rng_t g = {0xbe57u + (uint64_t)_i};
  for (int k = 0; k < 30; k++) {
    mlsba_model_t *md[MAXQ];
    size_t q;
    int64_t m, n;
    int lower = draw_matrix(&g, 12, 200, &q, &m, &n, md);
    double sum[5];
    mlsba__layout_kind_t best_kind = MLSBA__LAYOUT_EXPLICIT;
    for (int w = 0; w < 5; w++) {
      mlsba__layout_opts_t o = {
          lower, NULL, w < 4 ? walks[w] : 0, NULL, NULL, 0, NULL, 0};
      mlsba__layout_t *L = NULL;
      int err = w < 4
                    ? mlsba__layout_fpm((models_t)md, q, m, n, 1, &o, &L)
                    : mlsba__layout_constant((models_t)md, q, m, n, 1, &o, &L);
      ck_assert_int_eq(err, 0);
      ck_assert_int_eq(mlsba__layout_step_sum(L, (models_t)md, lower, &sum[w]),
                       0);
      if (w == 0)
        best_kind = mlsba__layout_dims(L)->kind;
      mlsba__layout_destroy(L);
    }
    for (int w = 1; w < 5; w++)
      ck_assert(sum[0] <= sum[w] * (1 + 1e-12));
    int which = best_kind - MLSBA__LAYOUT_FPM_REVERSE + 1;
    ck_assert(which >= 1 && which <= 3);
    ck_assert(sum[0] == sum[which]);
    free_layout_models(md, q);
  }
}
END_TEST

/* ---- nodes that share cores -------------------------------------------- */

/* The count of nodes that share their cores (apart) standing in a node
 * column with another node. */
static int stacked_sharing(const mlsba__layout_t *L, const size_t *apart,
                           size_t q) {
  int count = 0;
  for (size_t i = 0; i < q; i++) {
    int with = 0;
    for (size_t j = 0; j < q; j++)
      with |= j != i && mlsba__layout_rank_column(L, i) ==
                            mlsba__layout_rank_column(L, j);
    count += apart[i] != 0 && with;
  }
  return count;
}

/* The arrangement of the product's 3 unequal ranks (rank 0 twice as fast
 * as 1 and 2, which share a core): CMA stands 1 and 2 in one column (the
 * least half-perimeter); sharing, each stands alone. */
START_TEST(sharing_nodes_stand_apart) {
  mlsba_model_t *md[3] = {constant_model(2), constant_model(1),
                          constant_model(1)};
  size_t apart[3] = {0, 1, 1};
  mlsba__layout_t *L = NULL;
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 3, 32, 32, 1, NULL, &L), 0);
  ck_assert_int_eq(mlsba__layout_dims(L)->columns, 2);
  ck_assert_int_eq(stacked_sharing(L, apart, 3), 2);
  mlsba__layout_destroy(L);
  mlsba__layout_opts_t o = {.apart = apart};
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 3, 32, 32, 1, &o, &L), 0);
  ck_assert_int_eq(mlsba__layout_dims(L)->columns, 3);
  ck_assert_int_eq(stacked_sharing(L, apart, 3), 0);
  mlsba__layout_destroy(L);
  free_layout_models(md, 3);
}
END_TEST

/* Random models and groups: no sharing node stacked in a column; the predicted
 * step sum no more than the one-row arrangement's (every node one
 * group: the only arrangement left), and with no group at all no more
 * than CMA's own (both are among the arrangements compared). */
START_TEST(sharing_nodes_never_predicted_slower) {
  rng_t g = {0x5a4eu + (uint64_t)_i};
  for (int k = 0; k < 20; k++) {
    mlsba_model_t *md[MAXQ];
    size_t q;
    int64_t m, n;
    int lower = draw_matrix(&g, 8, 120, &q, &m, &n, md);
    size_t apart[MAXQ], all[MAXQ], none[MAXQ];
    for (size_t i = 0; i < q; i++) {
      apart[i] = (size_t)rng_range(&g, 0, 2);
      all[i] = 1;
      none[i] = 0;
    }
    const size_t *sets[4] = {apart, all, none, NULL};
    double sum[4];
    for (int s = 0; s < 4; s++) {
      mlsba__layout_opts_t o = {.lower = lower, .apart = sets[s]};
      mlsba__layout_t *L = NULL;
      ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, m, n, 1, &o, &L), 0);
      ck_assert_int_eq(mlsba__layout_step_sum(L, (models_t)md, lower, &sum[s]),
                       0);
      if (sets[s])
        ck_assert_int_eq(stacked_sharing(L, sets[s], q), 0);
      if (s == 1)
        ck_assert_int_eq(mlsba__layout_dims(L)->columns, q);
      mlsba__layout_destroy(L);
    }
    ck_assert(sum[0] <= sum[1] * (1 + 1e-12));
    ck_assert(sum[2] <= sum[3] * (1 + 1e-12));
    free_layout_models(md, q);
  }
}
END_TEST

/* ---- caps -------------------------------------------------------------- */

START_TEST(caps_are_never_exceeded) {
  rng_t g = {0xca95u + (uint64_t)_i};
  int held_within = 0;
  for (int k = 0; k < 60; k++) {
    size_t q = (size_t)rng_range(&g, 1, 10);
    int64_t nb = rng_range(&g, 1, 4);
    int64_t m = rng_range(&g, 4, 120), n = rng_range(&g, 4, 120);
    int lower = rng_uniform(&g) < 0.3;
    n = lower ? m : n;
    int64_t B = ((m - 1) / nb + 1) * ((n - 1) / nb + 1);
    int64_t total = lower ? ((m - 1) / nb + 1) * ((m - 1) / nb + 2) / 2 : B;
    if ((int64_t)q > B)
      continue;
    mlsba_model_t *md[MAXQ];
    draw_layout_models(&g, q, (double)B, md);
    int64_t caps[MAXQ], cap[MAXQ], held = 0;
    int all = 1;
    for (size_t i = 0; i < q; i++) {
      caps[i] = rng_uniform(&g) < 0.7
                    ? rng_range(&g, 0, 3 * total / (int64_t)q + 1)
                    : -1;
      if (rng_uniform(&g) < 0.2)
        mlsba_model_set_max_load(md[i], rng_range(&g, 0, 2 * total));
    }
    mlsba__layout_caps((models_t)md, q, caps, cap);
    for (size_t i = 0; i < q; i++) {
      all &= cap[i] >= 0;
      held += cap[i] >= 0 ? cap[i] : total;
    }
    for (int w = 0; w < 5; w++) {
      mlsba__layout_opts_t o = {
          lower, caps, w < 4 ? walks[w] : 0, NULL, NULL, 0, NULL, 0};
      mlsba__layout_t *L = NULL;
      int err = w < 4
                    ? mlsba__layout_fpm((models_t)md, q, m, n, nb, &o, &L)
                    : mlsba__layout_constant((models_t)md, q, m, n, nb, &o, &L);
      if (held < total) {
        ck_assert_int_eq(err, MLSBA_ECAPACITY);
        ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "cap"));
      }
      if (err) {
        ck_assert_int_eq(err, MLSBA_ECAPACITY);
        ck_assert_ptr_null(L);
        continue;
      }
      int64_t blocks[MAXQ];
      mlsba__layout_node_blocks(L, lower, blocks);
      for (size_t i = 0; i < q; i++)
        ck_assert_msg(cap[i] < 0 || blocks[i] <= cap[i],
                      "node %zu owns %lld blocks, its cap is %lld", i,
                      (long long)blocks[i], (long long)cap[i]);
      held_within += all;
      check_layout_ownership(L);
      mlsba__layout_destroy(L);
    }
    free_layout_models(md, q);
  }
  /* Not vacuous: layouts with every node capped were drawn. */
  ck_assert_int_gt(held_within, 10);
}
END_TEST

/* ---- brute force ------------------------------------------------------- */

/* LU's predicted step sum of one ownership own[r n + c] of an n x n grid:
 * sum over t = 1 .. n - 1 of max_i t_i(blocks of i in [t, n)^2). */
static double step_sum_of(models_t md, size_t q, int n, const int *own) {
  double sum = 0;
  for (int t = 1; t < n; t++) {
    double a[MAXQ] = {0}, worst = 0;
    for (int r = t; r < n; r++)
      for (int c = t; c < n; c++)
        a[own[r * n + c]]++;
    for (size_t i = 0; i < q; i++) {
      double time;
      mlsba_model_time(md[i], a[i], &time);
      worst = fmax(worst, time);
    }
    sum += worst;
  }
  return sum;
}

/* The least step sum over all q^(n n) ownerships: no layout, 2-D
 * block-cyclic or not, predicts less. */
static double brute_force(models_t md, size_t q, int n) {
  int own[16] = {0}, cells = n * n;
  double best = INFINITY;
  for (;;) {
    best = fmin(best, step_sum_of(md, q, n, own));
    int k = 0;
    while (k < cells && ++own[k] == (int)q)
      own[k++] = 0;
    if (k == cells)
      return best;
  }
}

/* The walk against every ownership of tiny grids. Asserted: brute force
 * is no worse than the walk (it is the optimum) and no better than the
 * sum of the optima T* (their lower bound); the walk is within what the
 * reverse walk's tracking guarantees, every node's blocks at most
 * (g R + 1 + drift)(f C + 1 + drift). Reported: the walk over the
 * optimum, mean and worst. */
START_TEST(the_walk_against_every_ownership) {
  rng_t g = {0xb7u + (uint64_t)_i};
  double worst = 1, total = 0;
  int cases = 0, optimal = 0;
  for (int k = 0; k < 120; k++) {
    size_t q = (size_t)rng_range(&g, 2, 3);
    int n = q == 2 ? (int)rng_range(&g, 2, 4) : (int)rng_range(&g, 2, 3);
    mlsba_model_t *md[MAXQ];
    draw_layout_models(&g, q, (double)(n * n), md);
    mlsba__layout_t *L = NULL;
    ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, n, n, 1, NULL, &L), 0);
    mlsba__layout_summary_t s;
    ck_assert_int_eq(mlsba__layout_measure(L, (models_t)md, NULL, NULL, &s), 0);
    double brute = brute_force((models_t)md, q, n);
    ck_assert(s.optimum_sum <= brute * (1 + 1e-9));
    ck_assert(brute <= s.step_sum * (1 + 1e-9));
    targets_t T;
    targets(L, (models_t)md, 0, &T);
    double bound = 0;
    for (int64_t t = 1; t < n; t++) {
      double worst_t = 0, dw = 1 + drift(T.jw, n, t, 0);
      double dh = 1 + drift(T.jh, n, t, 0);
      for (size_t i = 0; i < q; i++) {
        size_t c = mlsba__layout_rank_column(L, i);
        double a = fmin((T.sig[(size_t)t * q + i] + dh) *
                            (T.tau[(size_t)t * T.C + c] + dw),
                        (double)((n - t) * (n - t)));
        double time;
        mlsba_model_time(md[i], a, &time);
        worst_t = fmax(worst_t, time);
      }
      bound += worst_t;
    }
    ck_assert(s.step_sum <= bound * (1 + 1e-9));
    targets_free(&T);
    double gap = s.step_sum / brute;
    worst = fmax(worst, gap);
    total += gap;
    optimal += gap <= 1 + 1e-9;
    cases++;
    mlsba__layout_destroy(L);
    free_layout_models(md, q);
  }
  printf("walk / brute force over %d tiny grids: mean %.3f, worst %.3f, "
         "optimal in %d\n",
         cases, total / cases, worst, optimal);
}
END_TEST

/* ---- the links' cost --------------------------------------------------- */

/* Block columns of node column c in L. */
static int64_t width_of(const mlsba__layout_t *L, size_t c) {
  int64_t w = 0, B = mlsba__layout_dims(L)->n / mlsba__layout_dims(L)->nb;
  for (int64_t j = 0; j < B; j++)
    w += mlsba__layout_bcol_column(L, j) == c;
  return w;
}

/* A cost of nothing changes no walk; an equal cost on every node gives
 * the frozen walk's node columns f / (1 + f C k / T) of the width
 * (renormalized) from the whole matrix's optimum, computed here from its
 * definition, within a block: the widest column never wider than
 * without, the narrowest never narrower. */
START_TEST(link_costs_narrow_the_widest_columns) {
  rng_t g = {0x11c5u + (uint64_t)_i};
  for (int k = 0; k < 30; k++) {
    size_t q = (size_t)rng_range(&g, 2, 12);
    int64_t B = rng_range(&g, 12, 120);
    mlsba_model_t *md[MAXQ];
    for (size_t i = 0; i < q; i++)
      md[i] = constant_model(pow(10, 2 * rng_uniform(&g)));
    double zero[MAXQ] = {0}, cost[MAXQ];
    for (int w = 0; w < 4; w++) {
      mlsba__layout_opts_t a = {0, NULL, walks[w], NULL, NULL, 0, NULL, 0};
      mlsba__layout_opts_t b = {0, NULL, walks[w], NULL, zero, 0, NULL, 0};
      mlsba__layout_t *La = NULL, *Lb = NULL;
      ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, B, B, 1, &a, &La), 0);
      ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, B, B, 1, &b, &Lb), 0);
      for (int64_t j = 0; j < B; j++)
        ck_assert_uint_eq(mlsba__layout_bcol_column(La, j),
                          mlsba__layout_bcol_column(Lb, j));
      mlsba__layout_destroy(La);
      mlsba__layout_destroy(Lb);
    }
    /* The whole matrix's optimum and its width fractions. */
    int64_t cap[MAXQ];
    double area[MAXQ], f[MAXQ], h[MAXQ], T;
    mlsba__layout_caps((models_t)md, q, NULL, cap);
    ck_assert_int_eq(
        mlsba__layout_optimum((models_t)md, cap, q, (double)(B * B), area, &T),
        0);
    /* Half a step's update a block column of width, up to ten. */
    double kcost = T / (double)B * 10 * rng_uniform(&g);
    for (size_t i = 0; i < q; i++)
      cost[i] = kcost;
    mlsba__layout_opts_t o = {0,    NULL, MLSBA__WALK_FROZEN, NULL, NULL, 0,
                              NULL, 0};
    mlsba__layout_t *L0 = NULL, *L = NULL;
    ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, B, B, 1, &o, &L0), 0);
    o.link_s = cost;
    ck_assert_int_eq(mlsba__layout_fpm((models_t)md, q, B, B, 1, &o, &L), 0);
    check_layout_ownership(L);
    size_t C = mlsba__layout_dims(L)->columns, rc[MAXQ], size[MAXQ];
    ck_assert_uint_eq(C, mlsba__layout_dims(L0)->columns);
    for (size_t i = 0; i < q; i++) {
      rc[i] = mlsba__layout_rank_column(L, i);
      ck_assert_uint_eq(rc[i], mlsba__layout_rank_column(L0, i));
    }
    for (size_t c = 0; c < C; c++)
      mlsba__layout_column_ranks(L, c, &size[c]);
    mlsba__layout_fractions(q, C, rc, size, area, f, h);
    double total = 0, fmax = 0, fmin = 2;
    for (size_t c = 0; c < C; c++) {
      fmax = f[c] > fmax ? f[c] : fmax;
      fmin = f[c] < fmin ? f[c] : fmin;
      h[c] = f[c] / (1 + f[c] * (double)B * kcost / T);
      total += h[c];
    }
    for (size_t c = 0; c < C; c++) {
      int64_t w = width_of(L, c), w0 = width_of(L0, c);
      ck_assert_msg(fabs((double)w - h[c] / total * (double)B) <= 1 + 1e-6,
                    "column %zu: %lld block columns, %g expected", c,
                    (long long)w, h[c] / total * (double)B);
      if (f[c] == fmax)
        ck_assert_int_le(w, w0);
      if (f[c] == fmin)
        ck_assert_int_ge(w, w0);
    }
    mlsba__layout_destroy(L0);
    mlsba__layout_destroy(L);
    free_layout_models(md, q);
  }
}
END_TEST

START_TEST(bad_arguments_are_rejected) {
  mlsba_model_t *md[2] = {constant_model(1), NULL};
  mlsba_model_create(&md[1]); /* no points */
  mlsba__layout_t *L = NULL;
  ck_assert_int_eq(mlsba__layout_fpm(NULL, 1, 4, 4, 1, NULL, &L), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 0, 4, 4, 1, NULL, &L),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 2, 4, 4, 1, NULL, &L),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "no points"));
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 1, 0, 4, 1, NULL, &L),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__layout_constant((models_t)md, 1, 4, 4, 0, NULL, &L),
                   MLSBA_EINVAL);
  mlsba__layout_opts_t o = {1, NULL, 0, NULL, NULL, 0, NULL, 0};
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 1, 4, 5, 1, &o, &L),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "square"));
  double bad_link[1] = {-1};
  o = (mlsba__layout_opts_t){0, NULL, 0, NULL, bad_link, 0, NULL, 0};
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 1, 4, 4, 1, &o, &L),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "link cost"));
  bad_link[0] = NAN;
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 1, 4, 4, 1, &o, &L),
                   MLSBA_EINVAL);
  o = (mlsba__layout_opts_t){0,    NULL, (mlsba__layout_walk_t)9, NULL, NULL, 0,
                             NULL, 0};
  ck_assert_int_eq(mlsba__layout_fpm((models_t)md, 1, 4, 4, 1, &o, &L),
                   MLSBA_EINVAL);
  ck_assert_ptr_null(L);
  mlsba_model_t *five[5];
  for (int i = 0; i < 5; i++)
    five[i] = constant_model(1);
  /* More nodes than blocks. */
  ck_assert_int_eq(mlsba__layout_fpm((models_t)five, 5, 2, 2, 1, NULL, &L),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__layout_fpm((models_t)five, 4, 2, 2, 1, NULL, &L), 0);
  check_layout_ownership(L);
  ck_assert_int_eq(mlsba__layout_measure(L, NULL, NULL, NULL, NULL),
                   MLSBA_EINVAL);
  mlsba__layout_opts_t lower = {1, NULL, 0, NULL, NULL, 0, NULL, 0};
  ck_assert_int_eq(mlsba__layout_measure(L, (models_t)five, &lower, NULL, NULL),
                   0);
  mlsba__layout_destroy(L);
  for (int i = 0; i < 5; i++)
    mlsba_model_destroy(five[i]);
  free_layout_models(md, 2);
}
END_TEST

/* ---- ranks the models cannot tell apart ------------------------------- */

static void blocks_of(models_t md, size_t q, int64_t B, double alike,
                      int constant, int64_t nodes[]) {
  mlsba__layout_opts_t o = {0};
  o.alike = alike;
  mlsba__layout_t *L = NULL;
  ck_assert_int_eq(constant ? mlsba__layout_constant(md, q, B, B, 1, &o, &L)
                            : mlsba__layout_fpm(md, q, B, B, 1, &o, &L),
                   0);
  check_layout_ownership(L);
  mlsba__layout_node_blocks(L, 0, nodes);
  mlsba__layout_destroy(L);
}

START_TEST(alike_nodes_get_equal_shares) {
  int constant = _i;
  int64_t nodes[3];
  /* Two nodes 8% apart: their own shares as given, equal ones within 10%
   * (32 x 32 blocks, 512 each), their own again within 5%. */
  mlsba_model_t *two[2] = {constant_model(108), constant_model(100)};
  blocks_of((models_t)two, 2, 32, 0, constant, nodes);
  ck_assert_int_gt(nodes[0], nodes[1] + 16);
  blocks_of((models_t)two, 2, 32, 0.1, constant, nodes);
  ck_assert_int_eq(nodes[0], 512);
  ck_assert_int_eq(nodes[1], 512);
  blocks_of((models_t)two, 2, 32, 0.05, constant, nodes);
  ck_assert_int_gt(nodes[0], nodes[1] + 16);
  free_layout_models(two, 2);
  /* This machine's three unequal ranks: rank 0 alone on its core, ranks
   * 1 and 2 sharing one, their models 7% apart, and models of two
   * points (their shapes differ: the group's mean is what both walk
   * with). Ranks 1 and 2 level; rank 0 keeps about half. */
  mlsba_model_t *three[3] = {constant_model(200), NULL, NULL};
  ck_assert_int_eq(mlsba_model_create(&three[1]), 0);
  ck_assert_int_eq(mlsba_model_create(&three[2]), 0);
  ck_assert_int_eq(mlsba_model_set_point(three[1], 100, 100), 0);
  ck_assert_int_eq(mlsba_model_set_point(three[1], 600, 108), 0);
  ck_assert_int_eq(mlsba_model_set_point(three[2], 300, 110), 0);
  blocks_of((models_t)three, 3, 32, 0.15, constant, nodes);
  ck_assert_int_eq(nodes[1], nodes[2]);
  ck_assert_int_gt(nodes[0], 450);
  ck_assert_int_lt(nodes[0], 580);
  blocks_of((models_t)three, 3, 32, 0, constant, nodes);
  ck_assert_int_ne(nodes[1], nodes[2]);
  /* The pooled models: rank 0 alone (NULL), ranks 1 and 2 the mean of
   * theirs at every point of either, each its own max_load. */
  ck_assert_int_eq(mlsba_model_set_max_load(three[2], 700), 0);
  int64_t cap[3] = {-1, -1, 700};
  mlsba_model_t *pooled[3];
  ck_assert_int_eq(mlsba__layout_pool_alike((models_t)three, cap, 3, 1024, 0.15,
                                            NULL, 0, pooled),
                   0);
  ck_assert_ptr_null(pooled[0]);
  for (int r = 1; r <= 2; r++) {
    ck_assert_uint_eq(mlsba_model_num_points(pooled[r]), 3);
    double x, sp;
    mlsba_model_get_point(pooled[r], 0, &x, &sp);
    ck_assert(x == 100 && fabs(sp - (100 + 110) / 2.0) < 1e-9);
    mlsba_model_get_point(pooled[r], 1, &x, &sp); /* 103.2 on rank 1's */
    ck_assert(x == 300 && fabs(sp - (103.2 + 110) / 2.0) < 1e-9);
    mlsba_model_get_point(pooled[r], 2, &x, &sp);
    ck_assert(x == 600 && fabs(sp - (108 + 110) / 2.0) < 1e-9);
  }
  ck_assert_int_eq(mlsba_model_max_load(pooled[1]), -1);
  ck_assert_int_eq(mlsba_model_max_load(pooled[2]), 700);
  for (int r = 0; r < 3; r++)
    mlsba_model_destroy(pooled[r]);
  /* Kin (the same hardware): two ranks 30% apart level within kin_alike
   * 0.5, not within alike 0.1 as two ranks of different kins; a kin of
   * one is none, and kin_alike does not level ranks twice apart. */
  mlsba_model_t *pair[2] = {constant_model(130), constant_model(100)};
  size_t same[2] = {1, 1}, apart[2] = {1, 2};
  mlsba__layout_opts_t ko = {0};
  ko.alike = 0.1;
  ko.kin_alike = 0.5;
  for (int k = 0; k < 3; k++) {
    ko.kin = k == 0 ? same : k == 1 ? apart : NULL;
    mlsba__layout_t *K = NULL;
    ck_assert_int_eq(
        constant ? mlsba__layout_constant((models_t)pair, 2, 32, 32, 1, &ko, &K)
                 : mlsba__layout_fpm((models_t)pair, 2, 32, 32, 1, &ko, &K),
        0);
    mlsba__layout_node_blocks(K, 0, nodes);
    if (k == 0)
      ck_assert(nodes[0] == 512 && nodes[1] == 512);
    else
      ck_assert_int_gt(nodes[0], nodes[1] + 64);
    mlsba__layout_destroy(K);
  }
  size_t kin3[3] = {1, 1, 1};
  ko.kin = kin3;
  mlsba__layout_t *K = NULL;
  ck_assert_int_eq(mlsba__layout_fpm((models_t)three, 3, 32, 32, 1, &ko, &K),
                   0);
  mlsba__layout_node_blocks(K, 0, nodes);
  ck_assert_int_eq(nodes[1], nodes[2]);
  ck_assert_int_gt(nodes[0], 450);
  mlsba__layout_destroy(K);
  free_layout_models(pair, 2);
  /* A bad tolerance is refused. */
  mlsba__layout_opts_t o = {0};
  mlsba__layout_t *L = NULL;
  o.alike = -0.1;
  ck_assert_int_eq(mlsba__layout_fpm((models_t)three, 3, 8, 8, 1, &o, &L),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "alike"));
  o.alike = NAN;
  ck_assert_int_eq(mlsba__layout_constant((models_t)three, 3, 8, 8, 1, &o, &L),
                   MLSBA_EINVAL);
  o.alike = 0;
  o.kin_alike = -1;
  ck_assert_int_eq(mlsba__layout_fpm((models_t)three, 3, 8, 8, 1, &o, &L),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "kin_alike"));
  free_layout_models(three, 3);
}
END_TEST

static Suite *layout_walk_suite(void) {
  Suite *s = suite_create("layout_walk");
  TCase *tc = tcase_create("cases");
  tcase_add_test(tc, bad_arguments_are_rejected);
  suite_add_tcase(s, tc);
  tc = tcase_create("random");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, equal_speeds_are_block_cyclic);
  tcase_add_loop_test(tc, alike_nodes_get_equal_shares, 0, 2);
  tcase_add_loop_test(tc, the_optimum_is_the_least_common_finish, 0, 2);
  tcase_add_loop_test(tc, fixed_shares_stay_within_a_block, 0, 3);
  tcase_add_loop_test(tc, walks_track_the_optimum_within_its_drift, 0, 3);
  tcase_add_loop_test(tc, the_best_walk_is_never_predicted_slower, 0, 2);
  tcase_add_loop_test(tc, caps_are_never_exceeded, 0, 3);
  tcase_add_test(tc, sharing_nodes_stand_apart);
  tcase_add_loop_test(tc, sharing_nodes_never_predicted_slower, 0, 2);
  tcase_add_loop_test(tc, the_walk_against_every_ownership, 0, 2);
  tcase_add_loop_test(tc, link_costs_narrow_the_widest_columns, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(layout_walk_suite()); }
