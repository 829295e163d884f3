/* An application's own load across ranks: the head of the
 * one-dimensional INPA (lib/partition/divide.h) on synthetic nodes whose
 * time is a pure function of their units (converges where speeds differ,
 * stops as documented, refuses bad input, follows a change of speed after
 * a resume, its cycles counted since the drift); then <mlsba/mpi.h> under
 * mpirun: four simulated ranks of unequal speed converge through
 * mlsba-inpa --load mandelbrot, with every rank's share the head's;
 * two real ranks compute the Mandelbrot image that a single-rank
 * reference confirms; a divider's run computes every unit once, each
 * rank exactly its share; a divider follows a 4x slowdown of one
 * simulated rank and its end within three re-balances on 1, 2 and 4
 * ranks, every step reporting its runs and the whole call's time; a
 * failing callback's message names its global units; a bad rank (a missing
 * platform, a load of another size) stops every rank with one line; and the
 * two-dimensional product on an application's own matrices gives back its C
 * (each rank's rectangle and the gathered whole), a failing fill stopping every
 * rank. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/divide.h"
#include "support/run_ranks.h"
#include "support/run_suite.h"

/* Node i's time for c units: speed (i + 1) * 100 units/s, RISING (small
 * ranges underuse the node: speed peak c / (c + 50)) when rising. */
static double node_time(size_t i, int64_t c, int rising) {
  double peak = 100.0 * (double)(i + 1);
  double s = rising ? peak * (double)c / ((double)c + 50) : peak;
  return (double)c / s;
}

/* Drives a head to its stop; returns the runs. */
static size_t drive(mlsba__divide_t *h, size_t q, int rising) {
  double t[8];
  size_t runs = 0;
  while (!mlsba__divide_done(h) && runs < 100) {
    const int64_t *c = mlsba__divide_counts(h);
    int64_t sum = 0;
    for (size_t i = 0; i < q; i++) {
      ck_assert_int_ge(c[i], 1);
      sum += c[i];
      t[i] = node_time(i, c[i], rising);
    }
    ck_assert_int_eq(sum, 10000);
    ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
    runs++;
  }
  return runs;
}

START_TEST(constant_speeds_balance_in_two_runs) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, NULL, &h), 0);
  ck_assert_uint_eq(drive(h, 4, 0), 2);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  /* Shares in proportion to the speeds 1 : 2 : 3 : 4. */
  const int64_t *c = mlsba__divide_counts(h);
  for (size_t i = 0; i < 4; i++)
    ck_assert_msg(llabs(c[i] - 1000 * (int64_t)(i + 1)) <= 1, "node %zu: %lld",
                  i, (long long)c[i]);
  ck_assert(mlsba__divide_history_imbalance(h, 1) <= 0.05);
  mlsba__divide_destroy(h);
}
END_TEST

START_TEST(rising_speeds_converge_within_eps) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, NULL, &h), 0);
  size_t runs = drive(h, 4, 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  ck_assert(runs >= 2 && runs <= 20);
  ck_assert(mlsba__divide_history_imbalance(h, runs - 1) <= 0.05);
  /* The history holds every run, the last one the result's counts. */
  ck_assert_uint_eq(mlsba__divide_iterations(h), runs);
  ck_assert_mem_eq(mlsba__divide_history_counts(h, runs - 1),
                   mlsba__divide_counts(h), 4 * sizeof(int64_t));
  mlsba__divide_destroy(h);
}
END_TEST

START_TEST(baselines_stop_after_their_runs) {
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  o.algo = MLSBA__INPA_HOMOGENEOUS;
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, &o, &h), 0);
  ck_assert_uint_eq(drive(h, 4, 0), 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_MAX_ITER);
  mlsba__divide_destroy(h);
  o.algo = MLSBA__INPA_SINGLE_CPM;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, &o, &h), 0);
  ck_assert_uint_eq(drive(h, 4, 1), 2);
  mlsba__divide_destroy(h);
  /* Equal nodes are balanced by the even split itself. */
  ck_assert_int_eq(mlsba__divide_create(1, 10000, &o, &h), 0);
  ck_assert_uint_eq(drive(h, 1, 1), 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  mlsba__divide_destroy(h);
}
END_TEST

/* A node that looks ever slower than its model: the counts come back to
 * an earlier run's (cycle) or stop moving (fixed point), never loop. */
