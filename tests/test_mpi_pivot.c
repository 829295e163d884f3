/* LU's pivot search across a node column (lib/mpi/factor_pivot.c,
 * compiled in: white-box): on 1 to 6 ranks, in its flat round and in its
 * dissemination (the flat round's limit set to 1), every rank ends each
 * of 300 searches with the candidate a brute force picks from every
 * rank's slot (ties in |value| frequent, NaNs, ranks without a row,
 * double and single rows of 1 to 8 elements) and the current row of the
 * one rank that has it; the best row whole on the root (the rank of the
 * current row), its first NEED elements (0 to all) on the others. The ranks are
 * this program itself (test_mpi_pivot --ranks FLAT_MAX), each job under a
 * timeout so that a hang fails its test. */
#include <check.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/factor.h" /* white-box: factor_pivot.c, compiled in */
#include "support/run_ranks.h"
#include "support/run_suite.h"

static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT;

enum { NB = 8, TRIALS = 300 };

/* ---- the ranks ------------------------------------------------------- */

static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15u;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
  return x ^ (x >> 31);
}

/* Rank r's slot in trial t on q ranks (every rank can make every rank's):
 * a tenth without a row (value -1, row 0, zero bytes), a tenth NaN, the
 * rest |values| of 0 to 3 (ties); global rows distinct across the ranks;
 * rows of bytes that name the rank; the current row on rank t % q. */
static void make_slot(int t, int r, int q, char *slot) {
  size_t es = t % 2 ? 4 : 8, p = (size_t)(1 + t % NB),
         hs = sizeof(double[MLSBA__PIVOT_HEAD]);
  memset(slot, 0, mlsba__mpi_pivot_slot(NB, es));
  uint64_t x = mix((uint64_t)t * 1000003u + (uint64_t)r);
  double h[MLSBA__PIVOT_HEAD] = {0};
  int kind = (int)(x % 10);
  h[MLSBA__PIVOT_VALUE] = kind == 0   ? -1.0
                          : kind == 1 ? NAN
                                      : (double)((x >> 8) % 4);
  h[MLSBA__PIVOT_GROW] =
      kind == 0 ? 0.0 : (double)((x >> 20) % 50 * (uint64_t)q + (uint64_t)r);
  h[MLSBA__PIVOT_HAS_CUR] = r == t % q;
  h[MLSBA__PIVOT_WIDTH] = (double)p;
  h[MLSBA__PIVOT_ELEM] = (double)es;
  h[MLSBA__PIVOT_NEED] = (double)((x >> 40) % (p + 1));
  memcpy(slot, h, sizeof h);
  for (size_t b = 0; kind != 0 && b < p * es; b++)
    slot[hs + b] = (char)(1 + r + 16 * (int)(b % 7));
  for (size_t b = 0; r == t % q && b < p * es; b++)
    slot[hs + p * es + b] = (char)(100 + r + (int)b);
}

/* Whether a goes before b by the order the search documents, written
 * out case by case. */
static int before(const double *a, const double *b) {
  double va = a[MLSBA__PIVOT_VALUE], vb = b[MLSBA__PIVOT_VALUE];
  int ra = isnan(va) || va >= 0, rb = isnan(vb) || vb >= 0;
  if (ra != rb)
    return ra;
  if (!ra)
    return 0;
  if (isnan(va) && isnan(vb))
    return a[MLSBA__PIVOT_GROW] < b[MLSBA__PIVOT_GROW];
  if (isnan(va) || isnan(vb))
    return isnan(va);
  if (va != vb)
    return va > vb;
  return a[MLSBA__PIVOT_GROW] < b[MLSBA__PIVOT_GROW];
}

