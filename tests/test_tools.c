/* mlsba-partition as other tools use it: the command line and the JSON
 * report of docs/partition-report.md, and one clear line with exit status
 * 2 for every kind of bad input, never a signal. */
#define _GNU_SOURCE /* F_SETPIPE_SZ, mknod, makedev */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/options.h"
#include "mlsba.h"
#include "support/big_platform.h"
#include "support/run_suite.h"
#include "support/run_tool.h"
#include "support/scratch.h"

#define SEED002 MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json"

static char partition[] = MLSBA_PARTITION_BIN;
static char bench[] = MLSBA_BENCH_BIN;
static char info[] = MLSBA_INFO_BIN;

static json_t *parse_json(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "not JSON (%s): %s", e.text, text);
  return j;
}

/* Checks one result object against the contract; returns its makespan. */
static double check_result(json_t *r, const char *algo, json_int_t n) {
  static const size_t sizes[] = {2, 2, 1, 1};
  ck_assert_str_eq(json_string_value(json_object_get(r, "algorithm")), algo);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "n")), n);
  json_t *alpha = json_object_get(r, "alpha"),
         *beta = json_object_get(r, "beta");
  ck_assert_uint_eq(json_array_size(alpha), 4);
  ck_assert_uint_eq(json_array_size(beta), 4);
  json_int_t total = 0;
  for (size_t g = 0; g < 4; g++) {
    json_t *bg = json_array_get(beta, g);
    ck_assert_uint_eq(json_array_size(bg), sizes[g]);
    json_int_t in_group = 0;
    for (size_t k = 0; k < sizes[g]; k++)
      in_group += json_integer_value(json_array_get(bg, k));
    ck_assert_int_eq(in_group, json_integer_value(json_array_get(alpha, g)));
    total += in_group;
  }
  ck_assert_int_eq(total, n);
  json_t *points = json_object_get(r, "points");
  json_t *per_group = json_object_get(points, "per_group");
  ck_assert_uint_eq(json_array_size(per_group), 4);
  json_int_t sum = 0;
  for (size_t g = 0; g < 4; g++)
    sum += json_integer_value(json_array_get(per_group, g));
  ck_assert_int_eq(json_integer_value(json_object_get(points, "total")), sum);
  ck_assert(json_is_number(json_object_get(r, "overhead_s")));
  ck_assert_double_gt(json_number_value(json_object_get(r, "overhead_s")), 0);
  ck_assert_uint_eq(json_object_size(r), 7); /* exactly the contract */
  double makespan = json_number_value(json_object_get(r, "makespan"));
  ck_assert_double_gt(makespan, 0);
  return makespan;
}

START_TEST(json_report_follows_the_contract) {
  char *argv[] = {partition, "--platform", SEED002, "--n",
                  "8400",    "--json",     "-",     NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse_json(r.out); /* stdout holds the JSON and nothing else */
  check_result(j, "mlsba", 8400);
  /* The paper's target for this platform: at most 111 points. */
  json_int_t pts = json_integer_value(
      json_object_get(json_object_get(j, "points"), "total"));
  ck_assert_int_le(pts, 111);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(all_algorithms_in_one_report) {
  static const char *names[] = {"mlsba",        "mlfba2",     "slba",
                                "multiple-cpm", "single-cpm", "homogeneous",
                                "dlt"};
  char *argv[] = {partition, "--platform", SEED002,  "--n", "8400",
                  "--algo",  "all",        "--json", "-",   NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse_json(r.out);
  json_t *results = json_object_get(j, "results");
  ck_assert_uint_eq(json_array_size(results), 7);
  double t[7];
  for (size_t i = 0; i < 7; i++)
    t[i] = check_result(json_array_get(results, i), names[i], 8400);
  ck_assert_double_eq(t[0], t[1]); /* mlsba = mlfba2 = slba, the optimum */
  ck_assert_double_eq(t[0], t[2]);
  for (size_t i = 3; i < 7; i++)
    ck_assert_double_ge(t[i], t[0]);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(json_to_a_file_and_a_table_to_stdout) {
  char path[] = "/tmp/mlsba-report-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char *argv[] = {partition, "--platform", SEED002,  "--n", "100",
                  "--algo",  "dlt",        "--json", path,  NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "makespan"));
  ck_assert_ptr_nonnull(strstr(r.out, "gpu0"));
  json_error_t e;
  json_t *j = json_load_file(path, 0, &e);
  ck_assert_ptr_nonnull(j);
  check_result(j, "dlt", 100);
  json_decref(j);
  unlink(path);
  tool_run_free(&r);
}
END_TEST

/* Runs tool with args (NULL-terminated) and checks the answer to bad
 * input: exit status 2, never a signal, stderr naming the problem in one
 * line (and a pointer to --help), nothing on stdout. */
static void expect_usage_error(char *tool, const char *const *args,
                               const char *expect, int which) {
  char *argv[12] = {tool};
  int k = 0;
  while (args[k] && k < 10) {
    argv[k + 1] = (char *)args[k];
    k++;
  }
  argv[k + 1] = NULL;
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited, "case %d died by a signal", which);
  ck_assert_int_eq(r.status, 2);
  /* Every line within 80 columns: a long one is wrapped. */
  for (const char *l = r.err; *l;
       l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
    ck_assert_msg(strcspn(l, "\n") <= 80, "case %d: %s", which, r.err);
  unwrap_lines(r.err);
  ck_assert_msg(strstr(r.err, expect) != NULL,
                "case %d: stderr \"%s\" lacks \"%s\"", which, r.err, expect);
  ck_assert_msg(count_lines(r.err) <= 2, "case %d: %s", which, r.err);
  ck_assert_str_eq(r.out, "");
  tool_run_free(&r);
}

/* Bad input: exit status 2, one line on stderr naming the problem. */
static const struct {
  const char *args[8];
  const char *expect;
} bad[] = {
    {{NULL}, "missing --platform"},
    {{"--platform", SEED002, NULL}, "missing --n"},
    {{"--bogus", NULL}, "unknown option --bogus"},
    {{"--platform", NULL}, "a value is missing after --platform"},
    {{"--platform", SEED002, "--n", "abc", NULL}, "got abc"},
    {{"--platform", SEED002, "--n", "-5", NULL}, "got -5"},
    {{"--platform", SEED002, "--n", "99999999999999999999999", NULL},
     "from 0 to 2^53"},
    {{"--platform", SEED002, "--n", "10", "--algo", "fast", NULL},
     "unknown algorithm 'fast' (mlsba, mlfba2, slba, multiple-cpm, "
     "single-cpm, homogeneous, dlt), or all"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data/bad/empty.json", "--n", "10",
      NULL},
     "expected near end of file"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data/bad/truncated.json", "--n",
      "10", NULL},
     "truncated.json:1:60"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data/bad/unknown-field.json",
      "--n", "10", NULL},
     "unknown field 'sped'"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data/bad/unknown-type.json", "--n",
      "10", NULL},
     "unknown device type \"fpga\""},
    {{"--platform",
      MLSBA_SOURCE_DIR "/tests/data/bad/device-in-two-groups.json", "--n", "10",
      NULL},
     "in more than one group"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data/bad/points-out-of-order.json",
      "--n", "10", NULL},
     "speed[1]: loads must increase"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data", "--n", "10", NULL},
     "not a regular file"},
    {{"--platform", "/nonexistent.json", "--n", "10", NULL},
     "/nonexistent.json: cannot open"},
    {{"--platform", MLSBA_SOURCE_DIR "/README.md", "--n", "10", NULL},
     "README.md:1:"},
};

START_TEST(bad_input_gets_one_clear_line_and_status_2) {
  expect_usage_error(partition, bad[_i].args, bad[_i].expect, _i);
}
END_TEST

START_TEST(real_devices_and_too_little_capacity_are_refused) {
  char path[] = "/tmp/mlsba-platform-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *cpu = "{\"devices\": [{\"name\": \"core7\", \"type\": \"cpu\", "
                    "\"core\": 7}]}";
  ck_assert_int_eq(write(fd, cpu, strlen(cpu)), (ssize_t)strlen(cpu));
  close(fd);
  char *argv[] = {partition, "--platform", path, "--n", "10", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "core7 is measured"));
  ck_assert_ptr_nonnull(strstr(r.err, "shape"));
  tool_run_free(&r);

  FILE *f = fopen(path, "w");
  fputs("{\"devices\": [{\"name\": \"g\", \"type\": \"sim\", \"speed\": "
        "[[1, 5]], \"max_load\": 50}]}",
        f);
  fclose(f);
  run_tool(argv, &r);
  ck_assert_int_eq(r.status, 0);
  tool_run_free(&r);
  char *argv2[] = {partition, "--platform", path, "--n", "51", NULL};
  run_tool(argv2, &r);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "can hold 50 units"));
  tool_run_free(&r);
  unlink(path);
}
END_TEST

/* A platform of measured devices: two cpu devices on core 0 (one core is
 * enough), whose models mlsba-bench saves and mlsba-partition then takes;
 * mlsba-info lists and shows them. */
static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  ck_assert_int_eq(fclose(f), 0);
}

START_TEST(saved_models_are_partitioned_listed_and_shown) {
  char dir[] = "/tmp/mlsba-saved-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char pf[128], models[128], file[256];
  snprintf(pf, sizeof pf, "%s/two.json", dir);
  snprintf(models, sizeof models, "%s/models", dir);
  write_text(pf, "{\"name\": \"two\", \"devices\": ["
                 "{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0},"
                 "{\"name\": \"b\", \"type\": \"cpu\", \"core\": 0}]}");
  /* Nothing saved yet: the line says for which product and how. */
  char *first[] = {partition, "--platform", pf,     "--size",
                   "128",     "--models",   models, NULL};
  tool_run_t r;
  run_tool(first, &r);
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "a has no saved model") &&
                    strstr(r.err, "mlsba-bench --platform"),
                "%s", r.err);
  tool_run_free(&r);
  char *measure[] = {bench,      "--platform", pf,        "--size", "128",
                     "--models", models,       "--quiet", NULL};
  run_tool(measure, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  tool_run_free(&r);
  char *part[] = {partition,  "--platform", pf,       "--size", "128",
                  "--models", models,       "--json", "-",      NULL};
  run_tool(part, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  json_t *alpha = json_object_get(j, "alpha");
  ck_assert_uint_eq(json_array_size(alpha), 2); /* a group per device */
  ck_assert_int_eq(json_integer_value(json_array_get(alpha, 0)) +
                       json_integer_value(json_array_get(alpha, 1)),
                   128);
  ck_assert_double_gt(json_number_value(json_object_get(j, "makespan")), 0);
  json_decref(j);
  tool_run_free(&r);
  /* Another shape has no models. */
  char *other[] = {partition, "--platform", pf,    "-m",       "64",   "-k",
                   "64",      "--n",        "128", "--models", models, NULL};
  run_tool(other, &r);
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "m=64 k=64"), "%s", r.err);
  tool_run_free(&r);
  char *list[] = {info, "--list-models", "--models", models, NULL};
  run_tool(list, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "a.gemm-single-m128-k128.model\n") &&
                    strstr(r.out, "b.gemm-single-m128-k128.model\n") &&
                    strstr(r.out, "key host="),
                "%s", r.out);
  tool_run_free(&r);
  char *show[] = {info,       "--show-model", "a.gemm-single-m128-k128.model",
                  "--models", models,         NULL};
  run_tool(show, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "load [units]") && strstr(r.out, "runs"), "%s",
                r.out);
  tool_run_free(&r);
  /* A damaged file: listed as not read, refused by --show-model. */
  snprintf(file, sizeof file, "%s/a.gemm-single-m128-k128.model", models);
  FILE *f = fopen(file, "a");
  fputs("x\n", f);
  fclose(f);
  run_tool(list, &r);
  ck_assert_msg(strstr(r.out, "not read: "), "%s", r.out);
  tool_run_free(&r);
  run_tool(show, &r);
  ck_assert_int_eq(r.status, 2);
  ck_assert_msg(strstr(r.err, "corrupt") || strstr(r.err, "checksum"), "%s",
                r.err);
  tool_run_free(&r);
  snprintf(file, sizeof file, "rm -rf %s", dir);
  ck_assert_int_eq(system(file), 0);
}
END_TEST

