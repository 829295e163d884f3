/* Models on disk: a saved model loads back exactly; a truncated, corrupted,
 * foreign or other-version file is refused with a message; a writer killed
 * in the middle of saves never leaves a broken file. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "balance/store.h"
#include "mlsba.h"
#include "support/random_models.h"
#include "support/run_suite.h"
#include "support/scratch.h"

static char dir[] = "/tmp/mlsba-store-XXXXXX";
static char path[256];

static void setup(void) {
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/dev.model", dir);
}

static void teardown(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static mlsba_model_t *sample(void) {
  rng_t r = {.state = 8};
  mlsba_model_t *m = random_paper_model(&r, 12, 1e4);
  ck_assert_int_eq(mlsba_model_set_max_load(m, 6663), 0);
  return m;
}

/* Rewrites the file through f(text, len). */
static void damage(void (*f)(char *text, size_t *len)) {
  FILE *in = fopen(path, "rb");
  ck_assert_ptr_nonnull(in);
  char text[65536];
  size_t len = fread(text, 1, sizeof text, in);
  fclose(in);
  f(text, &len);
  FILE *out = fopen(path, "wb");
  fwrite(text, 1, len, out);
  fclose(out);
}

static void flip_a_digit(char *t, size_t *len) {
  (void)len;
  char *p = strstr(t, "points");
  p = strchr(p, '\n') + 3;
  *p = *p == '7' ? '8' : '7';
}
static void cut_in_half(char *t, size_t *len) {
  (void)t;
  *len /= 2;
}
static void next_version(char *t, size_t *len) {
  (void)len;
  t[strlen("mlsba-model ")] = '2';
}

static void expect_refused(const char *key, const char *why) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_load(path, key, &m), MLSBA_EFORMAT);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(mlsba_last_error(), why) != NULL, "\"%s\" lacks \"%s\"",
                mlsba_last_error(), why);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), path));
}

START_TEST(a_saved_model_loads_back_exactly) {
  mlsba_model_t *m = sample(), *back = NULL;
  ck_assert_int_eq(mlsba_model_save(m, path, "host=a device=b"), 0);
  ck_assert_int_eq(mlsba_model_load(path, "host=a device=b", &back), 0);
  ck_assert_uint_eq(mlsba_model_num_points(back), mlsba_model_num_points(m));
  ck_assert_int_eq(mlsba_model_max_load(back), 6663);
  for (size_t i = 0; i < mlsba_model_num_points(m); i++) {
    double x1, s1, x2, s2;
    mlsba_model_get_point(m, i, &x1, &s1);
    mlsba_model_get_point(back, i, &x2, &s2);
    ck_assert_double_eq(x1, x2);
    ck_assert_double_eq(s1, s2);
  }
  mlsba_model_destroy(m);
  mlsba_model_destroy(back);
}
END_TEST

START_TEST(damaged_and_foreign_files_are_refused) {
  mlsba_model_t *m = sample();
  ck_assert_int_eq(mlsba_model_save(m, path, "k"), 0);
  expect_refused("other key", "another device or problem");
  damage(flip_a_digit);
  expect_refused("k", "checksum");
  ck_assert_int_eq(mlsba_model_save(m, path, "k"), 0);
  damage(cut_in_half);
  expect_refused("k", "truncated");
  ck_assert_int_eq(mlsba_model_save(m, path, "k"), 0);
  damage(next_version);
  expect_refused("k", "checksum"); /* the version is covered too */
  FILE *f = fopen(path, "w");
  fputs("hello\n", f);
  fclose(f);
  expect_refused("k", "truncated");
  mlsba_model_t *none = NULL;
  ck_assert_int_eq(mlsba_model_load("/nonexistent/x.model", "k", &none),
                   MLSBA_EIO);
  ck_assert_int_eq(mlsba_model_save(m, path, "two\nlines"), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_save(m, "/nonexistent/dir/x.model", "k"),
                   MLSBA_EIO);
  mlsba_model_destroy(m);
}
END_TEST

/* A child saves in a loop and is killed at random moments; the file is
 * always one complete save, old or new. */
START_TEST(a_killed_writer_never_leaves_a_broken_file) {
  mlsba_model_t *m = sample();
  ck_assert_int_eq(mlsba_model_save(m, path, "k"), 0);
  for (int round = 0; round < 20; round++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      for (int i = 0;; i++) {
        mlsba_model_set_point(m, 1e5 + i, 1 + i);
        mlsba_model_save(m, path, "k");
      }
    }
    struct timespec pause = {0, 1000000L + 997000L * round};
    nanosleep(&pause, NULL);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    mlsba_model_t *back = NULL;
    ck_assert_msg(mlsba_model_load(path, "k", &back) == 0, "round %d: %s",
                  round, mlsba_last_error());
    mlsba_model_destroy(back);
  }
  mlsba_model_destroy(m);
}
END_TEST