static int ranks_main(int flat_max) {
  MPI_Init(NULL, NULL);
  int q, me, bad = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &q);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  size_t slot = mlsba__mpi_pivot_slot(NB, 8),
         hs = sizeof(double[MLSBA__PIVOT_HEAD]);
  char *mine = malloc(slot), *all = malloc(slot), *other = malloc(slot),
       *best = malloc(slot), *cur = malloc(slot),
       *scratch = malloc(mlsba__mpi_pivot_scratch(q, slot));
  for (int t = 0; t < TRIALS && !bad; t++) {
    size_t es = t % 2 ? 4 : 8, p = (size_t)(1 + t % NB);
    make_slot(t, me, q, mine);
    make_slot(t, 0, q, best);
    for (int r = 0; r < q; r++) {
      make_slot(t, r, q, other);
      if (r > 0 &&
          before((const double *)(void *)other, (const double *)(void *)best))
        memcpy(best, other, slot);
      if (r == t % q)
        memcpy(cur, other, slot);
    }
    /* The root: the rank with the current row, as the diagonal block's
     * owner is in LU's panel; it gets the best row whole, the others its
     * first NEED elements. */
    int root = t % q;
    mlsba__mpi_pivot_exchange(MPI_COMM_WORLD, flat_max, slot, root, mine, all,
                              scratch);
    double ha[MLSBA__PIVOT_HEAD], hb[MLSBA__PIVOT_HEAD];
    memcpy(ha, all, sizeof ha);
    memcpy(hb, best, sizeof hb);
    int same_value = isnan(hb[MLSBA__PIVOT_VALUE])
                         ? isnan(ha[MLSBA__PIVOT_VALUE]) != 0
                         : ha[MLSBA__PIVOT_VALUE] == hb[MLSBA__PIVOT_VALUE];
    size_t got = me == root ? p : (size_t)hb[MLSBA__PIVOT_NEED];
    if (!same_value || ha[MLSBA__PIVOT_GROW] != hb[MLSBA__PIVOT_GROW] ||
        ha[MLSBA__PIVOT_HAS_CUR] != 1 ||
        memcmp(all + hs, best + hs, got * es) != 0 ||
        memcmp(all + hs + p * es, cur + hs + p * es, p * es) != 0) {
      printf("bad: rank %d of %d, flat_max %d, trial %d: value %g row %g, "
             "brute force %g row %g\n",
             me, q, flat_max, t, ha[MLSBA__PIVOT_VALUE], ha[MLSBA__PIVOT_GROW],
             hb[MLSBA__PIVOT_VALUE], hb[MLSBA__PIVOT_GROW]);
      bad = 1;
    }
  }
  if (!bad)
    printf("ok rank %d\n", me);
  free(mine), free(all), free(other), free(best), free(cur), free(scratch);
  MPI_Finalize();
  return bad;
}

/* ---- the tests ------------------------------------------------------- */

/* _i: ranks 1 to 6 (_i % 6 + 1), the flat round (_i < 6) or the
 * dissemination. */
START_TEST(every_rank_gets_the_brute_force_pivot) {
  int np = _i % 6 + 1;
  char self[4096], limit[16];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert(len > 0);
  self[len] = '\0';
  snprintf(limit, sizeof limit, "%d", _i < 6 ? MLSBA__PIVOT_FLAT_MAX : 1);
  char *args[] = {self, "--ranks", limit, NULL};
  tool_run_t r;
  run_ranks(timeout, "120", mpirun, np, args, &r);
  ck_assert_msg(r.exited && r.status == 0 && count_lines(r.out) == (size_t)np,
                "%d ranks, flat_max %s: status %d (124, 137: a hang): "
                "%.800s%.400s",
                np, limit, r.status, r.out, r.err);
  tool_run_free(&r);
}
END_TEST

static Suite *pivot_suite(void) {
  Suite *s = suite_create("mpi_pivot");
  TCase *tc = tcase_create("exchange");
  tcase_set_timeout(tc, 150);
  tcase_add_loop_test(tc, every_rank_gets_the_brute_force_pivot, 0, 12);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--ranks"))
    return ranks_main(atoi(argv[2]));
  mpi_job_environment();
  return run_suite(pivot_suite());
}