/* --show-model --plot draws the model with gnuplot (where installed). */
START_TEST(a_saved_model_is_plotted) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0)
    return; /* the picture needs gnuplot; the rest is tested above */
  char dir[] = "/tmp/mlsba-plot-model-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char model[128], pics[128], png[160];
  snprintf(model, sizeof model, "%s/d.model", dir);
  snprintf(pics, sizeof pics, "%s/pics", dir);
  snprintf(png, sizeof png, "%s/model.png", pics);
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  mlsba_model_set_point(m, 100, 2000);
  mlsba_model_set_point(m, 4000, 24000);
  ck_assert_int_eq(mlsba_model_save(m, model, "device=d 'quoted'"), 0);
  mlsba_model_destroy(m);
  char *argv[] = {info, "--show-model", model, "--plot", pics, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_int_eq(access(png, F_OK), 0);
  tool_run_free(&r);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A sample platform by name, and --size for --n, as mlsba-bench says it. */
START_TEST(a_sample_platform_by_name_and_size) {
  char *argv[] = {partition, "--platform", "desktop-seed002",
                  "--size",  "8400",       "--json",
                  "-",       NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  check_result(j, "mlsba", 8400);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(help_and_version_exit_0) {
  char *argv[] = {partition, "--help", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "usage: mlsba-partition --platform"));
  tool_run_free(&r);
  char *argv2[] = {partition, "--version", NULL};
  run_tool(argv2, &r);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "libmlsba"));
  tool_run_free(&r);
}
END_TEST

/* mlsba-info shows every core and the default groups, and writes a
 * platform file that loads again. */
START_TEST(info_shows_devices_and_groups) {
  char path[] = "/tmp/mlsba-info-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char *argv[] = {info, "--write", path, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "core0"));
  ck_assert_ptr_nonnull(strstr(r.out, "group 0: core0"));
  /* The cores are one kind (two or more on a CPU with cores of several
   * kinds), and the written file keeps it. */
  ck_assert_ptr_nonnull(strstr(r.out, "  cpu"));
  tool_run_free(&r);
  /* A text file: it ends with a newline. */
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fseek(f, -1, SEEK_END), 0);
  ck_assert_int_eq(fgetc(f), '\n');
  fclose(f);
  char *again[] = {info, "--platform", path, NULL};
  run_tool(again, &r);
  ck_assert_int_eq(r.status, 0);
  ck_assert_ptr_nonnull(strstr(r.out, "core0"));
  ck_assert_ptr_nonnull(strstr(r.out, "  cpu"));
  tool_run_free(&r);
  unlink(path);
}
END_TEST

/* A platform file that names a core this machine lacks is shown, with a
 * complaint naming the device, and exit status 1: mlsba-bench would refuse
 * it here. A simulated device's max_load reads in the memory column. */