/* Thousands of damaged copies of a model file (bytes flipped, cut short,
 * inserted): each loads as a valid model or is refused with EFORMAT, and
 * nothing crashes (the suite runs each test in its own process and under
 * AddressSanitizer in CI). */
START_TEST(random_damage_never_crashes_the_loader) {
  mlsba_model_t *m = sample();
  ck_assert_int_eq(mlsba_model_save(m, path, "key"), 0);
  FILE *in = fopen(path, "rb");
  char good[8192];
  size_t len = fread(good, 1, sizeof good, in);
  fclose(in);
  rng_t r = {.state = 77};
  int refused = 0;
  for (int trial = 0; trial < 3000; trial++) {
    char bad[8300];
    size_t n = len;
    memcpy(bad, good, len);
    int edits = (int)rng_range(&r, 1, 4);
    for (int e = 0; e < edits; e++) {
      size_t at = (size_t)rng_range(&r, 0, (int64_t)n - 1);
      switch (rng_range(&r, 0, 2)) {
      case 0:
        bad[at] = (char)rng_range(&r, 0, 255);
        break;
      case 1:
        n = at;
        break;
      default:
        if (n < sizeof bad - 1) {
          memmove(bad + at + 1, bad + at, n - at);
          bad[at] = (char)rng_range(&r, 0, 255);
          n++;
        }
      }
      if (n == 0)
        break;
    }
    FILE *out = fopen(path, "wb");
    fwrite(bad, 1, n, out);
    fclose(out);
    mlsba_model_t *back = NULL;
    int err = mlsba_model_load(path, "key", &back);
    ck_assert_msg(err == 0 || err == MLSBA_EFORMAT, "trial %d: %s", trial,
                  mlsba_err_name(err));
    refused += err != 0;
    mlsba_model_destroy(back);
  }
  ck_assert_int_ge(refused, 2900); /* the checksum catches nearly all */
  mlsba_model_destroy(m);
}
END_TEST

/* A device named ../OUTSIDE wrote OUTSIDE.*.model beside the models
 * folder. Every name now becomes a file-name part of its own: kept when
 * made of letters, digits, '.', '_', '-' (existing files keep their
 * names), escaped as %XX otherwise; the files stay in the folder. */