START_TEST(noisy_nodes_stop_honestly) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(2, 10000, NULL, &h), 0);
  double t[2];
  int k = 0;
  while (!mlsba__divide_done(h) && k < 100) {
    const int64_t *c = mlsba__divide_counts(h);
    /* Node 1's time alternates by 30%: the models cannot settle. */
    t[0] = (double)c[0] / 100;
    t[1] = (double)c[1] / 100 * (k % 2 ? 1.3 : 1.0);
    ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
    k++;
  }
  ck_assert(mlsba__divide_done(h));
  mlsba_stop_reason_t s = mlsba__divide_stop(h);
  ck_assert_msg(s == MLSBA_STOP_CYCLE || s == MLSBA_STOP_FIXED_POINT ||
                    s == MLSBA_STOP_BALANCED || s == MLSBA_STOP_MAX_ITER,
                "stop %d", s);
  ck_assert_uint_le(mlsba__divide_iterations(h), 20);
  /* Resumed, it runs again from its models. */
  ck_assert_int_eq(mlsba__divide_resume(h, NULL, 0.1), 0);
  ck_assert(!mlsba__divide_done(h));
  mlsba__divide_destroy(h);
}
END_TEST

/* Feeds node times of speeds (units/s, constant) until the head stops;
 * returns the runs. */
static size_t drive_speeds(mlsba__divide_t *h, size_t q, const double *speed) {
  double t[8];
  size_t runs = 0;
  while (!mlsba__divide_done(h) && runs < 100) {
    const int64_t *c = mlsba__divide_counts(h);
    for (size_t i = 0; i < q; i++)
      t[i] = (double)c[i] / speed[i];
    ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
    runs++;
  }
  return runs;
}

/* The times the current counts take at these speeds. */
static void times_at(const mlsba__divide_t *h, size_t q, const double *speed,
                     double *t) {
  const int64_t *c = mlsba__divide_counts(h);
  for (size_t i = 0; i < q; i++)
    t[i] = (double)c[i] / speed[i];
}

/* The drift cases' start: a head of two nodes over 10000 units (o NULL:
 * the defaults) fed the times of nodes of 100 and 300 units/s until it
 * stopped; the runs that took in *runs (unless NULL). */
static mlsba__divide_t *driven_pair(const mlsba__inpa_opts_t *o, size_t *runs) {
  static const double fast[2] = {100, 300};
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(2, 10000, o, &h), 0);
  size_t n = drive_speeds(h, 2, fast);
  if (runs != NULL)
    *runs = n;
  return h;
}

/* Node 1 turns 4 times slower after the head stopped, then back: each
 * time the run that showed it resumes the head, which forgets node 1's
 * stale points and is balanced again in a run or two. Before the fix its
 * models kept every point, and the re-balance stopped near the old split. */
START_TEST(a_resume_follows_a_change_of_speed) {
  mlsba__divide_t *h = driven_pair(NULL, NULL);
  double fast[2] = {100, 300}, slow[2] = {100, 75}, t[2];
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  ck_assert_int_eq(mlsba__divide_counts(h)[1], 7500);
  for (int change = 0; change < 2; change++) {
    const double *now = change == 0 ? slow : fast;
    times_at(h, 2, now, t);
    size_t before = mlsba__divide_iterations(h);
    ck_assert_int_eq(mlsba__divide_resume(h, t, 0.1), 0);
    /* The run fed is the re-balance's first: node 1's older points are
     * gone, node 0's kept. */
    ck_assert_uint_eq(mlsba__divide_iterations(h), before + 1);
    ck_assert_uint_eq(mlsba_model_num_points(mlsba__divide_model(h, 1)), 1);
    ck_assert_uint_ge(mlsba_model_num_points(mlsba__divide_model(h, 0)), 2);
    size_t runs = drive_speeds(h, 2, now);
    ck_assert_uint_le(runs, 2);
    ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
    int64_t want = change == 0 ? 4286 : 7500; /* 10000 * 75 / 175 */
    ck_assert_msg(llabs(mlsba__divide_counts(h)[1] - want) <= 1, "%lld",
                  (long long)mlsba__divide_counts(h)[1]);
  }
  mlsba__divide_destroy(h);
}
END_TEST

/* After the drift, the counts of a run from before it are no cycle: node
 * 1 falls from 300 to 100 units/s, and the even split that the first run
 * of all ran is what the models ask for now. */
START_TEST(cycles_count_only_the_runs_since_the_drift) {
  size_t first;
  mlsba__divide_t *h = driven_pair(NULL, &first);
  double even[2] = {100, 100}, t[2];
  ck_assert_uint_eq(first, 2); /* 5000/5000, 2500/7500 */
  times_at(h, 2, even, t);
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0.1), 0);
  ck_assert(!mlsba__divide_done(h));
  ck_assert_int_eq(mlsba__divide_counts(h)[0], 5000);
  ck_assert_uint_eq(drive_speeds(h, 2, even), 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  mlsba__divide_destroy(h);
}
END_TEST

/* Times within the tolerance of the models are noise, not a change: the
 * points stay (the run joins them); a resume without a run checks the
 * first run fed; a resume stops at once when its run is balanced; bad
 * tolerances are refused and leave the head stopped; the baselines
 * re-balance as they balance. */