START_TEST(info_says_what_this_machine_cannot_run) {
  char path[] = "/tmp/mlsba-info-core-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *json = "{\"devices\": [{\"name\": \"far\", \"type\": "
                     "\"cpu\", \"core\": 4095}]}";
  ck_assert_int_eq(write(fd, json, strlen(json)), (ssize_t)strlen(json));
  close(fd);
  char *argv[] = {info, "--platform", path, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_int_eq(r.status, 1);
  ck_assert_msg(strstr(r.out, "far ") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.err, "far") && strstr(r.err, "cannot run"), "%s",
                r.err);
  tool_run_free(&r);
  unlink(path);
  char *sim[] = {info, "--platform", SEED002, NULL};
  run_tool(sim, &r);
  ck_assert_int_eq(r.status, 0);
  ck_assert_msg(strstr(r.out, "max 6663") && strstr(r.out, "CUs"), "%s", r.out);
  tool_run_free(&r);
}
END_TEST

/* With no OpenCL platform at all (the ICD loader pointed at an empty list
 * of vendors), discovery still finds the cores, each a group of its own. */
START_TEST(info_works_without_opencl) {
  setenv("OCL_ICD_VENDORS", "/nonexistent-vendors", 1);
  char *argv[] = {info, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_ptr_null(strstr(r.out, "ocl0"));
  ck_assert_ptr_nonnull(strstr(r.out, "group 0: core0\n"));
  tool_run_free(&r);
  unsetenv("OCL_ICD_VENDORS");
}
END_TEST

START_TEST(info_refuses_bad_input) {
  char *argv[] = {info, "--frobnicate", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert(r.exited);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "unknown option --frobnicate"));
  tool_run_free(&r);
  char *missing[] = {info, "--platform", "/nonexistent.json", NULL};
  run_tool(missing, &r);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent.json: cannot open"));
  tool_run_free(&r);
}
END_TEST

/* The fields of one mlsba-bench report (docs/bench-report.md): the base
 * ones, and those added after them: steady_s, steady_gflops, left_out,
 * faulty, stop, variation, steady_min_s, steady_max_s (and, in a
 * --compare row, within_noise_of_best). */
static void check_bench_report(json_t *r, size_t groups) {
  static const char *keys[] = {"algorithm",
                               "platform",
                               "m",
                               "n",
                               "k",
                               "precision",
                               "iterations",
                               "converged",
                               "makespan_s",
                               "gflops",
                               "imbalance",
                               "overhead_s",
                               "points",
                               "verified",
                               "max_rel_error",
                               "groups",
                               "history",
                               "steady_s",
                               "steady_gflops",
                               "left_out",
                               "faulty",
                               "stop",
                               "variation",
                               "steady_min_s",
                               "steady_max_s"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    ck_assert_msg(json_object_get(r, keys[i]) != NULL, "no \"%s\"", keys[i]);
  json_t *noise = json_object_get(r, "within_noise_of_best");
  ck_assert(noise == NULL || json_is_boolean(noise));
  ck_assert_uint_eq(json_object_size(r),
                    sizeof keys / sizeof keys[0] + (noise != NULL));
  /* The spread holds the median. */
  double lo = json_number_value(json_object_get(r, "steady_min_s")),
         hi = json_number_value(json_object_get(r, "steady_max_s")),
         mid = json_number_value(json_object_get(r, "steady_s"));
  ck_assert(lo <= mid && mid <= hi);
  ck_assert(json_is_number(
      json_object_get(json_object_get(r, "overhead_s"), "per_call")));
  ck_assert_double_gt(json_number_value(json_object_get(r, "steady_s")), 0);
  ck_assert(json_is_array(json_object_get(r, "left_out")));
  json_t *g = json_object_get(r, "groups");
  ck_assert_uint_eq(json_array_size(g), groups);
  json_int_t total = 0;
  size_t i;
  json_t *grp;
  json_array_foreach(g, i, grp) {
    json_int_t in_group = 0;
    size_t k;
    json_t *d;
    json_array_foreach(json_object_get(grp, "devices"), k, d) {
      ck_assert(json_is_string(json_object_get(d, "name")));
      ck_assert(json_is_number(json_object_get(d, "time")));
      ck_assert(json_is_boolean(json_object_get(d, "at_cap")));
      in_group += json_integer_value(json_object_get(d, "load"));
    }
    ck_assert_int_eq(in_group,
                     json_integer_value(json_object_get(grp, "load")));
    total += in_group;
  }
  ck_assert_int_eq(total, json_integer_value(json_object_get(r, "n")));
  json_t *h = json_object_get(r, "history");
  ck_assert_int_eq((json_int_t)json_array_size(h),
                   json_integer_value(json_object_get(r, "iterations")));
}

START_TEST(bench_json_follows_the_contract) {
  char *argv[] = {bench,      "--platform", SEED002,  "--size", "8400",
                  "--models", "none",       "--json", "-",      NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  check_bench_report(j, 4);
  ck_assert_str_eq(json_string_value(json_object_get(j, "algorithm")), "mlsba");
  ck_assert(json_is_true(json_object_get(j, "converged")));
  ck_assert_str_eq(json_string_value(json_object_get(j, "stop")), "balanced");
  ck_assert(json_is_null(json_object_get(j, "verified"))); /* simulated */
  ck_assert_int_le(json_integer_value(json_object_get(j, "iterations")), 4);
  /* The paper's desktop balances to within 1% of its 4.0495 s optimum. */
  ck_assert_double_le(json_number_value(json_object_get(j, "makespan_s")),
                      4.0495 * 1.01);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* The desktop's four cores are one kind: pooled, their runs make a known
 * point sooner than each core's own (3 runs against 4 without noise). */
static json_int_t bench_iterations(const char *extra) {
  char *argv[] = {bench,  "--platform",  SEED002, "--size",
                  "8400", "--models",    "none",  "--json",
                  "-",    (char *)extra, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  ck_assert(json_is_true(json_object_get(j, "converged")));
  json_int_t it = json_integer_value(json_object_get(j, "iterations"));
  json_decref(j);
  tool_run_free(&r);
  return it;
}

/* The table a person reads: groups with their devices, a lone device's
 * group under its name, the whole product, how the routine ended. */
START_TEST(bench_table_names_groups_and_devices) {
  char *argv[] = {bench,      "--platform", SEED002,   "--size", "8400",
                  "--models", "none",       "--quiet", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  static const char *const want[] = {
      "group 0 ",        "  core0 ",      "  gpu0 ",     "group 2: core2 ",
      "group 3: core3 ", "whole product", "balanced in "};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    ck_assert_msg(strstr(r.out, want[i]) != NULL, "no \"%s\" in:\n%s", want[i],
                  r.out);
  /* The shape its speeds were made for: nothing to say. */
  ck_assert_msg(strstr(r.out, "columns_of") == NULL, "%s", r.out);
  tool_run_free(&r);
  /* Another shape: the table says what its GFLOPS then are. */
  char *other[] = {bench,      "--platform", SEED002,   "--size", "2048",
                   "--models", "none",       "--quiet", NULL};
  run_tool(other, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "note: the simulated speeds are columns of an "
                              "m=8400 k=8400 product"),
                "%s", r.out);
  tool_run_free(&r);
}
END_TEST

/* At 20000 columns both GPUs of the desktop hold all they can and finish
 * far ahead of the cores: the table says so in words next to them and
 * below, the JSON marks them, and the imbalance leaves them out as
 * docs/bench-report.md says. */
START_TEST(bench_says_which_devices_are_at_their_cap) {
  char *table[] = {bench,      "--platform", SEED002,   "--size", "20000",
                   "--models", "none",       "--quiet", NULL};
  tool_run_t r;
  run_tool(table, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  const char *gpu0 = strstr(r.out, "  gpu0 "), *core2 = strstr(r.out, "core2");
  ck_assert_ptr_nonnull(gpu0);
  ck_assert_msg(strstr(gpu0, "at cap\n") && strstr(gpu0, "at cap\n") < core2,
                "%s", r.out);
  ck_assert_msg(strstr(r.out, "at cap: gpu0, gpu1 have all they can hold"),
                "%s", r.out);
  ck_assert_msg(strstr(core2, "at cap\n") == NULL ||
                    strstr(core2, "at cap\n") > strstr(r.out, "whole product"),
                "%s", r.out);
  tool_run_free(&r);
  char *json[] = {bench,      "--platform", SEED002,  "--size", "20000",
                  "--models", "none",       "--json", "-",      NULL};
  run_tool(json, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  double lo = INFINITY, hi = 0, gpu_hi = 0;
  size_t i, k;
  json_t *grp, *d;
  json_array_foreach(json_object_get(j, "groups"), i, grp) {
    json_array_foreach(json_object_get(grp, "devices"), k, d) {
      const char *name = json_string_value(json_object_get(d, "name"));
      double t = json_number_value(json_object_get(d, "time"));
      int gpu = strncmp(name, "gpu", 3) == 0;
      ck_assert_int_eq(json_is_true(json_object_get(d, "at_cap")), gpu);
      if (gpu)
        gpu_hi = t > gpu_hi ? t : gpu_hi;
      else
        lo = t < lo ? t : lo;
      hi = t > hi ? t : hi;
    }
  }
  ck_assert_double_lt(gpu_hi, 0.5 * lo); /* far ahead */
  ck_assert_double_eq_tol(json_number_value(json_object_get(j, "imbalance")),
                          (hi - lo) / hi, 1e-6);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* A run that loses core2 to a fault and leaves ocl0 out (it slows the
 * cores more than it gives) names each with its own reason: in the table,
 * and in the JSON's left_out and faulty. */
START_TEST(bench_tells_a_fault_from_a_left_out_device) {
  char path[] = MLSBA_SOURCE_DIR "/tests/data/fault-and-sharing.json";
  char *table[] = {bench,      "--platform", path,      "--size", "2000",
                   "--models", "none",       "--quiet", NULL};
  tool_run_t r;
  run_tool(table, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "left out: core2 (a device fault)") != NULL &&
                    strstr(r.out, "left out: ocl0 (it computes on") != NULL,
                "%s", r.out);
  tool_run_free(&r);
  char *json[] = {bench,      "--platform", path,     "--size", "2000",
                  "--models", "none",       "--json", "-",      NULL};
  run_tool(json, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  json_t *left = json_object_get(j, "left_out"),
         *faulty = json_object_get(j, "faulty");
  ck_assert_uint_eq(json_array_size(left), 2);
  ck_assert_str_eq(json_string_value(json_array_get(left, 0)), "ocl0");
  ck_assert_str_eq(json_string_value(json_array_get(left, 1)), "core2");
  ck_assert_uint_eq(json_array_size(faulty), 1);
  ck_assert_str_eq(json_string_value(json_array_get(faulty, 0)), "core2");
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(bench_separate_kinds_models_every_device_alone) {
  json_int_t pooled = bench_iterations(NULL);
  json_int_t separate = bench_iterations("--separate-kinds");
  ck_assert_msg(pooled < separate, "pooled %lld, separate %lld",
                (long long)pooled, (long long)separate);
}
END_TEST

START_TEST(bench_compare_lists_every_run) {
  char *argv[] = {bench,    "--platform", SEED002,    "--size",
                  "8400",   "--compare",  "--models", "none",
                  "--json", "-",          NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  json_t *results = json_object_get(j, "results");
  /* 7 algorithms; of the devices alone only the cores hold 8400 columns
   * (the GPUs' memory cannot); no BLIS run on simulated devices. */
  ck_assert_uint_eq(json_array_size(results), 7 + 4);
  size_t i;
  json_t *row;
  json_array_foreach(results, i, row) check_bench_report(row, 4);
  json_t *device = json_array_get(results, 7);
  ck_assert_str_eq(json_string_value(json_object_get(device, "algorithm")),
                   "device:core0");
  ck_assert(json_is_null(json_object_get(device, "stop"))); /* no routine */
  /* Homogeneous repeats a split its models call unbalanced: a cycle. */
  json_t *homogeneous = json_array_get(results, MLSBA_ALGO_HOMOGENEOUS);
  ck_assert_str_eq(json_string_value(json_object_get(homogeneous, "stop")),
                   "cycle");
  ck_assert(json_is_false(json_object_get(homogeneous, "converged")));
  json_decref(j);
  tool_run_free(&r);
  /* The table shows each row's split and imbalance below it. */
  char *table[] = {bench,       "--platform", SEED002, "--size",  "8400",
                   "--compare", "--models",   "none",  "--quiet", NULL};
  run_tool(table, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "split (units per device: core0 gpu0 core1") &&
                    strstr(r.out, "  homogeneous     imbalance ") &&
                    strstr(r.out, "  device:core0    imbalance 0.0%: 8400 0 "),
                "%s", r.out);
  tool_run_free(&r);
}
END_TEST

/* A routine cut short says so, in the table and in the JSON. */
START_TEST(bench_says_why_the_routine_stopped) {
  char *table[] = {bench,  "--platform", SEED002, "--size",  "8400", "--models",
                   "none", "--max-iter", "1",     "--quiet", NULL};
  tool_run_t r;
  run_tool(table, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "not balanced within max-iter (1 run): "
                              "imbalance 92.5% (eps 5%)") != NULL,
                "%s", r.out);
  tool_run_free(&r);
  char *json[] = {bench,  "--platform", SEED002, "--size", "8400", "--models",
                  "none", "--max-iter", "1",     "--json", "-",    NULL};
  run_tool(json, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  ck_assert_str_eq(json_string_value(json_object_get(j, "stop")), "max-iter");
  ck_assert(json_is_false(json_object_get(j, "converged")));
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* A real product on this machine (cores, and pocl where there is one):
 * balanced, verified, and the models saved for the next run. */
START_TEST(bench_balances_a_real_product) {
  char dir[] = "/tmp/mlsba-bench-test-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *argv[] = {bench, "--size", "256", "--models", dir, "--json", "-", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  ck_assert_double_lt(json_number_value(json_object_get(j, "max_rel_error")),
                      1e-4);
  json_decref(j);
  tool_run_free(&r);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "ls %s/*.model >/dev/null && rm -rf %s", dir, dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static const struct {
  const char *args[9];
  const char *expect;
} bench_bad[] = {
    {{"--bogus", NULL}, "unknown option --bogus"},
    {{"--size", "0", NULL}, "--size must be a whole number"},
    {{"--size", "64", "-m", "8", NULL}, "exclude each other"},
    {{"-m", "8", NULL}, "go together"},
    {{"--precision", "half", NULL}, "single or double"},
    {{"--eps", "abc", NULL}, "--eps must be"},
    {{"--eps", "", NULL}, "--eps must be"},
    {{"--algo", "fastest", NULL}, "dlt); --compare runs them all"},
    {{"--algo", "slba", "--compare", NULL}, "exclude each other"},
    {{"--platform", "/nonexistent.json", NULL}, "cannot open"},
    {{"--platform", MLSBA_SOURCE_DIR "/tests/data/mixed.json", NULL},
     "mixes simulated and real devices"},
    {{"--platform", "no-such-sample", NULL}, "nor a sample platform"},
    {{"--platform", "", NULL}, "--platform: an empty name"},
    /* Destinations that cannot be written fail before anything runs. */
    {{"--json", "/nonexistent/x.json", NULL}, "its folder does not exist"},
    {{"--plot", "/etc/passwd", NULL}, "--plot: '/etc/passwd' is not a folder"},
    {{"--models", "/etc/passwd", NULL},
     "--models: '/etc/passwd' is not a folder"},
    {{"--quiet", "--progress", NULL}, "exclude each other"},
    {{"--op", "lu", NULL}, "--op must be gemm, getrf, potrf or geqrf"},
    {{"--block", "64", NULL}, "--block goes with --op"},
    {{"--op", "getrf", "-m", "8", NULL}, "take --size N"},
    {{"--op", "geqrf", "-m", "8", NULL}, "takes --size N or -m M -n N"},
    {{"--op", "geqrf", "--size", "8", "-m", "8", "-n", "4", NULL},
     "takes --size N or -m M -n N"},
    {{"--op", "geqrf", "-m", "65536", "-n", "65536", NULL},
     "exceed 2^30 elements"},
    {{"--op", "potrf", "--algo", "slba", NULL}, "--algo of a factorization"},
    {{"--op", "getrf", "--block", "0", NULL}, "--block must be"},
    {{"--rounds", "3", NULL}, "--rounds goes with --op"},
    {{"--op", "potrf", "--rounds", "100", NULL}, "--rounds must be"},
};

/* --op getrf --compare on the seed-002 desktop: every row of the
 * contract (the seeds' static rows and the same splits with the models'
 * per-step ways), the per-step shares summing to each step's units, PPE
 * on the hybrid rows, and the per-step split ahead of every other. */
START_TEST(bench_factor_compare_on_the_sim_desktop) {
  char *argv[] = {bench,    "--op",      "getrf",   "--platform", SEED002,
                  "--size", "8400",      "--block", "128",        "--precision",
                  "double", "--compare", "--json",  "-",          NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out), *res = json_object_get(j, "results");
  static const char *rows[] = {"mlsba",
                               "constant-ratio",
                               "fixed-slice",
                               "kernel-slice",
                               "constant-ratio+ways",
                               "fixed-slice+ways",
                               "kernel-slice+ways",
                               "cores-only",
                               "device:gpu0",
                               "device:gpu1"};
  ck_assert_uint_eq(json_array_size(res), 10);
  double gflops[10];
  for (size_t i = 0; i < 10; i++) {
    json_t *o = json_array_get(res, i);
    ck_assert_str_eq(json_string_value(json_object_get(o, "algorithm")),
                     rows[i]);
    ck_assert_str_eq(json_string_value(json_object_get(o, "op")), "getrf");
    ck_assert(json_is_null(json_object_get(o, "verified")));
    ck_assert(json_is_null(json_object_get(o, "residual")));
    ck_assert_int_eq(json_is_number(json_object_get(o, "ppe")), i < 7);
    gflops[i] = json_number_value(json_object_get(o, "gflops"));
    json_t *steps = json_object_get(o, "steps");
    ck_assert_uint_ge(json_array_size(steps), 60);
    for (size_t k = 1; k < json_array_size(steps); k++) {
      json_t *st = json_array_get(steps, k),
             *sh = json_object_get(st, "shares");
      /* who updated the next panel's columns: a device, or none at the
       * last step */
      json_t *ahead = json_object_get(st, "ahead");
      ck_assert(json_is_string(ahead) ||
                (json_is_null(ahead) && k + 1 == json_array_size(steps)));
      json_int_t sum = 0;
      for (size_t d = 0; d < json_array_size(sh); d++)
        sum += json_integer_value(json_array_get(sh, d));
      ck_assert_int_eq(sum, json_integer_value(json_object_get(st, "units")));
    }
  }
  double ppe =
      json_number_value(json_object_get(json_array_get(res, 0), "ppe"));
  ck_assert_double_eq_tol(ppe, gflops[0] / (gflops[7] + gflops[8] + gflops[9]),
                          1e-6);
  for (size_t i = 1; i < 7; i++) /* the per-step split ahead of them all */
    ck_assert_msg(gflops[0] > gflops[i], "%s: %g against %g GFLOPS", rows[i],
                  gflops[i], gflops[0]);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* A device the library leaves out by default (a simulated pocl beside
 * the cores it computes on) is not "used" in the JSON: it took no unit
 * (it said used with 0 units). */
START_TEST(bench_factor_json_says_which_devices_were_used) {
  char *argv[] = {bench,
                  "--op",
                  "potrf",
                  "--platform",
                  MLSBA_SOURCE_DIR "/models/sim/cores-and-pocl.json",
                  "--size",
                  "1024",
                  "--json",
                  "-",
                  NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(strchr(r.out, '{'));
  json_t *devs = json_object_get(j, "devices");
  ck_assert_uint_eq(json_array_size(devs), 3);
  for (size_t i = 0; i < 3; i++) {
    json_t *d = json_array_get(devs, i);
    json_int_t units = json_integer_value(json_object_get(d, "units"));
    ck_assert_int_eq(json_is_true(json_object_get(d, "used")), i < 2);
    ck_assert_int_eq(units > 0, i < 2);
  }
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* What a factorization report says of its calls and of the kernel
 * choice, with --models none: every round of a libmlsba row started cold
 * (both cores learn their models inside the call, none saved), spent
 * seconds outside its steps, and none had the kernel choice inside (the
 * executor opened the cores, which chose them, before any row); the
 * choice's cost is > 0 exactly when this process timed it. */
static void check_cold_calls(json_t *doc) {
  json_t *res = json_object_get(doc, "results");
  for (size_t i = 0; i < json_array_size(res); i++) {
    json_t *o = json_array_get(res, i), *calls = json_object_get(o, "calls");
    if (!strcmp(json_string_value(json_object_get(o, "algorithm")),
                "openblas")) {
      ck_assert_ptr_null(calls);
      continue;
    }
    ck_assert_uint_eq(json_array_size(calls),
                      json_array_size(json_object_get(o, "rounds_s")));
    for (size_t k = 0; k < json_array_size(calls); k++) {
      json_t *c = json_array_get(calls, k);
      ck_assert_int_eq(json_integer_value(json_object_get(c, "round")),
                       (json_int_t)k + 1);
      ck_assert(json_is_true(json_object_get(c, "cold")));
      ck_assert_int_eq(json_integer_value(json_object_get(c, "models_cold")),
                       2);
      ck_assert_int_eq(json_integer_value(json_object_get(c, "models_warm")),
                       0);
      ck_assert(json_number_value(json_object_get(c, "outside_s")) >= 0);
      ck_assert(json_number_value(json_object_get(c, "models_save_s")) >= 0);
      ck_assert(json_is_false(json_object_get(c, "kernel_choice_inside")));
      ck_assert(json_number_value(json_object_get(c, "kernels_s")) == 0);
    }
  }
  json_t *k = json_object_get(doc, "cpu_kernels");
  const char *source = json_string_value(json_object_get(k, "source"));
  ck_assert_ptr_nonnull(source);
  double choice_s = json_number_value(json_object_get(k, "choice_s"));
  int timed = !strcmp(source, "timed") || !strcmp(source, "retimed");
  ck_assert_msg(timed ? choice_s > 0 : choice_s == 0, "%s in %g s", source,
                choice_s);
  ck_assert(json_number_value(json_object_get(k, "setup_s")) >= choice_s);
  ck_assert(json_is_true(json_object_get(k, "before_first_call")));
}

/* On two real cores the factorizations (LU, Cholesky, QR) are verified
 * by their residuals, beside OpenBLAS's own routine. */
START_TEST(bench_factor_verifies_on_real_cores) {
  char path[] = "/tmp/mlsba-bench-cores-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *json = "{\"devices\": [{\"name\": \"c0\", \"type\": \"cpu\", "
                     "\"core\": 0}, {\"name\": \"c1\", \"type\": "
                     "\"cpu\", \"core\": 1}]}";
  ck_assert_int_eq(write(fd, json, strlen(json)), (ssize_t)strlen(json));
  close(fd);
  static char *const ops[] = {"getrf", "potrf", "geqrf"};
  for (int op = 0; op < 3; op++) {
    char *argv[] = {bench,    "--op",      ops[op],   "--platform", path,
                    "--size", "300",       "--block", "64",         "--models",
                    "none",   "--compare", "--json",  "-",          NULL};
    tool_run_t r;
    run_tool(argv, &r);
    ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
    json_t *j = parse_json(r.out), *res = json_object_get(j, "results");
    /* 3 splits, and OpenBLAS's own routine where it is installed */
    ck_assert_uint_ge(json_array_size(res), 3);
    for (size_t i = 0; i < json_array_size(res); i++) {
      json_t *o = json_array_get(res, i);
      ck_assert(json_is_true(json_object_get(o, "verified")));
      ck_assert_double_lt(json_number_value(json_object_get(o, "residual")),
                          16);
      /* nothing moves to a device on cores alone (the libmlsba rows) */
      if (strcmp(json_string_value(json_object_get(o, "algorithm")),
                 "openblas"))
        for (int f = 0; f < 3; f++) {
          static const char *const moved[] = {
              "bytes_to_devices", "bytes_from_devices", "transfers"};
          json_t *v = json_object_get(o, moved[f]);
          ck_assert_msg(json_is_integer(v), "%s", moved[f]);
          ck_assert_int_eq(json_integer_value(v), 0);
        }
    }
    if (json_array_size(res) == 4)
      ck_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 3),
                                                         "algorithm")),
                       "openblas");
    check_cold_calls(j);
    json_decref(j);
    tool_run_free(&r);
  }
  unlink(path);
}
END_TEST

/* Device names reach the terminal with control characters escaped: a
 * newline in a name forged a table line, an escape sequence reached the
 * terminal (issue 21, 6). */
START_TEST(bench_table_escapes_control_characters_in_names) {
  char path[] = "/tmp/mlsba-bench-names-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *json =
      "{\"devices\": [{\"name\": \"g\\nforged 1 2 3\", \"type\": \"sim\", "
      "\"speed\": [[1, 100.0], [4096, 200.0]]}, {\"name\": \"e\\u001b[2J\", "
      "\"type\": \"sim\", \"speed\": [[1, 100.0], [4096, 150.0]]}], "
      "\"groups\": [[\"g\\nforged 1 2 3\", \"e\\u001b[2J\"]]}";
  ck_assert_int_eq(write(fd, json, strlen(json)), (ssize_t)strlen(json));
  close(fd);
  char *argv[] = {bench, "--platform", path,   "--size",
                  "512", "--models",   "none", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "g\\x0aforged 1 2 3") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "e\\x1b[2J") != NULL, "%s", r.out);
  ck_assert_msg(strstr(r.out, "\nforged") == NULL, "%s", r.out);
  ck_assert_msg(strchr(r.out, '\x1b') == NULL, "%s", r.out);
  tool_run_free(&r);
  unlink(path);
}
END_TEST

START_TEST(bench_refuses_bad_input) {
  expect_usage_error(bench, bench_bad[_i].args, bench_bad[_i].expect, _i);
}
END_TEST

/* --models DIR and --plot DIR follow one rule: the folder itself is made
 * when only it is missing; a missing parent is refused, naming the
 * folder, and no chain of folders appears. */
START_TEST(bench_makes_one_folder_never_a_chain) {
  char dir[] = "/tmp/mlsba-bench-dirs-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char chain[128], expect[256], made[128];
  snprintf(chain, sizeof chain, "%s/no/such/models", dir);
  snprintf(expect, sizeof expect,
           "cannot create '%s': its parent folder does not exist", chain);
  const char *opts[] = {"--models", "--plot"};
  for (int k = 0; k < 2; k++) {
    const char *args[] = {"--platform", SEED002, opts[k], chain, NULL};
    expect_usage_error(bench, args, expect, k);
  }
  snprintf(made, sizeof made, "%s/no", dir);
  ck_assert_int_ne(access(made, F_OK), 0);
  snprintf(made, sizeof made, "%s/models", dir);
  char *argv[] = {bench, "--platform", SEED002, "--models",
                  made,  "--quiet",    NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  tool_run_free(&r);
  char cmd[320];
  snprintf(cmd, sizeof cmd, "ls %s/*.model >/dev/null && rm -rf %s", made, dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The example with links of docs/platform-file.md, as a user would copy
 * it: every tool reads it, mlsba-info --write keeps the links, and with
 * --unit-bytes mlsba-partition counts gpu0's link (a share that costs 2 ms
 * a unit to move shrinks). */
static void write_links_example(char *path) {
  FILE *f = fopen(MLSBA_SOURCE_DIR "/docs/platform-file.md", "r");
  ck_assert_ptr_nonnull(f);
  static char doc[1 << 16];
  size_t len = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[len] = '\0';
  char *at = strstr(doc, "## Links");
  ck_assert_ptr_nonnull(at);
  char *begin = strstr(at, "```json\n"), *end;
  ck_assert_ptr_nonnull(begin);
  begin += strlen("```json\n");
  end = strstr(begin, "```");
  ck_assert_ptr_nonnull(end);
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, begin, (size_t)(end - begin)), end - begin);
  close(fd);
}

static json_int_t gpu_share(char *platform, const char *n,
                            const char *unit_bytes) {
  char *argv[] = {partition,
                  "--platform",
                  platform,
                  "--n",
                  (char *)n,
                  "--json",
                  "-",
                  (char *)unit_bytes ? "--unit-bytes" : NULL,
                  (char *)unit_bytes,
                  NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse_json(r.out);
  json_t *ub = json_object_get(j, "unit_bytes");
  ck_assert(unit_bytes ? json_is_number(ub) : ub == NULL);
  json_int_t gpu = json_integer_value(
      json_array_get(json_array_get(json_object_get(j, "beta"), 0), 1));
  json_decref(j);
  tool_run_free(&r);
  return gpu;
}

START_TEST(the_docs_example_with_links_runs_in_every_tool) {
  char path[] = "/tmp/mlsba-links-XXXXXX", saved[] = "/tmp/mlsba-saved-XXXXXX";
  write_links_example(path);
  int fd = mkstemp(saved);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char *show[] = {info,  "--platform",      path, "--write",
                  saved, "--measure-links", NULL};
  char *bench_it[] = {bench,      "--platform", path,     "--size", "2000",
                      "--models", "none",       "--json", "-",      NULL};
  char *const *runs[] = {show, bench_it};
  for (int k = 0; k < 2; k++) {
    tool_run_t r;
    run_tool(runs[k], &r);
    ck_assert_msg(r.exited && r.status == 0, "%s: status %d: %s", runs[k][0],
                  r.status, r.err);
    /* Sim devices measure nothing: the file's links are shown. */
    if (k == 0) {
      ck_assert_ptr_nonnull(strstr(r.out, "links (latency, bandwidth)"));
      ck_assert_ptr_nonnull(strstr(r.out, "memory"));
    }
    tool_run_free(&r);
  }
  json_error_t e;
  json_t *j = json_load_file(saved, 0, &e);
  ck_assert_ptr_nonnull(j);
  ck_assert(json_is_object(json_object_get(j, "network")));
  ck_assert(json_real_value(json_object_get(json_object_get(j, "memory"),
                                            "bandwidth")) == 8e9);
  ck_assert(json_is_object(json_object_get(
      json_array_get(json_object_get(j, "devices"), 0), "link")));
  json_decref(j);
  json_int_t without = gpu_share(path, "8400", NULL),
             with = gpu_share(path, "8400", "2.4e7");
  ck_assert_int_gt(without, 0);
  ck_assert_int_lt(with, without);
  unlink(path);
  unlink(saved);
}
END_TEST

/* A sim device's link is in its virtual time: the product's columns cross
 * it (B's and C's, (m + k) x 4 bytes each). mlsba-bench, balancing
 * measured runs, lands where mlsba-partition --unit-bytes predicts from
 * the models plus the link, far from the split that ignores it. */
START_TEST(bench_measures_what_partition_predicts_with_links) {
  char path[] = "/tmp/mlsba-slowlink-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *text =
      "{\"name\": \"slow-link\", \"devices\": [{\"name\": \"gpu0\", "
      "\"type\": \"sim\", \"speed\": [[100, 2000.0], [4000, 24000.0], "
      "[8400, 26000.0]], \"link\": {\"latency\": 1e-3, \"bandwidth\": "
      "1.6e8}}, {\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, "
      "100.0], [8400, 1400.0]]}, {\"name\": \"core1\", \"type\": \"sim\", "
      "\"speed\": [[1, 100.0], [8400, 1400.0]]}], \"groups\": [[\"core0\", "
      "\"gpu0\"], [\"core1\"]]}";
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  json_int_t predicted = gpu_share(path, "4000", "32000"),
             ignored = gpu_share(path, "4000", NULL);
  char *argv[] = {bench,      "--platform", path,     "--size", "4000",
                  "--models", "none",       "--json", "-",      NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  json_t *gpu = json_array_get(
      json_object_get(json_array_get(json_object_get(j, "groups"), 0),
                      "devices"),
      1);
  ck_assert_str_eq(json_string_value(json_object_get(gpu, "name")), "gpu0");
  json_int_t measured = json_integer_value(json_object_get(gpu, "load"));
  ck_assert_msg(llabs(measured - predicted) <= predicted / 50,
                "measured %lld, predicted %lld, ignored %lld",
                (long long)measured, (long long)predicted, (long long)ignored);
  ck_assert_int_lt(measured + 100, ignored);
  json_decref(j);
  tool_run_free(&r);
  unlink(path);
}
END_TEST

/* mlsba-info compared every pair of devices to list the kinds: 10^5
 * cores of one kind took hours. */
START_TEST(mlsba_info_lists_the_kinds_of_100000_cores) {
  char path[128];
  FILE *f = scratch_create("cores.json", path, sizeof path);
  fputs("{\"devices\": [", f);
  for (int i = 0; i < 100000; i++)
    fprintf(f, "%s{\"name\": \"c%d\", \"type\": \"cpu\", \"core\": 0}",
            i ? ", " : "", i);
  fputs("]}", f);
  ck_assert_int_eq(fclose(f), 0);
  char *argv[] = {MLSBA_INFO_BIN, "--platform", path, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert(r.exited);
  ck_assert_int_eq(r.status, 0);
  ck_assert_msg(strstr(r.out, "cpu: c0 c1 c2 ") != NULL, "%.300s", r.out);
  tool_run_free(&r);
  scratch_remove();
}
END_TEST
/* The tools' value parsers: "" was read as 0, "1x" as 1. */
START_TEST(numeric_options_refuse_empty_junk_inf_and_nan) {
  static const char *junk[] = {"",      " 1", "1x",  "inf", "nan", "-nan",
                               "1e999", "0x", "--1", "1 ",  "-1"};
  double v;
  int64_t u;
  for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
    ck_assert_msg(cli_parse_double(junk[i], 0, 1e6, &v) != 0, "'%s'", junk[i]);
    ck_assert_msg(cli_parse_units(junk[i], INT64_C(1) << 53, &u) != 0, "'%s'",
                  junk[i]);
  }
  ck_assert_int_eq(cli_parse_double("0.05", 0, 1, &v), 0);
  ck_assert(v == 0.05);
  ck_assert_int_eq(cli_parse_units("9007199254740992", INT64_C(1) << 53, &u),
                   0);
  ck_assert_int_ne(cli_parse_units("9007199254740993", INT64_C(1) << 53, &u),
                   0);
}
END_TEST
/* --json - printed an empty line and exited 0 when a makespan was
 * infinite. The slowest devices the library accepts at 2^53 units give a
 * finite makespan, and the report is valid JSON that says so. */
START_TEST(the_slowest_platform_at_2_to_the_53_gives_a_valid_report) {
  char path[128];
  FILE *f = scratch_create("slow.json", path, sizeof path);
  fputs("{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": "
        "[[1, 1e-30]]}, {\"name\": \"b\", \"type\": \"sim\", \"speed\": "
        "[[1e-6, 1e-30], [9007199254740992, 1e-30]]}]}",
        f);
  fclose(f);
  char *argv[] = {MLSBA_PARTITION_BIN,
                  "--platform",
                  path,
                  "--n",
                  "9007199254740992",
                  "--algo",
                  "all",
                  "--json",
                  "-",
                  NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert(r.exited);
  ck_assert_msg(r.status == 0, "%s", r.err);
  json_error_t e;
  json_t *doc = json_loads(r.out, 0, &e);
  ck_assert_msg(doc != NULL, "not JSON: %s (%.80s)", e.text, r.out);
  json_t *res = json_object_get(doc, "results");
  ck_assert_uint_eq(json_array_size(res), MLSBA_ALGO_COUNT);
  for (size_t i = 0; i < json_array_size(res); i++) {
    double t =
        json_real_value(json_object_get(json_array_get(res, i), "makespan"));
    ck_assert(t > 0 && t < 1e46);
  }
  json_decref(doc);
  tool_run_free(&r);
  scratch_remove();
}
END_TEST
/* A table, report, help or version written to a full disk ends with a
 * failure status. */
START_TEST(the_tools_fail_when_their_output_cannot_be_written) {
  const char *platform = MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json";
  char *part[] = {
      MLSBA_PARTITION_BIN, "--platform", (char *)platform, "--n", "1000", NULL};
  char *info_argv[] = {MLSBA_INFO_BIN, "--platform", (char *)platform, NULL};
  char *bench_argv[] = {MLSBA_BENCH_BIN, "--platform", (char *)platform,
                        "--size",        "300",        "--models",
                        "none",          NULL};
  char *part_help[] = {MLSBA_PARTITION_BIN, "--help", NULL};
  char *info_version[] = {MLSBA_INFO_BIN, "--version", NULL};
  char *bench_help[] = {MLSBA_BENCH_BIN, "--help", NULL};
  char *const *tools[] = {part,      info_argv,    bench_argv,
                          part_help, info_version, bench_help};
  for (int t = 0; t < 6; t++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      int fd = open("/dev/full", O_WRONLY);
      int null = open("/dev/null", O_WRONLY);
      if (fd < 0 || null < 0 || dup2(fd, 1) < 0 || dup2(null, 2) < 0)
        _exit(99);
      execv(tools[t][0], tools[t]);
      _exit(98);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_msg(WEXITSTATUS(st) == 1, "%s exited %d", tools[t][0],
                  WEXITSTATUS(st));
  }
  /* The FIFO, through the tool: refused at once, status 2. */
  scratch_make();
  char fifo[128];
  snprintf(fifo, sizeof fifo, "%s/fifo", scratch);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  char *argv[] = {MLSBA_PARTITION_BIN, "--platform", fifo, "--n", "10", NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert(r.exited);
  ck_assert_int_eq(r.status, 2);
  ck_assert_ptr_nonnull(strstr(r.err, "FIFO"));
  tool_run_free(&r);
  /* mlsba-bench_argv: --eps "" was 0; a --models path longer than its buffer
   * was cut short and the models went elsewhere. */
  static char longdir[5001];
  memset(longdir, 'x', 5000);
  longdir[5000] = 0;
  const char *junk[][2] = {{"--eps", ""},
                           {"--eps", "1x"},
                           {"--eps", "nan"},
                           {"--models", ""},
                           {"--models", longdir}};
  for (size_t i = 0; i < 5; i++) {
    char *args[] = {MLSBA_BENCH_BIN,    "--platform", (char *)platform,
                    "--size",           "300",        (char *)junk[i][0],
                    (char *)junk[i][1], NULL};
    run_tool(args, &r);
    ck_assert(r.exited);
    ck_assert_msg(r.status == 2, "%s '%.20s' exited %d", junk[i][0], junk[i][1],
                  r.status);
    ck_assert_ptr_nonnull(strstr(r.err, junk[i][0]));
    tool_run_free(&r);
  }
  ck_assert_int_eq(access(longdir, F_OK), -1);
  scratch_remove();
}
END_TEST

/* ---- the option parser every tool reads its command line with ---------- */

typedef struct {
  const char *text;
  int flag;
  int64_t big;
  unsigned small;
  double real;
  int colour, even;
} probe_t;

static const char *const colours[] = {"red", "green", NULL};

/* A custom value: an even number up to 100, "odd" refused in its own
 * words. */
static int parse_even(const char *v, void *to, char *why, size_t size) {
  int64_t n;
  if (cli_parse_units(v, 100, &n) != 0 || n % 2 != 0) {
    if (!strcmp(v, "odd"))
      snprintf(why, size, "--even takes even numbers");
    return 1;
  }
  *(int *)to = (int)n;
  return 0;
}

static const opt_t probe_options[] = {
    {"--text", OPT_TEXT, OPT_AT(probe_t, text), .nonempty = 1,
     .must = "a name"},
    {"--flag", OPT_FLAG, OPT_AT(probe_t, flag)},
    {"--big", OPT_UNITS, OPT_AT(probe_t, big), .hi = INT64_C(1) << 53,
     .must = "a whole number from 0 to 2^53"},
    {"-s", OPT_UNITS, OPT_AT(probe_t, small), .lo = 1, .hi = 10000},
    {"--real", OPT_REAL, OPT_AT(probe_t, real), .max = 1, .below_max = 1,
     .must = "a number in [0, 1)"},
    {"--colour", OPT_CHOICE, OPT_AT(probe_t, colour), .choices = colours},
    {"--even", OPT_CUSTOM, OPT_AT(probe_t, even), .parse = parse_even},
};

/* The outcome and the reason of one command line (argv after the tool's
 * name, NULL-terminated); values read into *p, which starts with markers
 * that a value left alone keeps. */
static int probe(const char *const *args, probe_t *p, char *why) {
  char *argv[24] = {"probe"};
  int argc = 1;
  while (args[argc - 1] && argc < 23) {
    argv[argc] = (char *)args[argc - 1];
    argc++;
  }
  *p = (probe_t){.text = "unset",
                 .big = -7,
                 .small = 77,
                 .real = -1,
                 .colour = -1,
                 .even = -1};
  const opts_table_t table = OPTS_TABLE(probe_options);
  why[0] = '\0';
  return opts_parse(&table, argc, argv, p, why, 256);
}

static const struct {
  const char *args[8];
  int outcome;
  const char *why;
} refused[] = {
    {{"--bogus", NULL}, OPTS_USAGE, "unknown option --bogus"},
    {{"stray", NULL}, OPTS_USAGE, "unexpected argument stray"},
    {{"--big", NULL}, OPTS_USAGE, "a value is missing after --big"},
    {{"--flag", "--even", NULL}, OPTS_USAGE, "a value is missing after --even"},
    {{"--big", "-1", NULL},
     OPTS_USAGE,
     "--big must be a whole number from 0 to 2^53, got -1"},
    {{"--big", "9007199254740993", NULL},
     OPTS_USAGE,
     "--big must be a whole number from 0 to 2^53, got 9007199254740993"},
    {{"--big", "", NULL},
     OPTS_USAGE,
     "--big must be a whole number from 0 to 2^53, got \"\""},
    {{"-s", "0", NULL}, OPTS_USAGE, "bad value for -s: 0"},
    {{"-s", "10001", NULL}, OPTS_USAGE, "bad value for -s: 10001"},
    {{"-s", "1x", NULL}, OPTS_USAGE, "bad value for -s: 1x"},
    {{"--real", "1", NULL},
     OPTS_USAGE,
     "--real must be a number in [0, 1), got 1"},
    {{"--real", "nan", NULL},
     OPTS_USAGE,
     "--real must be a number in [0, 1), got nan"},
    {{"--colour", "blue", NULL}, OPTS_USAGE, "bad value for --colour: blue"},
    {{"--colour", "", NULL}, OPTS_USAGE, "bad value for --colour: \"\""},
    {{"--even", "3", NULL}, OPTS_USAGE, "bad value for --even: 3"},
    {{"--even", "odd", NULL}, OPTS_USAGE, "--even takes even numbers"},
    {{"--text", "", NULL}, OPTS_USAGE, "--text must be a name, got \"\""},
    /* The first of --help, --version and an error decides. */
    {{"--bogus", "--help", NULL}, OPTS_USAGE, "unknown option --bogus"},
    {{"--big", "x", "--version", NULL},
     OPTS_USAGE,
     "--big must be a whole number from 0 to 2^53, got x"},
    {{"--help", "--bogus", NULL}, OPTS_HELP, ""},
    {{"-s", "5", "-h", "--big", NULL}, OPTS_HELP, ""},
    {{"--version", "--help", NULL}, OPTS_VERSION, ""},
};

/* Every kind of bad input gets its words, and --help or --version where
 * they come first. */
START_TEST(the_option_parser_says_what_is_wrong) {
  probe_t p;
  char why[256];
  ck_assert_int_eq(probe(refused[_i].args, &p, why), refused[_i].outcome);
  ck_assert_str_eq(why, refused[_i].why);
}
END_TEST

START_TEST(the_option_parser_reads_every_kind) {
  probe_t p;
  char why[256];
  const char *none[] = {NULL};
  ck_assert_int_eq(probe(none, &p, why), OPTS_RUN);
  ck_assert_str_eq(p.text, "unset"); /* the defaults stay */
  ck_assert_int_eq(p.big, -7);
  ck_assert_uint_eq(p.small, 77);
  const char *all[] = {
      "--text", "a",    "--flag",   "--big", "9007199254740992", "-s", "10000",
      "--real", "0.25", "--colour", "green", "--even",           "42", NULL};
  ck_assert_int_eq(probe(all, &p, why), OPTS_RUN);
  ck_assert_str_eq(p.text, "a");
  ck_assert_int_eq(p.flag, 1);
  ck_assert_int_eq(p.big, INT64_C(1) << 53);
  ck_assert_uint_eq(p.small, 10000); /* a 4-byte member, written whole */
  ck_assert(p.real == 0.25);
  ck_assert_int_eq(p.colour, 1);
  ck_assert_int_eq(p.even, 42);
  /* Repeated: the last one wins; a flag stays set. */
  const char *again[] = {"--big",    "1",      "--flag",   "--big",
                         "2",        "--flag", "--colour", "green",
                         "--colour", "red",    NULL};
  ck_assert_int_eq(probe(again, &p, why), OPTS_RUN);
  ck_assert_int_eq(p.big, 2);
  ck_assert_int_eq(p.flag, 1);
  ck_assert_int_eq(p.colour, 0);
  /* An argument that looks like an option is a value where one is due. */
  const char *dash[] = {"--text", "--flag", NULL};
  ck_assert_int_eq(probe(dash, &p, why), OPTS_RUN);
  ck_assert_str_eq(p.text, "--flag");
  ck_assert_int_eq(p.flag, 0);
}
END_TEST

/* ---- every tool's options, by the words of their --help ---------------- */

/* Every option that takes a value, given none at the end of the line. */
static const struct {
  char *tool;
  const char *opt;
} valued[] = {
    {partition, "--platform"},
    {partition, "--n"},
    {partition, "--size"},
    {partition, "-m"},
    {partition, "-k"},
    {partition, "--precision"},
    {partition, "--models"},
    {partition, "--algo"},
    {partition, "--json"},
    {partition, "--unit-bytes"},
    {info, "--platform"},
    {info, "--write"},
    {info, "--models"},
    {info, "--show-model"},
    {info, "--plot"},
    {bench, "--platform"},
    {bench, "--algo"},
    {bench, "--json"},
    {bench, "--plot"},
    {bench, "--models"},
    {bench, "--op"},
    {bench, "--block"},
    {bench, "--rounds"},
    {bench, "--precision"},
    {bench, "--eps"},
    {bench, "--max-iter"},
    {bench, "--size"},
    {bench, "-m"},
    {bench, "-n"},
    {bench, "-k"},
};

START_TEST(every_option_says_when_its_value_is_missing) {
  const char *args[] = {valued[_i].opt, NULL};
  char want[128];
  snprintf(want, sizeof want, "a value is missing after %s", valued[_i].opt);
  expect_usage_error(valued[_i].tool, args, want, _i);
}
END_TEST

/* A bad value of every checked option of mlsba-partition and mlsba-info
 * (mlsba-bench's: bench_bad), and what is not an option at all. */
static const struct {
  char *tool;
  const char *args[8];
  const char *expect;
} bad_values[] = {
    {partition, {"--n", "12x", NULL}, "--n must be a whole number from 0 to"},
    {partition, {"--size", "-1", NULL}, "--size must be a whole number"},
    {partition, {"-m", "0", NULL}, "-m must be a whole number from 1 to 2^31"},
    {partition,
     {"-k", "2147483649", NULL},
     "-k must be a whole number from 1 to 2^31, got 2147483649"},
    {partition,
     {"--precision", "half", NULL},
     "--precision must be single or double, got half"},
    {partition,
     {"--models", "", NULL},
     "--models must be a folder path, got \"\""},
    {partition, {"--algo", "", NULL}, "--algo: unknown algorithm"},
    {partition,
     {"--unit-bytes", "1e31", NULL},
     "--unit-bytes must be a number of bytes from 0 to 1e30, got 1e31"},
    {partition, {"--unit-bytes", "-1", NULL}, "--unit-bytes must be a number"},
    /* No device of the platform has a link: it would change nothing. */
    {partition,
     {"--platform", SEED002, "--n", "8400", "--unit-bytes", "1e30", NULL},
     "--unit-bytes: no device of desktop-seed002 has a host link"},
    {partition, {"stray", NULL}, "unexpected argument stray"},
    {info,
     {"--list-models", "--models", "", NULL},
     "--models must be a folder path, got \"\""},
    {info, {"--bogus", NULL}, "unknown option --bogus"},
    {info, {"--platform", SEED002, "stray", NULL}, "unexpected argument stray"},
    {bench, {"-n", "x", NULL}, "-n must be a whole number from 1 to 2^30"},
    {bench, {"-k", "", NULL}, "-k must be a whole number from 1 to 2^30"},
    {bench, {"--size", "1073741825", NULL}, "from 1 to 2^30, got 1073741825"},
    {bench,
     {"--max-iter", "0", NULL},
     "--max-iter must be a whole number >= 1"},
    {bench, {"--eps", "1", NULL}, "--eps must be a number in [0, 1), got 1"},
    {bench, {"--rounds", "0", NULL}, "--rounds must be a whole number from 1"},
    {bench,
     {"--op", "", NULL},
     "--op must be gemm, getrf, potrf or geqrf, got \"\""},
    {bench, {"stray", NULL}, "unexpected argument stray"},
    /* The product's balancing options, refused by a factorization. */
    {bench,
     {"--op", "getrf", "--eps", "0.1", NULL},
     "not an option of --op getrf or potrf (it tunes the product's "
     "balancing): --eps"},
    {bench,
     {"--op", "potrf", "--max-iter", "5", NULL},
     "balancing): --max-iter"},
    {bench,
     {"--op", "getrf", "--keep-shared", NULL},
     "balancing): --keep-shared"},
    {bench,
     {"--op", "potrf", "--separate-kinds", NULL},
     "balancing): --separate-kinds"},
};

START_TEST(every_checked_option_refuses_a_bad_value) {
  expect_usage_error(bad_values[_i].tool, bad_values[_i].args,
                     bad_values[_i].expect, _i);
}
END_TEST

/* A repeated option: the last one wins, in every tool; --help wins over
 * what follows it, a bad option over a --help after it. */
START_TEST(the_last_of_a_repeated_option_wins) {
  char *twice[] = {partition,    "--platform", "/nonexistent.json",
                   "--platform", SEED002,      "--n",
                   "10",         "--n",        "8400",
                   "--algo",     "slba",       "--algo",
                   "mlsba",      "--json",     "-",
                   NULL};
  tool_run_t r;
  run_tool(twice, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  json_t *j = parse_json(r.out);
  check_result(j, "mlsba", 8400);
  json_decref(j);
  tool_run_free(&r);
  char *bench_twice[] = {bench, "--platform", SEED002, "--size",
                         "64",  "--size",     "512",   "--max-iter",
                         "30",  "--max-iter", "1",     "--json",
                         "-",   NULL};
  run_tool(bench_twice, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  j = parse_json(r.out);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "m")), 512);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "n")), 512);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "iterations")), 1);
  json_decref(j);
  tool_run_free(&r);
  char *info_twice[] = {info,         "--platform", "/nonexistent.json",
                        "--platform", SEED002,      NULL};
  run_tool(info_twice, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "gpu0"));
  tool_run_free(&r);
  char *help_first[] = {partition, "--help", "--bogus", NULL};
  run_tool(help_first, &r);
  ck_assert(r.exited && r.status == 0);
  ck_assert_ptr_nonnull(strstr(r.out, "usage: mlsba-partition"));
  tool_run_free(&r);
  const char *bogus_first[] = {"--bogus", "--help", NULL};
  expect_usage_error(info, bogus_first, "unknown option --bogus", 0);
}
END_TEST

/* ---- what an output's path names stays what it is (issue 31) -------- */

/* A device node in dir: a copy of /dev/null (1, 3) or /dev/full (1, 7),
 * so that a tool that replaced what it names would break the copy, never
 * the machine's; without the right to make nodes (not root), the
 * machine's own, which a tool then cannot replace. */
static void device_copy(char *path, size_t size, const char *dir,
                        const char *name, unsigned minor) {
  snprintf(path, size, "%s/%s", dir, name);
  if (mknod(path, S_IFCHR | 0666, makedev(1, minor)) != 0) {
    ck_assert_msg(geteuid() != 0, "mknod %s: %s", path, strerror(errno));
    snprintf(path, size, "/dev/%s", name);
  }
}

static void expect_kind(const char *path, mode_t kind) {
  struct stat st;
  ck_assert_int_eq(lstat(path, &st), 0);
  ck_assert_msg((st.st_mode & S_IFMT) == kind, "%s is no longer what it was",
                path);
}

/* argv with its last NULL replaced by dest (the slot after the output
 * option); runs it. */
static void run_to(char **argv, size_t slot, const char *dest, tool_run_t *r) {
  argv[slot] = (char *)dest;
  run_tool(argv, r);
}

/* One tool's output option, every kind of destination: a character
 * device (null: written through; full: a clear error, status 1), a FIFO
 * with a reader (it gets the JSON), a symbolic link (kept, its target
 * gets the report), and up front, before anything runs (status 2,
 * nothing on stdout): a directory, a folder that does not exist. */
static void check_destinations(char **argv, size_t slot, const char *dir) {
  char null[128], full[128], fifo[128], link[128], target[128], sub[128];
  char missing[160];
  device_copy(null, sizeof null, dir, "null", 3);
  device_copy(full, sizeof full, dir, "full", 7);
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(link, sizeof link, "%s/link.json", dir);
  snprintf(target, sizeof target, "%s/target.json", dir);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(missing, sizeof missing, "%s/no/such.json", dir);
  tool_run_t r;
  const char *what = argv[slot - 1];
  run_to(argv, slot, null, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s %s null: %s", argv[0], what,
                r.err);
  expect_kind(null, S_IFCHR);
  tool_run_free(&r);
  run_to(argv, slot, full, &r);
  ck_assert_msg(r.exited && r.status == 1, "%s %s full: status %d", argv[0],
                what, r.status);
  unwrap_lines(r.err);
  ck_assert_msg(strstr(r.err, full) && strstr(r.err, strerror(ENOSPC)) &&
                    strstr(r.err, what),
                "%s", r.err);
  ck_assert_int_eq(count_lines(r.err), 1);
  expect_kind(full, S_IFCHR);
  tool_run_free(&r);
  /* The FIFO's reader is there before the run; the report (less than the
   * enlarged pipe holds) is read after it. */
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  fcntl(fd, F_SETPIPE_SZ, 1 << 20);
  run_to(argv, slot, fifo, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s %s fifo: %s", argv[0], what,
                r.err);
  static char got[1 << 20];
  size_t n = 0;
  ssize_t k;
  while (n < sizeof got - 1 && (k = read(fd, got + n, sizeof got - 1 - n)) > 0)
    n += (size_t)k;
  got[n] = '\0';
  close(fd);
  json_decref(parse_json(got));
  expect_kind(fifo, S_IFIFO);
  tool_run_free(&r);
  write_text(target, "old\n");
  ck_assert_int_eq(symlink("target.json", link), 0);
  run_to(argv, slot, link, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s %s link: %s", argv[0], what,
                r.err);
  expect_kind(link, S_IFLNK);
  json_error_t e;
  json_t *j = json_load_file(target, 0, &e);
  ck_assert_msg(j != NULL, "%s %s: the link's target: %s", argv[0], what,
                e.text);
  json_decref(j);
  tool_run_free(&r);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  const char *early[][2] = {{sub, "it is a directory"},
                            {missing, "its folder does not exist"}};
  for (size_t i = 0; i < 2; i++) {
    run_to(argv, slot, early[i][0], &r);
    ck_assert_msg(r.exited && r.status == 2, "%s %s %s: status %d", argv[0],
                  what, early[i][0], r.status);
    unwrap_lines(r.err);
    ck_assert_msg(strstr(r.err, early[i][1]) && strstr(r.err, what), "%s",
                  r.err);
    ck_assert_msg(r.out[0] == '\0', "ran before refusing: %s", r.out);
    tool_run_free(&r);
  }
  expect_kind(sub, S_IFDIR);
  unlink(null);
  unlink(full);
  unlink(fifo);
  unlink(link);
  unlink(target);
  rmdir(sub);
}

/* The outputs cases' folder, /tmp/mlsba-<what>-XXXXXX, made in dir. */
static void outputs_dir(char *dir, size_t size, const char *what) {
  snprintf(dir, size, "/tmp/mlsba-%s-XXXXXX", what);
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* The folder and everything in it (the cases made it: no shell word in
 * its name). */
static void outputs_dir_remove(const char *dir) {
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

START_TEST(every_output_keeps_what_its_path_names) {
  char dir[64];
  outputs_dir(dir, sizeof dir, "outputs");
  char *part[] = {partition, "--platform", SEED002, "--n",
                  "1000",    "--json",     NULL,    NULL};
  check_destinations(part, 6, dir);
  char *write[] = {info, "--platform", SEED002, "--write", NULL, NULL};
  check_destinations(write, 4, dir);
  char *gemm[] = {bench,  "--platform", SEED002,  "--size", "300", "--models",
                  "none", "--quiet",    "--json", NULL,     NULL};
  check_destinations(gemm, 9, dir);
  char *getrf[] = {bench, "--op",     "getrf", "--platform", SEED002, "--size",
                   "256", "--models", "none",  "--json",     NULL,    NULL};
  check_destinations(getrf, 10, dir);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A folder the user cannot write into, and a file there the user may
 * not write: refused before anything runs, naming why. Root writes
 * anywhere, so as root the tools run as nobody (setpriv). */
START_TEST(an_unwritable_destination_is_refused_up_front) {
  char dir[64];
  outputs_dir(dir, sizeof dir, "unwritable");
  char closed[128], in_closed[160], open_dir[128], readonly[160];
  snprintf(closed, sizeof closed, "%s/closed", dir);
  snprintf(in_closed, sizeof in_closed, "%s/report.json", closed);
  snprintf(open_dir, sizeof open_dir, "%s/open", dir);
  snprintf(readonly, sizeof readonly, "%s/readonly.json", open_dir);
  ck_assert_int_eq(mkdir(closed, 0555), 0);
  ck_assert_int_eq(mkdir(open_dir, 0777), 0);
  ck_assert_int_eq(chmod(dir, 0755), 0);
  ck_assert_int_eq(chmod(open_dir, 0777), 0);
  write_text(readonly, "{}\n");
  ck_assert_int_eq(chmod(readonly, 0444), 0);
  int root = geteuid() == 0;
  if (root && access("/usr/bin/setpriv", X_OK) != 0) {
    outputs_dir_remove(dir);
    return; /* no way to be another user here */
  }
  char *as_nobody[] = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                       "--clear-groups"};
  size_t skip = root ? 0 : 4;
  const char *dests[][2] = {{in_closed, "its folder takes no new file"},
                            {readonly, "Permission denied"}};
  for (size_t d = 0; d < 2; d++) {
    char *dest = (char *)dests[d][0];
    char *argvs[][16] = {
        {as_nobody[0], as_nobody[1], as_nobody[2], as_nobody[3], partition,
         "--platform", SEED002, "--n", "100", "--json", dest, NULL},
        {as_nobody[0], as_nobody[1], as_nobody[2], as_nobody[3], info,
         "--platform", SEED002, "--write", dest, NULL},
        {as_nobody[0], as_nobody[1], as_nobody[2], as_nobody[3], bench,
         "--platform", SEED002, "--size", "300", "--models", "none", "--json",
         dest, NULL},
        {as_nobody[0], as_nobody[1], as_nobody[2], as_nobody[3], bench, "--op",
         "getrf", "--platform", SEED002, "--size", "256", "--models", "none",
         "--json", dest, NULL}};
    for (size_t t = 0; t < 4; t++) {
      tool_run_t r;
      run_tool(argvs[t] + skip, &r);
      ck_assert_msg(r.exited && r.status == 2, "%s %s: status %d: %s",
                    argvs[t][4], dest, r.status, r.err);
      unwrap_lines(r.err);
      ck_assert_msg(strstr(r.err, dests[d][1]) && strstr(r.err, dest), "%s",
                    r.err);
      ck_assert_msg(r.out[0] == '\0', "ran before refusing: %s", r.out);
      tool_run_free(&r);
    }
  }
  outputs_dir_remove(dir);
}
END_TEST

/* --list-models on a folder with a FIFO named *.model (which hung for
 * ever, opened before the regular-file check) and names and keys holding
 * escape sequences (which reached the terminal raw). */
START_TEST(list_models_neither_hangs_on_a_fifo_nor_prints_escapes) {
  char dir[64];
  outputs_dir(dir, sizeof dir, "list");
  char fifo[128], odd[160], good[128];
  snprintf(fifo, sizeof fifo, "%s/stuck.model", dir);
  snprintf(odd, sizeof odd, "%s/\033[2J\033]0;x\007red.model", dir);
  snprintf(good, sizeof good, "%s/fine.model", dir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 10, 5), 0);
  ck_assert_int_eq(mlsba_model_save(m, odd, "device=\033[31mred\033[0m"), 0);
  ck_assert_int_eq(mlsba_model_save(m, good, "device=fine"), 0);
  mlsba_model_destroy(m);
  char *list[] = {info, "--list-models", "--models", dir, NULL};
  tool_run_t r;
  run_tool(list, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "3 files") && strstr(r.out, "stuck.model\n") &&
                    strstr(r.out, "FIFO") && strstr(r.out, "fine.model\n"),
                "%s", r.out);
  ck_assert_msg(strstr(r.out, "\\x1b[2J\\x1b]0;x\\x07red.model") &&
                    strstr(r.out, "key device=\\x1b[31mred\\x1b[0m"),
                "%s", r.out);
  ck_assert_msg(strchr(r.out, '\033') == NULL && strchr(r.out, '\007') == NULL,
                "a raw escape reached the terminal: %s", r.out);
  tool_run_free(&r);
  char *show[] = {info, "--show-model", odd, NULL};
  run_tool(show, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strchr(r.out, '\033') == NULL && strstr(r.out, "\\x1b[31m"),
                "%s", r.out);
  tool_run_free(&r);
  unlink(fifo);
  unlink(odd);
  unlink(good);
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The pictures' files keep what their names are too: a FIFO nobody
 * reads (which hung the tool) and a directory where a file goes are
 * errors naming them, before gnuplot runs. */
START_TEST(plot_files_keep_what_their_names_are) {
  char dir[64];
  outputs_dir(dir, sizeof dir, "plot-files");
  char model[128], pics[128], dat[160], gp[160];
  snprintf(model, sizeof model, "%s/d.model", dir);
  snprintf(pics, sizeof pics, "%s/pics", dir);
  snprintf(dat, sizeof dat, "%s/model.dat", pics);
  snprintf(gp, sizeof gp, "%s/model.gp", pics);
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  mlsba_model_set_point(m, 100, 2000);
  ck_assert_int_eq(mlsba_model_save(m, model, "device=d"), 0);
  mlsba_model_destroy(m);
  ck_assert_int_eq(mkdir(pics, 0700), 0);
  ck_assert_int_eq(mkfifo(dat, 0600), 0);
  char *argv[] = {info, "--show-model", model, "--plot", pics, NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 1, "status %d: %s", r.status, r.err);
  unwrap_lines(r.err);
  ck_assert_msg(strstr(r.err, "--plot") && strstr(r.err, "model.dat") &&
                    strstr(r.err, "FIFO"),
                "%s", r.err);
  expect_kind(dat, S_IFIFO);
  tool_run_free(&r);
  unlink(dat);
  unlink(gp); /* written beside the FIFO's failure */
  ck_assert_int_eq(mkdir(gp, 0700), 0);
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 1, "status %d: %s", r.status, r.err);
  unwrap_lines(r.err);
  ck_assert_msg(strstr(r.err, "model.gp: cannot write: it is a directory"),
                "%s", r.err);
  tool_run_free(&r);
  outputs_dir_remove(dir);
}
END_TEST

/* One rule for the per-user cache: the tools keep their saved models
 * where the library keeps its own (MLSBA_CACHE_DIR/HOST), so that one
 * variable moves, or with none turns off, all of it; mlsba-bench measures
 * there, mlsba-partition and mlsba-info --list-models read there. */
START_TEST(the_tools_keep_their_models_in_MLSBA_CACHE_DIR) {
  char dir[] = "/tmp/mlsba-cache-dir-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char pf[128], cache[128], xdg[128], cmd[512];
  snprintf(pf, sizeof pf, "%s/two.json", dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(xdg, sizeof xdg, "%s/xdg", dir);
  write_text(pf, "{\"name\": \"two\", \"devices\": ["
                 "{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0},"
                 "{\"name\": \"b\", \"type\": \"cpu\", \"core\": 0}]}");
  ck_assert_int_eq(mkdir(xdg, 0700), 0);
  setenv("XDG_CACHE_HOME", xdg, 1);
  setenv("MLSBA_CACHE_DIR", cache, 1);
  char *measure[] = {bench, "--platform", pf, "--size", "128", "--quiet", NULL};
  tool_run_t r;
  run_tool(measure, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  tool_run_free(&r);
  snprintf(cmd, sizeof cmd,
           "ls %s/*/a.gemm-single-m128-k128.model >/dev/null && "
           "test ! -e %s/mlsba",
           cache, xdg);
  ck_assert_msg(system(cmd) == 0, "the models are not (only) in %s", cache);
  char *part[] = {partition, "--platform", pf,  "--size",
                  "128",     "--json",     "-", NULL};
  run_tool(part, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  tool_run_free(&r);
  char *list[] = {info, "--list-models", NULL};
  run_tool(list, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  ck_assert_msg(strstr(r.out, "a.gemm-single-m128-k128.model\n"), "%s", r.out);
  tool_run_free(&r);
  /* none: mlsba-bench keeps nothing anywhere; the tools that only read
   * saved models say there are none to read. */
  setenv("MLSBA_CACHE_DIR", "none", 1);
  run_tool(measure, &r);
  ck_assert_msg(r.exited && r.status == 0, "%s", r.err);
  tool_run_free(&r);
  snprintf(cmd, sizeof cmd, "test ! -e %s/mlsba", xdg);
  ck_assert_msg(system(cmd) == 0, "MLSBA_CACHE_DIR=none wrote in %s", xdg);
  ck_assert_msg(access("none", F_OK) != 0, "a folder named none was made");
  char **readers[] = {part, list};
  for (int k = 0; k < 2; k++) {
    run_tool(readers[k], &r);
    ck_assert_msg(r.exited && r.status == 2, "%s: %d", readers[k][0], r.status);
    unwrap_lines(r.err);
    ck_assert_msg(strstr(r.err, "MLSBA_CACHE_DIR=none keeps no saved models"),
                  "%s", r.err);
    tool_run_free(&r);
  }
  unsetenv("MLSBA_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *tools_suite(void) {
  Suite *s = suite_create("tools");
  TCase *tc = tcase_create("mlsba-partition");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, json_report_follows_the_contract);
  tcase_add_test(tc, all_algorithms_in_one_report);
  tcase_add_test(tc, json_to_a_file_and_a_table_to_stdout);
  tcase_add_loop_test(tc, bad_input_gets_one_clear_line_and_status_2, 0,
                      (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, real_devices_and_too_little_capacity_are_refused);
  tcase_add_test(tc, help_and_version_exit_0);
  tcase_add_test(tc, a_sample_platform_by_name_and_size);
  tcase_add_test(tc, the_docs_example_with_links_runs_in_every_tool);
  tcase_add_test(tc, bench_measures_what_partition_predicts_with_links);
  suite_add_tcase(s, tc);
  tc = tcase_create("mlsba-bench");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, bench_json_follows_the_contract);
  tcase_add_test(tc, bench_compare_lists_every_run);
  tcase_add_test(tc, bench_separate_kinds_models_every_device_alone);
  tcase_add_test(tc, bench_makes_one_folder_never_a_chain);
  tcase_add_test(tc, bench_says_which_devices_are_at_their_cap);
  tcase_add_test(tc, bench_tells_a_fault_from_a_left_out_device);
  tcase_add_test(tc, bench_says_why_the_routine_stopped);
  tcase_add_test(tc, bench_table_names_groups_and_devices);
  tcase_add_test(tc, bench_balances_a_real_product);
  tcase_add_test(tc, bench_factor_compare_on_the_sim_desktop);
  tcase_add_test(tc, bench_factor_verifies_on_real_cores);
  tcase_add_test(tc, bench_factor_json_says_which_devices_were_used);
  tcase_add_test(tc, bench_table_escapes_control_characters_in_names);
  tcase_add_loop_test(tc, bench_refuses_bad_input, 0,
                      (int)(sizeof bench_bad / sizeof bench_bad[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("mlsba-info");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, info_shows_devices_and_groups);
  tcase_add_test(tc, info_works_without_opencl);
  tcase_add_test(tc, info_refuses_bad_input);
  tcase_add_test(tc, info_says_what_this_machine_cannot_run);
  tcase_add_test(tc, saved_models_are_partitioned_listed_and_shown);
  tcase_add_test(tc, a_saved_model_is_plotted);
  tcase_add_test(tc, the_tools_keep_their_models_in_MLSBA_CACHE_DIR);
  suite_add_tcase(s, tc);
  tc = tcase_create("options");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, the_option_parser_reads_every_kind);
  tcase_add_loop_test(tc, the_option_parser_says_what_is_wrong, 0,
                      (int)(sizeof refused / sizeof refused[0]));
  tcase_add_loop_test(tc, every_option_says_when_its_value_is_missing, 0,
                      (int)(sizeof valued / sizeof valued[0]));
  tcase_add_loop_test(tc, every_checked_option_refuses_a_bad_value, 0,
                      (int)(sizeof bad_values / sizeof bad_values[0]));
  tcase_add_test(tc, the_last_of_a_repeated_option_wins);
  suite_add_tcase(s, tc);
  TCase *tc_more = tcase_create("edges");
  tcase_set_timeout(tc_more, 60);
  tcase_add_test(tc_more, mlsba_info_lists_the_kinds_of_100000_cores);
  tcase_add_test(tc_more, numeric_options_refuse_empty_junk_inf_and_nan);
  tcase_add_test(tc_more,
                 the_slowest_platform_at_2_to_the_53_gives_a_valid_report);
  tcase_add_test(tc_more, the_tools_fail_when_their_output_cannot_be_written);
  TCase *tc_out = tcase_create("outputs");
  tcase_set_timeout(tc_out, 300);
  tcase_add_test(tc_out, every_output_keeps_what_its_path_names);
  tcase_add_test(tc_out, an_unwritable_destination_is_refused_up_front);
  tcase_add_test(tc_out,
                 list_models_neither_hangs_on_a_fifo_nor_prints_escapes);
  tcase_add_test(tc_out, plot_files_keep_what_their_names_are);
  suite_add_tcase(s, tc_out);
  suite_add_tcase(s, tc_more);
  return s;
}

int main(void) { return run_suite(tools_suite()); }