START_TEST(device_names_never_put_model_files_outside_their_folder) {
  scratch_make();
  char models[128];
  snprintf(models, sizeof models, "%s/models", scratch);
  ck_assert_int_eq(mkdir(models, 0700), 0);
  mlsba_platform_t *pl = parse_ok(
      "{\"devices\": [{\"name\": \"../OUTSIDE\", \"type\": \"sim\", "
      "\"speed\": [[1, 10]]}, {\"name\": \".hidden\", \"type\": \"sim\", "
      "\"speed\": [[1, 20]]}, {\"name\": \"a/b c\", \"type\": \"sim\", "
      "\"speed\": [[1, 30]]}, {\"name\": \"gpu-0.x_Y\", \"type\": "
      "\"sim\", \"speed\": [[1, 40]]}]}");
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  static float one;
  mlsba_gemm_t g = {.m = 1, .n = 400, .k = 1, .a = &one, .b = &one, .c = &one};
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.model_dir = models;
  mlsba_balance_result_t r;
  ck_assert_msg(mlsba_balance_gemm(ex, &g, &o, &r) == 0, "%s",
                mlsba_last_error());
  ck_assert_int_eq(r.save_error, 0);
  mlsba_balance_result_free(&r);
  /* Nothing beside the folder; four files in it, none hidden. */
  DIR *d = opendir(scratch);
  struct dirent *e;
  int beside = 0, inside = 0;
  while (d && (e = readdir(d)) != NULL)
    beside += e->d_name[0] != '.' && strcmp(e->d_name, "models") != 0;
  closedir(d);
  d = opendir(models);
  char names[4][64] = {{0}};
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    ck_assert_msg(e->d_name[0] != '.', "hidden: %s", e->d_name);
    if (inside < 4)
      snprintf(names[inside], sizeof names[inside], "%.60s", e->d_name);
    inside++;
    unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
  ck_assert_int_eq(beside, 0);
  ck_assert_int_eq(inside, 4);
  int plain = 0, escaped = 0;
  for (int i = 0; i < 4; i++) {
    plain += strncmp(names[i], "gpu-0.x_Y.", 10) == 0;
    escaped += strncmp(names[i], "%2E.%2FOUTSIDE.", 15) == 0 ||
               strncmp(names[i], "%2Ehidden.", 10) == 0 ||
               strncmp(names[i], "a%2Fb%20c.", 10) == 0;
  }
  ck_assert_int_eq(plain, 1);
  ck_assert_int_eq(escaped, 3);
  rmdir(models);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
  scratch_remove();
}
END_TEST
START_TEST(a_bad_point_names_the_file_once) {
  char text[] = "mlsba-model 1\nkey k\nmax_load -1\npoints 1\nnan 1\n";
  char body[256];
  size_t len = strlen(text);
  snprintf(body, sizeof body, "%schecksum %016llx\n", text,
           (unsigned long long)mlsba__model_checksum(text, len));
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba__model_parse_text("some.model", "k", body,
                                           strlen(body), &m, NULL, NULL, 0),
                   MLSBA_EFORMAT);
  const char *msg = mlsba_last_error();
  const char *first = strstr(msg, "some.model");
  ck_assert_ptr_nonnull(first);
  ck_assert_msg(strstr(first + 1, "some.model") == NULL, "garbled: %s", msg);
  ck_assert_msg(strstr(msg, "load must be in") != NULL, "%s", msg);
  /* A saved model with denormal speeds and a valid checksum crashed every
   * later run until deleted: now it is refused like a damaged file (and
   * the balancer measures afresh and saves over it). */
  char tiny[] = "mlsba-model 1\nkey k\nmax_load -1\npoints 2\n1 4.9e-324\n"
                "2 1e-310\n";
  snprintf(body, sizeof body, "%schecksum %016llx\n", tiny,
           (unsigned long long)mlsba__model_checksum(tiny, strlen(tiny)));
  ck_assert_int_eq(mlsba__model_parse_text("tiny.model", "k", body,
                                           strlen(body), &m, NULL, NULL, 0),
                   MLSBA_EFORMAT);
  ck_assert_msg(strstr(mlsba_last_error(), "speed must be in") != NULL, "%s",
                mlsba_last_error());
}
END_TEST
/* What a killed writer left (PATH.tmp.PID, PID gone, older than a minute)
 * is removed by the next save of PATH; a live writer's file is kept. */
START_TEST(temporary_files_of_killed_writers_are_removed) {
  scratch_make();
  pid_t dead = fork();
  ck_assert_int_ge(dead, 0);
  if (dead == 0)
    _exit(0);
  waitpid(dead, NULL, 0);
  char target[128], stale[160], live[160], young[160];
  snprintf(target, sizeof target, "%s/dev.k.model", scratch);
  snprintf(stale, sizeof stale, "%s.tmp.%ld", target, (long)dead);
  snprintf(live, sizeof live, "%s.tmp.%ld", target, (long)getppid());
  snprintf(young, sizeof young, "%s/dev.k.model.tmp.%ld", scratch, (long)dead);
  const char *old[] = {stale, live};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(old[i], "w");
    ck_assert_ptr_nonnull(f);
    fputs("half a mod", f);
    fclose(f);
    struct timeval tv[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    ck_assert_int_eq(utimes(old[i], tv), 0);
  }
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 10, 5), 0);
  ck_assert_int_eq(mlsba_model_save(m, target, "k"), 0);
  ck_assert_int_eq(access(stale, F_OK), -1);
  ck_assert_int_eq(access(live, F_OK), 0);
  /* A dead writer's file touched within the minute may belong to a
   * writer on another machine: kept. */
  FILE *f = fopen(young, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  ck_assert_int_eq(mlsba_model_save(m, target, "k"), 0);
  ck_assert_int_eq(access(young, F_OK), 0);
  mlsba_model_destroy(m);
  scratch_remove();
}
END_TEST

static Suite *store_suite(void) {
  Suite *s = suite_create("store");
  TCase *tc = tcase_create("files");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, a_saved_model_loads_back_exactly);
  tcase_add_test(tc, damaged_and_foreign_files_are_refused);
  tcase_add_test(tc, a_killed_writer_never_leaves_a_broken_file);
  tcase_add_test(tc, random_damage_never_crashes_the_loader);
  suite_add_tcase(s, tc);
  TCase *tc_more = tcase_create("damage and writers");
  tcase_set_timeout(tc_more, 60);
  tcase_add_test(tc_more,
                 device_names_never_put_model_files_outside_their_folder);
  tcase_add_test(tc_more, a_bad_point_names_the_file_once);
  tcase_add_test(tc_more, temporary_files_of_killed_writers_are_removed);
  suite_add_tcase(s, tc_more);
  return s;
}

int main(void) { return run_suite(store_suite()); }