START_TEST(a_resume_keeps_what_agrees_and_checks_its_input) {
  size_t first;
  mlsba__divide_t *h = driven_pair(NULL, &first);
  double fast[2] = {100, 300}, t[2];
  double noisy[2] = {100 * 1.08, 300 / 1.08};
  times_at(h, 2, noisy, t);
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0.2), 0);
  ck_assert_uint_eq(mlsba_model_num_points(mlsba__divide_model(h, 0)), 2);
  ck_assert_uint_eq(mlsba_model_num_points(mlsba__divide_model(h, 1)), 2);
  drive_speeds(h, 2, noisy);
  /* Balanced already: the run fed is the whole re-balance. */
  times_at(h, 2, noisy, t);
  size_t before = mlsba__divide_iterations(h);
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0.1), 0);
  ck_assert(mlsba__divide_done(h));
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  ck_assert_uint_eq(mlsba__divide_iterations(h), before + 1);
  /* Without a run: the first run fed is checked (node 1 now 4x slower). */
  ck_assert_int_eq(mlsba__divide_resume(h, NULL, 0.1), 0);
  double slow[2] = {noisy[0], noisy[1] / 4};
  times_at(h, 2, slow, t);
  ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
  ck_assert_uint_eq(mlsba_model_num_points(mlsba__divide_model(h, 1)), 1);
  drive_speeds(h, 2, slow);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0), MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "drift tolerance") != NULL);
  ck_assert_int_eq(mlsba__divide_resume(h, t, NAN), MLSBA_EINVAL);
  t[0] = -1;
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0.1), MLSBA_EINVAL);
  ck_assert(mlsba__divide_done(h));
  mlsba__divide_destroy(h);
  /* Homogeneous: the even split again, stopped at once; single-CPM: one
   * run from the speeds of the run fed. */
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  o.algo = MLSBA__INPA_HOMOGENEOUS;
  h = driven_pair(&o, &first);
  times_at(h, 2, fast, t);
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0.1), 0);
  ck_assert(mlsba__divide_done(h));
  ck_assert_int_eq(mlsba__divide_counts(h)[0], 5000);
  mlsba__divide_destroy(h);
  o.algo = MLSBA__INPA_SINGLE_CPM;
  h = driven_pair(&o, &first);
  ck_assert_uint_eq(first, 2);
  double slower[2] = {100, 100};
  times_at(h, 2, slower, t);
  ck_assert_int_eq(mlsba__divide_resume(h, t, 0.1), 0);
  ck_assert(!mlsba__divide_done(h));
  ck_assert_int_eq(mlsba__divide_counts(h)[0], 5000);
  ck_assert_uint_eq(drive_speeds(h, 2, slower), 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  mlsba__divide_destroy(h);
}
END_TEST

START_TEST(bad_input_is_refused) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 3, NULL, &h), MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "every node needs a unit") != NULL);
  ck_assert_int_eq(mlsba__divide_create(2, 100, NULL, &h), 0);
  double t[2] = {1.0, NAN};
  ck_assert_int_eq(mlsba__divide_feed(h, t), MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "node 1") != NULL);
  t[1] = 1.0;
  ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
  ck_assert(mlsba__divide_done(h));
  ck_assert_int_eq(mlsba__divide_feed(h, t), MLSBA_EINVAL);
  mlsba__divide_destroy(h);
}
END_TEST

/* ---- under mpirun ---------------------------------------------------------
 */

#ifdef MLSBA_INPA_BIN
static char mpirun[] = MLSBA_MPIRUN, inpa[] = MLSBA_INPA_BIN,
            ranks_bin[] = MLSBA_DIVIDE_RANKS_BIN;

/* Runs args on np ranks, the job killed after 120 s. */
static void run_job(const char *np, char *const *args, tool_run_t *r) {
  mpi_job_environment();
  setenv("MLSBA_NOPENCL", "0", 1); /* cores only: no pocl start-up */
  run_ranks(MLSBA_TIMEOUT, "120", mpirun, atoi(np), args, r);
}

/* The same on one rank without mpirun: for a rank that refuses its own
 * command line, where mpirun's start-up adds nothing. */
static void run_alone(char *const *args, tool_run_t *r) {
  mpi_job_environment();
  setenv("MLSBA_NOPENCL", "0", 1);
  run_rank_alone(MLSBA_TIMEOUT, "120", args, r);
}

static json_t *parse_json(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "not JSON (%s): %.500s", e.text, text);
  return j;
}

static json_int_t ival(json_t *o, const char *k) {
  return json_integer_value(json_object_get(o, k));
}

/* Four simulated ranks of unequal speed: balanced within eps; every
 * rank's share is the head's last distribution, the shares tile the rows
 * in rank order and each rank's devices take its count. */
START_TEST(four_simulated_ranks_converge_to_the_heads_shares) {
  char *args[] = {inpa,
                  "--load",
                  "mandelbrot",
                  "--platform",
                  MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                  "--size",
                  "4096",
                  "--json",
                  "-",
                  NULL};
  tool_run_t r;
  run_job("4", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert_str_eq(json_string_value(json_object_get(j, "stop")), "balanced");
  ck_assert(json_number_value(json_object_get(j, "imbalance")) <= 0.05);
  ck_assert(json_is_null(json_object_get(j, "verified")));
  json_t *hist = json_object_get(j, "history"),
         *ranks = json_object_get(j, "ranks");
  size_t len = json_array_size(hist);
  ck_assert_int_eq(ival(j, "iterations"), (json_int_t)len);
  ck_assert(len >= 2); /* the even split is not balanced here */
  json_t *last = json_object_get(json_array_get(hist, len - 1), "count");
  json_int_t at = 0;
  for (size_t i = 0; i < 4; i++) {
    json_t *k = json_array_get(ranks, i);
    ck_assert_int_eq(ival(k, "offset"), at);
    ck_assert_int_eq(ival(k, "count"),
                     json_integer_value(json_array_get(last, i)));
    json_int_t rows = 0;
    size_t d;
    json_t *dev;
    json_array_foreach(json_object_get(k, "devices"), d, dev) rows +=
        ival(dev, "load");
    ck_assert_int_eq(rows, ival(k, "count"));
    at += ival(k, "count");
  }
  ck_assert_int_eq(at, 4096);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(two_real_ranks_compute_the_reference_image) {
  char *args[] = {inpa,  "--load", "mandelbrot", "--size",
                  "512", "--json", "-",          NULL};
  tool_run_t r;
  run_job("2", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  ck_assert_int_eq(ival(j, "nodes"), 2);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* A divider's run: each rank's callbacks computed exactly its share,
 * once, and the shares cover every unit. */
START_TEST(a_divider_run_computes_each_rank_its_share) {
  char *args[] = {ranks_bin, MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json",
                  "20000", NULL};
  tool_run_t r;
  run_job("2", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  long long end = 0;
  for (int rank = 0; rank < 2; rank++) {
    char head[32];
    snprintf(head, sizeof head, "rank %d share ", rank);
    const char *line = strstr(r.out, head);
    ck_assert_msg(line != NULL, "%s", r.out);
    long long off, count, a, b;
    long calls;
    ck_assert_msg(sscanf(line + strlen(head), "%lld %lld units %lld %lld %ld",
                         &off, &count, &a, &b, &calls) == 5,
                  "%s", r.out);
    ck_assert_int_eq(off, end);
    ck_assert_int_eq(a, off);
    ck_assert_int_eq(b, off + count);
    end = off + count;
  }
  ck_assert_int_eq(end, 20000);
  tool_run_free(&r);
}
END_TEST

/* One line, naming the rank, and a failure on every rank; no hang. */
static void expect_one_line_error(const char *np, char *const *args,
                                  const char *says, int on_stdout) {
  tool_run_t r;
  run_job(np, args, &r);
  ck_assert_msg(r.exited && r.status != 0 && r.status != 124,
                "status %d: %.300s", r.status, r.out);
  const char *text = on_stdout ? r.out : r.err;
  ck_assert_msg(strstr(text, says) != NULL, "no '%s' in: %s", says, text);
  /* One line of ours (mpirun adds its own about the exit status). */
  const char *prefix = on_stdout ? "error: " : "mlsba-inpa: ";
  int ours = 0;
  for (const char *p = text; (p = strstr(p, prefix)) != NULL; p++)
    ours++;
  ck_assert_msg(ours == 1, "not one line: %s", text);
  tool_run_free(&r);
}

/* ---- the divider through a change of speed ------------------------------ */

/* One line of divide_ranks ... steps K. */
typedef struct {
  long step;
  int64_t split[4];
  double imbalance, makespan, wall, drift;
  unsigned runs;
  int rebalanced;
} step_t;

/* The steps of out, each checked: q counts summing to n. */
static size_t parse_steps(const char *out, int q, int64_t n, step_t *s,
                          size_t max) {
  size_t k = 0;
  for (const char *p = strstr(out, "step "); p && k < max;
       p = strstr(p + 1, "\nstep ")) {
    if (*p == '\n')
      p++;
    step_t *t = &s[k];
    int at = 0;
    ck_assert_msg(sscanf(p, "step %ld split %n", &t->step, &at) == 1 && at,
                  "%.200s", p);
    const char *c = p + at;
    int64_t sum = 0;
    for (int i = 0; i < q; i++) {
      char *end;
      t->split[i] = strtoll(c, &end, 10);
      ck_assert_msg(end != c && t->split[i] >= 1, "%.200s", p);
      sum += t->split[i];
      c = *end == '/' ? end + 1 : end;
    }
    ck_assert_int_eq(sum, n);
    ck_assert_msg(sscanf(c,
                         " imbalance %lf makespan %lf wall %lf runs %u "
                         "rebalanced %d drift %lf",
                         &t->imbalance, &t->makespan, &t->wall, &t->runs,
                         &t->rebalanced, &t->drift) == 6,
                  "%.200s", p);
    ck_assert_int_eq(t->step, (long)k + 1);
    k++;
  }
  return k;
}

/* What every step's report must say: the drift threshold it was judged
 * by, the runs of the load it made and the whole call's (virtual)
 * seconds: one run, and its time, for a step that did not re-balance;
 * the run that showed the drift and the re-balance's, more than its last
 * run's time, for one that did. */
static void check_run_info(const step_t *t) {
  ck_assert_msg(t->drift == 0.1, "step %ld: drift %g", t->step, t->drift);
  ck_assert_msg(t->makespan > 0 && t->wall > 0, "step %ld: %g %g", t->step,
                t->makespan, t->wall);
  if (!t->rebalanced) {
    ck_assert_msg(t->runs == 1, "step %ld: %u runs", t->step, t->runs);
    ck_assert_msg(fabs(t->wall - t->makespan) <= 1e-6 * t->makespan,
                  "step %ld: wall %g, makespan %g", t->step, t->wall,
                  t->makespan);
  } else {
    ck_assert_msg(t->runs >= 2, "step %ld: %u runs", t->step, t->runs);
    ck_assert_msg(t->wall > 1.2 * t->makespan,
                  "step %ld: wall %g for a re-balance whose last run took %g",
                  t->step, t->wall, t->makespan);
  }
}

/* From step `from` (where the change showed), the step at which the
 * ranks are balanced within eps again without re-balancing, after at most
 * three re-balances; and every later step up to `until` stays so. */
static size_t recovered(const step_t *s, size_t from, size_t until) {
  unsigned rebalances = 0;
  size_t k = from;
  for (; k < until && (s[k].rebalanced || s[k].imbalance > 0.05); k++)
    rebalances += (unsigned)s[k].rebalanced;
  ck_assert_msg(k < until, "step %ld: not balanced again by step %ld",
                s[from].step, s[until - 1].step);
  ck_assert_msg(rebalances >= 1 && rebalances <= 3,
                "step %ld: balanced again after %u re-balances", s[from].step,
                rebalances);
  for (size_t j = k; j < until; j++)
    ck_assert_msg(s[j].imbalance <= 0.05, "step %ld: imbalance %g", s[j].step,
                  s[j].imbalance);
  return k;
}

/* The steps whose imbalance passed the drift threshold (the default, 2
 * eps) after a balanced step: where a change of speed showed. */
static size_t changes(const step_t *s, size_t n, size_t *at, size_t max) {
  size_t c = 0;
  for (size_t k = 1; k < n && c < max; k++)
    if (!s[k].rebalanced && s[k].imbalance > 0.1 && s[k - 1].imbalance <= 0.05)
      at[c++] = k;
  return c;
}

/* Rank 1 (tests/data/mpi/drift1.json) turns 4 times slower from its 12th
 * share to its 30th: the divider follows it, and comes back, within three
 * re-balances each, on 2 and 4 simulated ranks. */
static void slowdown_and_its_end(const char *np, int q) {
  char *args[] = {ranks_bin, MLSBA_SOURCE_DIR "/tests/data/mpi/drift%r.json",
                  "4096",    "steps",
                  "40",      NULL};
  tool_run_t r;
  run_job(np, args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  step_t s[40];
  size_t n = parse_steps(r.out, q, 4096, s, 40);
  ck_assert_uint_eq(n, 40);
  for (size_t k = 0; k < n; k++)
    check_run_info(&s[k]);
  size_t at[4];
  ck_assert_msg(changes(s, n, at, 4) == 2, "%.1500s", r.out);
  /* Balanced at first; the slowdown, followed: rank 1 keeps less than
   * half its share and the makespan falls to less than half the drifted
   * step's. */
  ck_assert(s[0].imbalance <= 0.05);
  size_t slow = recovered(s, at[0], at[1]);
  ck_assert_msg(s[slow].split[1] < s[0].split[1] / 2, "%.1500s", r.out);
  ck_assert(s[slow].makespan < 0.5 * s[at[0]].makespan);
  /* Its end: rank 1 takes its share back (within 5%), the makespan as
   * before the slowdown. */
  size_t back = recovered(s, at[1], n);
  ck_assert_msg(llabs(s[back].split[1] - s[0].split[1]) <= s[0].split[1] / 20,
                "%.1500s", r.out);
  ck_assert(s[back].makespan <= 1.05 * s[0].makespan);
  tool_run_free(&r);
}

START_TEST(the_divider_follows_a_slowdown_and_its_end) {
  slowdown_and_its_end("2", 2);
  slowdown_and_its_end("4", 4);
}
END_TEST

/* One rank alone, slowed down and back: nothing to re-balance, and every
 * step says what it ran and how long it took. */
START_TEST(one_rank_reports_every_step) {
  char *args[] = {ranks_bin, MLSBA_SOURCE_DIR "/tests/data/mpi/drift1.json",
                  "4096",    "steps",
                  "40",      NULL};
  tool_run_t r;
  run_job("1", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  step_t s[40];
  size_t n = parse_steps(r.out, 1, 4096, s, 40);
  ck_assert_uint_eq(n, 40);
  double lo = s[0].makespan, hi = lo;
  for (size_t k = 0; k < n; k++) {
    check_run_info(&s[k]);
    ck_assert(!s[k].rebalanced && s[k].imbalance == 0);
    lo = s[k].makespan < lo ? s[k].makespan : lo;
    hi = s[k].makespan > hi ? s[k].makespan : hi;
  }
  /* The slowdown shows in the times (4x), and ends. */
  ck_assert_msg(fabs(hi / lo - 4) < 1e-6, "%g %g", lo, hi);
  ck_assert(s[n - 1].makespan == lo && s[0].makespan == lo);
  tool_run_free(&r);
}
END_TEST

/* The application's callback fails on a rank: the message names the
 * units the callback was given (rank 1's 10000..19999), not the window's
 * own numbering. */
START_TEST(a_failing_callback_names_its_global_units) {
  char *args[] = {ranks_bin, MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json",
                  "20000",   "fail",
                  "15000",   NULL};
  expect_one_line_error("2", args,
                        "error: rank 1: core1: the CPU function of load "
                        "divide-test returned 3 for units 10000..19999",
                        1);
}
END_TEST

START_TEST(a_bad_rank_stops_every_rank_with_one_line) {
  /* Rank 4 has no sample node inpa-node4. */
  char *missing[] = {inpa,          "--load", "mandelbrot", "--platform",
                     "inpa-node%r", "--size", "1000",       NULL};
  expect_one_line_error("5", missing, "rank 4: ", 0);
  /* Rank 1 passes a load of another size. */
  char *mismatch[] = {ranks_bin,
                      MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json", "1000",
                      "mismatch", NULL};
  expect_one_line_error("2", mismatch,
                        "error: rank 1: the load's unit count is 1001 here, "
                        "1000 on rank 0",
                        1);
}
END_TEST

/* mlsba-inpa --load's command line (tools/common/options.c, as the
 * product's): every option's bad and missing value, the product's options
 * that the load has no use for, and a missing --size. */
static const struct {
  const char *arg, *value, *want;
} cli[] = {
    {"--load", "fractal", "bad value for --load: fractal"},
    {"--size", "0", "bad value for --size: 0"},
    {"--width", "1048577", "bad value for --width: 1048577"},
    {"--iterations", "x", "bad value for --iterations: x"},
    {"--algo", "fast", "bad value for --algo: fast"},
    {"--eps", "", "bad value for --eps: \"\""}, /* once read as 0 */
    {"--eps", "1", "bad value for --eps: 1"},
    {"--max-iter", "0", "bad value for --max-iter: 0"},
    {"--block", "64", "not an option of --load: --block"},
    {"--precision", "single", "not an option of --load: --precision"},
    {"--bogus", NULL, "unknown option --bogus"},
    {"--platform", NULL, "a value is missing after --platform"},
    {"--width", NULL, "a value is missing after --width"},
    {"--iterations", NULL, "a value is missing after --iterations"},
    {"--algo", NULL, "a value is missing after --algo"},
    {"--eps", NULL, "a value is missing after --eps"},
    {"--max-iter", NULL, "a value is missing after --max-iter"},
    {"--json", NULL, "a value is missing after --json"},
    {"--load", NULL, "a value is missing after --load"},
};
/* Under the sanitizers the first twelve (each way the line is refused:
 * bad values, options the load has no use for, an unknown option, a
 * missing value): each case is one rank's start-up and its refusal, the
 * value parsers run under ASan in tools/fuzz (fuzz_args) and test_tools,
 * and every case here in the plain build. */
#if defined(__SANITIZE_ADDRESS__)
enum { cli_cases = 12 };
#else
enum { cli_cases = (int)(sizeof cli / sizeof cli[0]) };
#endif

START_TEST(every_load_option_refuses_a_bad_or_missing_value) {
  char *args[] = {inpa,
                  "--load",
                  "mandelbrot",
                  "--size",
                  "64",
                  (char *)cli[_i].arg,
                  (char *)cli[_i].value,
                  NULL};
  tool_run_t r;
  run_alone(args, &r);
  ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
  char *text = unwrap_lines(r.err);
  ck_assert_msg(strstr(text, cli[_i].want) != NULL, "no '%s' in: %s",
                cli[_i].want, text);
  ck_assert_msg(strstr(text, "Try 'mlsba-inpa --help'.") != NULL, "%s", text);
  ck_assert_str_eq(r.out, "");
  tool_run_free(&r);
}
END_TEST

/* Without --size, and a repeated option (the last one wins); --help in
 * --load's command line is mlsba-inpa's. */
START_TEST(a_load_needs_its_size_and_takes_the_last_value) {
  char *nosize[] = {inpa, "--load", "mandelbrot", NULL};
  tool_run_t r;
  run_job("1", nosize, &r);
  ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
  ck_assert_ptr_nonnull(strstr(r.err, "mlsba-inpa: rank 0: missing --size"));
  tool_run_free(&r);
  char *twice[] = {inpa,          "--load",  "mandelbrot", "--platform",
                   "inpa-node%r", "--size",  "100",        "--size",
                   "256",         "--width", "16",         "--json",
                   "-",           NULL};
  run_job("2", twice, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert_int_eq(ival(j, "n"), 256);
  ck_assert_int_eq(ival(j, "width"), 16);
  json_decref(j);
  tool_run_free(&r);
  char *help[] = {inpa, "--load", "mandelbrot", "--help", NULL};
  run_job("2", help, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "mlsba-inpa - "));
  tool_run_free(&r);
}
END_TEST

/* mlsba-inpa --load at the sizes it accepts: a rank holds only the rows
 * it computes (simulated ranks none: an image of 200000 x 200000 pixels,
 * 149 GiB whole, once failed there with "the load is NULL"); what real
 * ranks would need is checked against the host's memory before anything
 * runs; a --json destination that cannot be written is refused before
 * the run. On 1, 2 and 4 ranks, one line of ours, every rank stopped. */
START_TEST(a_large_image_is_held_only_where_it_is_computed) {
  char *sim[] = {inpa,
                 "--load",
                 "mandelbrot",
                 "--platform",
                 MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                 "--size",
                 "200000",
                 "--json",
                 "-",
                 NULL};
  tool_run_t r;
  run_job("2", sim, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert_int_eq(ival(j, "n"), 200000);
  ck_assert_int_eq(ival(j, "width"), 200000);
  ck_assert(json_is_true(json_object_get(j, "simulated")));
  ck_assert(json_is_true(json_object_get(j, "converged")));
  json_decref(j);
  tool_run_free(&r);
  char *huge[] = {inpa,      "--load",  "mandelbrot", "--size",
                  "1000000", "--width", "1000000",    NULL};
  char *unwritable[] = {inpa,
                        "--load",
                        "mandelbrot",
                        "--size",
                        "512",
                        "--json",
                        "/nonexistent/report.json",
                        NULL};
  const char *np[] = {"1", "2", "4"};
  for (size_t i = 0; i < 3; i++) {
    /* The first line of each (the rest wraps where the numbers say). */
    expect_one_line_error(np[i], huge,
                          "--size 1000000 --width 1000000: rank 0's rows of "
                          "the image need",
                          0);
    expect_one_line_error(np[i], unwritable,
                          "--json: /nonexistent/report.json: cannot write: "
                          "its folder",
                          0);
  }
}
END_TEST

#ifdef MLSBA_INPA_SMPI_BIN
/* mlsba-inpa-smpi --load mandelbrot on four simulated ranks of the
 * sample nodes (models/sim/inpa-node%r.json) under SimGrid's smpirun,
 * the job as every SMPI job here starts (support/run_ranks.h); width is
 * NULL for the image's own. */
static json_t *run_smpi_load(const char *size, const char *width) {
  char *args[] = {"--cfg=smpi/host-speed:10Gf",
                  MLSBA_INPA_SMPI_BIN,
                  "--load",
                  "mandelbrot",
                  "--platform",
                  MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                  "--size",
                  (char *)size,
                  "--json",
                  "-",
                  width ? "--width" : NULL,
                  (char *)width,
                  NULL};
  tool_run_t r;
  run_smpi_ranks(MLSBA_TIMEOUT, "120", MLSBA_SMPIRUN, "4",
                 MLSBA_SOURCE_DIR "/tests/data/mpi/smpi.xml",
                 MLSBA_SOURCE_DIR "/tests/data/mpi/smpi.hosts", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %.1000s", r.status,
                r.err);
  json_t *j = parse_json(strchr(r.out, '{'));
  ck_assert(json_is_true(json_object_get(j, "simulated")));
  tool_run_free(&r);
  return j;
}

/* The same program built with smpicc, four simulated ranks under
 * SimGrid's smpirun: the ranks balance within eps, their devices' times
 * handed to SimGrid. */
START_TEST(four_ranks_under_smpi_balance) {
  json_t *j = run_smpi_load("4096", "16");
  ck_assert_str_eq(json_string_value(json_object_get(j, "stop")), "balanced");
  ck_assert(json_number_value(json_object_get(j, "imbalance")) <= 0.05);
  /* Simulated time passed: the balancing's wall time covers every run. */
  ck_assert(json_number_value(json_object_get(j, "wall_s")) >=
            json_number_value(json_object_get(j, "makespan_s")));
  json_decref(j);
}
END_TEST

/* Under smpirun every simulated rank is in one process: an image each
 * (40 GB at 100000 x 100000) once failed there; simulated ranks hold
 * none. */
START_TEST(a_large_image_under_smpi_costs_nothing) {
  json_t *j = run_smpi_load("100000", NULL);
  ck_assert_int_eq(ival(j, "width"), 100000);
  json_decref(j);
}
END_TEST
#endif

#ifdef MLSBA_PDGEMM_BIN
/* The 2-D product on the application's own matrices (the example
 * tools/examples/mpi_pdgemm.c): every rank's rectangle of C and the
 * gathered C equal the exact products of the application's A and B; a
 * rank whose fill fails stops every rank with one line naming it. */
START_TEST(the_product_of_the_applications_matrices_is_right) {
  char pdgemm[] = MLSBA_PDGEMM_BIN;
  char *args[] = {pdgemm, "512", "64",
                  MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json", NULL};
  tool_run_t r;
  run_job("2", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  ck_assert(strstr(r.out, "rank 0: C(") && strstr(r.out, "rank 1: C("));
  ck_assert(strstr(r.out, "gathered C is right") != NULL);
  ck_assert(strstr(r.out, "WRONG") == NULL);
  tool_run_free(&r);
  char *failing[] = {pdgemm, "512",
                     "64",   MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json",
                     "1",    NULL};
  run_job("2", failing, &r);
  ck_assert_msg(r.exited && r.status != 0 && r.status != 124, "status %d",
                r.status);
  ck_assert_msg(strstr(r.err, "mpi_pdgemm: rank 1: the application's fill "
                              "of A rows") != NULL,
                "%s", r.err);
  int ours = 0;
  for (const char *p = r.err; (p = strstr(p, "mpi_pdgemm: ")) != NULL; p++)
    ours++;
  ck_assert_int_eq(ours, 1);
  tool_run_free(&r);
}
END_TEST
#endif
#endif

static Suite *divide_suite(void) {
  Suite *s = suite_create("divide");
  TCase *tc = tcase_create("head");
  tcase_add_test(tc, constant_speeds_balance_in_two_runs);
  tcase_add_test(tc, rising_speeds_converge_within_eps);
  tcase_add_test(tc, baselines_stop_after_their_runs);
  tcase_add_test(tc, noisy_nodes_stop_honestly);
  tcase_add_test(tc, a_resume_follows_a_change_of_speed);
  tcase_add_test(tc, cycles_count_only_the_runs_since_the_drift);
  tcase_add_test(tc, a_resume_keeps_what_agrees_and_checks_its_input);
  tcase_add_test(tc, bad_input_is_refused);
  suite_add_tcase(s, tc);
#ifdef MLSBA_INPA_BIN
  TCase *mpi = tcase_create("ranks");
  tcase_set_timeout(mpi, 240);
  tcase_add_test(mpi, four_simulated_ranks_converge_to_the_heads_shares);
  tcase_add_test(mpi, two_real_ranks_compute_the_reference_image);
  tcase_add_test(mpi, a_divider_run_computes_each_rank_its_share);
  tcase_add_test(mpi, a_bad_rank_stops_every_rank_with_one_line);
  tcase_add_loop_test(mpi, every_load_option_refuses_a_bad_or_missing_value, 0,
                      cli_cases);
  tcase_add_test(mpi, a_load_needs_its_size_and_takes_the_last_value);
  tcase_add_test(mpi, the_divider_follows_a_slowdown_and_its_end);
  tcase_add_test(mpi, one_rank_reports_every_step);
  tcase_add_test(mpi, a_failing_callback_names_its_global_units);
  tcase_add_test(mpi, a_large_image_is_held_only_where_it_is_computed);
#ifdef MLSBA_PDGEMM_BIN
  tcase_add_test(mpi, the_product_of_the_applications_matrices_is_right);
#endif
#ifdef MLSBA_INPA_SMPI_BIN
  tcase_add_test(mpi, four_ranks_under_smpi_balance);
  tcase_add_test(mpi, a_large_image_under_smpi_costs_nothing);
#endif
  suite_add_tcase(s, mpi);
#endif
  return s;
}

int main(void) { return run_suite(divide_suite()); }
