/* Platform files: the seed-002 desktop, defaults, real device entries, and
 * every kind of bad file, each refused with a message that names the file,
 * the field and the problem. */
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
#include "platform/platform.h"
#include "support/big_platform.h"
#include "support/random_models.h"
#include "support/run_suite.h"
#include "support/scratch.h"

#ifndef MLSBA_SOURCE_DIR
#define MLSBA_SOURCE_DIR "."
#endif

static const char *seed002 =
    MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json";

START_TEST(seed002_desktop_loads) {
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_load(seed002, &pl) == 0, "%s",
                mlsba_last_error());
  ck_assert_str_eq(mlsba_platform_name(pl), "desktop-seed002");
  ck_assert_uint_eq(mlsba_platform_num_devices(pl), 6);
  ck_assert_uint_eq(mlsba_platform_num_groups(pl), 4);
  static const size_t sizes[] = {2, 2, 1, 1};
  static const char *first[] = {"core0", "core1", "core2", "core3"};
  for (size_t g = 0; g < 4; g++) {
    ck_assert_uint_eq(mlsba_platform_group_size(pl, g), sizes[g]);
    size_t d = mlsba_platform_group_device(pl, g, 0);
    ck_assert_str_eq(mlsba_platform_device_name(pl, d), first[g]);
  }
  const mlsba_model_t *gpu0 = mlsba_platform_device_model(pl, 1);
  ck_assert_ptr_nonnull(gpu0);
  ck_assert_int_eq(mlsba_model_max_load(gpu0), 6663);
  ck_assert_uint_eq(mlsba_model_num_points(gpu0), 7);
  const mlsba_model_t *models[6];
  size_t group_size[4];
  ck_assert_int_eq(mlsba_platform_grouped_models(pl, models, group_size), 0);
  ck_assert_ptr_eq(models[1], gpu0);
  ck_assert_uint_eq(group_size[0], 2);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(groups_default_to_one_device_each) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(
      mlsba_platform_parse("{\"devices\": [{\"name\": \"a\", \"type\": \"sim\","
                           " \"speed\": [[1, 2]]}, {\"name\": \"b\", "
                           "\"type\": \"sim\", \"speed\": [[1, 3], [5, 4]],"
                           " \"noise\": 0.03, \"seed\": 7}]}",
                           "dir/flat.json", &pl),
      0);
  ck_assert_str_eq(mlsba_platform_name(pl), "flat.json");
  ck_assert_uint_eq(mlsba_platform_num_groups(pl), 2);
  ck_assert_uint_eq(mlsba_platform_group_size(pl, 1), 1);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 1, 0), 1);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(real_devices_are_validated_but_have_no_model) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(
      mlsba_platform_parse(
          "{\"name\": \"mixed\", \"devices\": ["
          "{\"name\": \"cpu1\", \"type\": \"cpu\", \"core\": 1},"
          "{\"name\": \"ocl0\", \"type\": \"opencl\", \"platform\": 0, "
          "\"device\": 0, \"mem_limit_mb\": 512}],"
          "\"groups\": [[\"cpu1\", \"ocl0\"]]}",
          "mixed.json", &pl),
      0);
  ck_assert_int_eq(mlsba_platform_device_type(pl, 0), MLSBA_DEVICE_CPU);
  ck_assert_int_eq(mlsba_platform_device_type(pl, 1), MLSBA_DEVICE_OPENCL);
  ck_assert_ptr_null(mlsba_platform_device_model(pl, 0));
  const mlsba_model_t *models[2];
  size_t size[1];
  ck_assert_int_eq(mlsba_platform_grouped_models(pl, models, size),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "cpu1"));
  mlsba_platform_destroy(pl);
}
END_TEST

/* A bad platform and what its error message must contain. */
static const struct {
  const char *json;
  const char *expect[3];
} bad[] = {
    {"", {"bad.json:", "'[' or '{' expected"}},
    {"{\"devices\": [", {"bad.json:1:"}},
    {"[]", {"must be a JSON object"}},
    {"{\"devices\": [], \"nmae\": \"x\"}", {"unknown field 'nmae'"}},
    {"{\"name\": \"x\"}", {"devices", "non-empty array"}},
    {"{\"devices\": []}", {"devices", "non-empty array"}},
    {"{\"devices\": [42]}", {"devices[0]", "must be an object"}},
    {"{\"devices\": [{\"type\": \"sim\"}]}", {"devices[0]", "name"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"gpu\"}]}",
     {"devices[0] (a)", "unknown device type \"gpu\""}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
     "1]], \"max_laod\": 5}]}",
     {"devices[0] (a)", "unknown field 'max_laod'", "max_load"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\"}]}",
     {"devices[0].speed", "non-empty array"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, 2, "
     "3]]}]}",
     {"devices[0].speed[0]", "[load, speed]"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[5, 1], "
     "[5, 2]]}]}",
     {"devices[0].speed[1]", "loads must increase", "5 after 5"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[5, "
     "-1]]}]}",
     {"devices[0].speed[0]", "speed must be > 0", "-1"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[0, "
     "1]]}]}",
     {"devices[0].speed[0]", "load must be > 0"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, 1]],"
     " \"max_load\": -3}]}",
     {"devices[0] (a)", "max_load must be >= 0", "-3"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, 1]],"
     " \"max_load\": 2.5}]}",
     {"max_load must be an integer"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, 1]],"
     " \"noise\": 2}]}",
     {"noise must be in [0, 1]"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, 1]],"
     " \"slow_at\": 5, \"slow_until\": 5}]}",
     {"devices[0] (a)", "slow_until (5) must come after a slow_at (5)"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, 1]],"
     " \"slow_until\": 3}]}",
     {"slow_until (3) must come after a slow_at (0)"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\"}]}",
     {"devices[0] (a)", "needs \"core\""}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0, "
     "\"kind\": 3}]}",
     {"devices[0] (a)", "kind must be a non-empty string", "integer"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
     "1]], \"kind\": \"\"}]}",
     {"devices[0] (a)", "kind must be a non-empty string"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"opencl\", "
     "\"mem_limit_mb\": 0}]}",
     {"mem_limit_mb must be > 0"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}, "
     "{\"name\": \"a\", \"type\": \"cpu\", \"core\": 1}]}",
     {"devices[1]", "\"a\" is used twice"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}], "
     "\"groups\": [[\"b\"]]}",
     {"groups[0][0]", "no device named \"b\""}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}], "
     "\"groups\": [[\"a\"], [\"a\"]]}",
     {"groups[1][0]", "more than one group"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}, "
     "{\"name\": \"b\", \"type\": \"cpu\", \"core\": 1}], "
     "\"groups\": [[\"a\"]]}",
     {"groups", "\"b\" is in no group"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}], "
     "\"groups\": [[]]}",
     {"groups[0]", "non-empty array"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}], "
     "\"groups\": {}}",
     {"groups", "must be an array"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0, "
     "\"core\": 1}]}",
     {"bad.json:", "duplicate"}},
    {"{\"columns_of\": 8400, \"devices\": [{\"name\": \"a\", \"type\": "
     "\"cpu\", \"core\": 0}]}",
     {"columns_of", "must be an object"}},
    {"{\"columns_of\": {\"m\": 8400}, \"devices\": [{\"name\": \"a\", "
     "\"type\": \"cpu\", \"core\": 0}]}",
     {"columns_of", "needs both m and k"}},
    {"{\"columns_of\": {\"m\": 8, \"k\": 8, \"n\": 8}, \"devices\": "
     "[{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}]}",
     {"columns_of", "unknown field 'n'"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0, "
     "\"link\": {\"latency\": 1e-6}}]}",
     {"devices[0] (a).link", "bandwidth must be a number of bytes per second"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
     "1]], \"link\": {\"latency\": -1, \"bandwidth\": 1e9}}]}",
     {"devices[0] (a).link", "latency must be a number of seconds"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
     "1]], \"link\": {\"latency\": 0, \"bandwith\": 1e9}}]}",
     {"devices[0] (a).link", "unknown field 'bandwith'"}},
    {"{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0, "
     "\"link\": 5}]}",
     {"devices[0] (a).link", "must be an object"}},
    {"{\"network\": {\"latency\": 0, \"bandwidth\": 0}, \"devices\": "
     "[{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0}]}",
     {"bad.json: network", "bandwidth must be"}},
};

/* A device's host link and the rank's network link: read, handed out,
 * turned into a transfer cost, and kept by a save and a load. */
START_TEST(links_are_read_and_round_trip) {
  const char *text =
      "{\"name\": \"l\", \"network\": {\"latency\": 5e-5, \"bandwidth\": "
      "1.25e8}, \"devices\": [{\"name\": \"g\", \"type\": \"sim\", "
      "\"speed\": [[1, 10]], \"link\": {\"latency\": 1e-5, \"bandwidth\": "
      "1.2e10}}, {\"name\": \"c\", \"type\": \"cpu\", \"core\": 0}]}";
  char path[] = "/tmp/mlsba-links-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  for (int pass = 0; pass < 2; pass++) {
    mlsba_platform_t *pl = NULL;
    int err = pass ? mlsba_platform_load(path, &pl)
                   : mlsba_platform_parse(text, "links", &pl);
    ck_assert_msg(err == 0, "%s", mlsba_last_error());
    mlsba_link_t l;
    ck_assert_int_eq(mlsba_platform_device_link(pl, 0, &l), 0);
    ck_assert_double_eq(l.latency, 1e-5);
    ck_assert_double_eq(l.bandwidth, 1.2e10);
    double lat, per;
    ck_assert_int_eq(mlsba_link_transfer(&l, 1.2e4, &lat, &per), 0);
    ck_assert_double_eq(lat, 1e-5);
    ck_assert_double_eq_tol(per, 1e-6, 1e-18);
    ck_assert_int_eq(mlsba_platform_device_link(pl, 1, &l), 0);
    ck_assert_double_eq(l.bandwidth, 0); /* none given */
    ck_assert_int_eq(mlsba_link_transfer(&l, 1e6, &lat, &per), 0);
    ck_assert_double_eq(lat + per, 0);
    ck_assert_int_eq(mlsba_platform_network(pl, &l), 0);
    ck_assert_double_eq(l.latency, 5e-5);
    ck_assert_double_eq(l.bandwidth, 1.25e8);
    ck_assert_int_eq(mlsba_platform_device_link(pl, 2, &l), MLSBA_EINVAL);
    if (!pass)
      ck_assert_int_eq(mlsba_platform_save(pl, path), 0);
    mlsba_platform_destroy(pl);
  }
  unlink(path);
}
END_TEST

START_TEST(bad_platforms_are_refused_with_a_clear_message) {
  mlsba_platform_t *pl = NULL;
  int err = mlsba_platform_parse(bad[_i].json, "bad.json", &pl);
  ck_assert_msg(err == MLSBA_EFORMAT, "case %d: got %s for %s", _i,
                mlsba_err_name(err), bad[_i].json);
  ck_assert_ptr_null(pl);
  for (int k = 0; k < 3 && bad[_i].expect[k]; k++)
    ck_assert_msg(strstr(mlsba_last_error(), bad[_i].expect[k]) != NULL,
                  "case %d: message \"%s\" lacks \"%s\"", _i,
                  mlsba_last_error(), bad[_i].expect[k]);
}
END_TEST

/* What simulated speeds count ("columns_of") is read, kept by a save and
 * absent unless the file says it. */
START_TEST(columns_of_is_read_and_round_trips) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_load(seed002, &pl), 0);
  int64_t m = 0, k = 0;
  ck_assert_int_eq(mlsba_platform_columns_of(pl, &m, &k), 1);
  ck_assert_int_eq(m, 8400);
  ck_assert_int_eq(k, 8400);
  char path[] = "/tmp/mlsba-columns-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(mlsba_platform_save(pl, path), 0);
  mlsba_platform_destroy(pl);
  ck_assert_int_eq(mlsba_platform_load(path, &pl), 0);
  m = k = 0;
  ck_assert_int_eq(mlsba_platform_columns_of(pl, &m, &k), 1);
  ck_assert_int_eq(m * k, 8400 * 8400);
  mlsba_platform_destroy(pl);
  unlink(path);
  ck_assert_int_eq(
      mlsba_platform_parse("{\"devices\": [{\"name\": \"a\", \"type\": "
                           "\"sim\", \"speed\": [[1, 1]]}]}",
                           "plain", &pl),
      0);
  ck_assert_int_eq(mlsba_platform_columns_of(pl, NULL, NULL), 0);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Cores are one kind unless a file says otherwise; other devices have
 * one only when named; kinds survive a save and a load. */
START_TEST(kinds_default_and_round_trip) {
  static const char *text =
      "{\"devices\": [{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0}, "
      "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 1, \"kind\": "
      "\"big\"}, {\"name\": \"s\", \"type\": \"sim\", \"speed\": [[1, 1]]}, "
      "{\"name\": \"t\", \"type\": \"sim\", \"speed\": [[1, 1]], \"kind\": "
      "\"x\"}, {\"name\": \"g\", \"type\": \"opencl\", \"platform\": 0, "
      "\"device\": 0}]}";
  static const char *const want[] = {"cpu", "big", NULL, "x", NULL};
  mlsba_platform_t *pl = NULL, *back = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "kinds", &pl), 0);
  char path[] = "/tmp/mlsba-kinds-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(mlsba_platform_save(pl, path), 0);
  ck_assert_int_eq(mlsba_platform_load(path, &back), 0);
  unlink(path);
  for (size_t i = 0; i < 5; i++) {
    for (int k = 0; k < 2; k++) {
      const char *got = (k ? back : pl)->dev[i].kind;
      if (want[i])
        ck_assert_str_eq(got, want[i]);
      else
        ck_assert_ptr_null(got);
    }
  }
  mlsba_platform_destroy(pl);
  mlsba_platform_destroy(back);
}
END_TEST

/* The whole text of a file (the caller frees it). */
static char *file_text(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  static char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

/* Each backend reads and writes back its own fields: every field of every
 * backend survives a save and a load (the second save is the first, byte
 * for byte), and what a backend tells of its devices (core, OpenCL
 * indices) is what the file said. */
START_TEST(backend_fields_round_trip) {
  static const char *text =
      "{\"name\": \"all\", \"devices\": ["
      "{\"name\": \"c\", \"type\": \"cpu\", \"core\": 3},"
      "{\"name\": \"g\", \"type\": \"opencl\", \"platform\": 1, \"device\": "
      "2, \"mem_limit_mb\": 640},"
      "{\"name\": \"s\", \"type\": \"sim\", \"speed\": [[1, 2], [8, 4]], "
      "\"max_load\": 9, \"noise\": 0.25, \"seed\": 11, \"fail_at\": 4, "
      "\"slow_at\": 5, \"slow_until\": 7, \"slow_factor\": 2.5, "
      "\"contends_with\": [\"t\"], "
      "\"contention\": 0.5},"
      "{\"name\": \"t\", \"type\": \"sim\", \"speed\": [[1, 1]]}]}";
  static const char *const fields[] = {
      "\"core\": 3",           "\"platform\": 1",     "\"device\": 2",
      "\"mem_limit_mb\": 640", "\"max_load\": 9",     "\"noise\": 0.25",
      "\"seed\": 11",          "\"fail_at\": 4",      "\"slow_at\": 5",
      "\"slow_factor\": 2.5",  "\"contention\": 0.5", "\"contends_with\": [\n",
      "\"slow_until\": 7"};
  mlsba_platform_t *pl = NULL, *back = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "all", &pl), 0);
  char p1[] = "/tmp/mlsba-backends-XXXXXX", p2[] = "/tmp/mlsba-backends-XXXXXX";
  int f1 = mkstemp(p1), f2 = mkstemp(p2);
  ck_assert_int_ge(f1, 0);
  ck_assert_int_ge(f2, 0);
  close(f1);
  close(f2);
  ck_assert_int_eq(mlsba_platform_save(pl, p1), 0);
  ck_assert_int_eq(mlsba_platform_load(p1, &back), 0);
  ck_assert_int_eq(mlsba_platform_save(back, p2), 0);
  char *t1 = file_text(p1), *t2 = file_text(p2);
  unlink(p1);
  unlink(p2);
  ck_assert_str_eq(t1, t2);
  for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
    ck_assert_msg(strstr(t1, fields[k]) != NULL, "saved file lacks %s:\n%s",
                  fields[k], t1);
  mlsba_device_info_t info;
  ck_assert_int_eq(mlsba_platform_device_info(back, 0, &info), 0);
  ck_assert_int_eq(info.core, 3);
  ck_assert_int_eq(info.cl_platform, -1);
  ck_assert_int_eq(mlsba_platform_device_info(back, 1, &info), 0);
  ck_assert_int_eq(info.core, -1);
  ck_assert_int_eq(info.cl_platform, 1);
  ck_assert_int_eq(info.cl_device, 2);
  ck_assert_int_eq(mlsba_platform_device_info(back, 2, &info), 0);
  ck_assert_int_eq(info.core, -1);
  ck_assert_int_eq(info.cl_device, -1);
  free(t1);
  free(t2);
  mlsba_platform_destroy(pl);
  mlsba_platform_destroy(back);
}
END_TEST

START_TEST(unreadable_files_name_the_path) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_load("/nonexistent/p.json", &pl), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "/nonexistent/p.json"));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "No such file"));
  char path[] = "/tmp/mlsba-platform-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "{\"devices\": [{\"na", 17), 17);
  close(fd);
  ck_assert_int_eq(mlsba_platform_load(path, &pl), MLSBA_EFORMAT);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), path));
  unlink(path);
  ck_assert_int_eq(mlsba_platform_load(NULL, &pl), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_platform_parse("{}", "x", NULL), MLSBA_EINVAL);
  mlsba_platform_destroy(NULL);
}
END_TEST

/* Thousands of damaged copies of the seed-002 platform file: each parses
 * or is refused with EFORMAT and a message naming the origin; nothing
 * crashes. */
START_TEST(random_damage_never_crashes_the_parser) {
  FILE *in = fopen(seed002, "rb");
  ck_assert_ptr_nonnull(in);
  static char good[16384], damaged[16500];
  size_t len = fread(good, 1, sizeof good - 1, in);
  fclose(in);
  rng_t r = {.state = 5};
  for (int trial = 0; trial < 3000; trial++) {
    size_t n = len;
    memcpy(damaged, good, len);
    int edits = (int)rng_range(&r, 1, 3);
    for (int e = 0; e < edits && n > 0; e++) {
      size_t at = (size_t)rng_range(&r, 0, (int64_t)n - 1);
      static const char pick[] = "{}[]\",:0123456789.-eE \n\\ax";
      switch (rng_range(&r, 0, 2)) {
      case 0:
        damaged[at] = pick[rng_range(&r, 0, (int64_t)sizeof pick - 2)];
        break;
      case 1:
        n = at;
        break;
      default:
        memmove(damaged + at, damaged + at + 1, n - at - 1);
        n--;
      }
    }
    damaged[n] = '\0';
    mlsba_platform_t *pl = NULL;
    int err = mlsba_platform_parse(damaged, "damaged.json", &pl);
    ck_assert_msg(err == 0 || err == MLSBA_EFORMAT, "trial %d: %s", trial,
                  mlsba_err_name(err));
    if (err)
      ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "damaged.json"));
    mlsba_platform_destroy(pl);
  }
}
END_TEST

/* ---- 5: two writers of one platform file ----------------------------- */

START_TEST(two_writers_of_a_platform_file_never_leave_it_broken) {
  scratch_make();
  char path[128];
  snprintf(path, sizeof path, "%s/platform.json", scratch);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_load(MLSBA_SOURCE_DIR
                                       "/models/sim/desktop-seed002.json",
                                       &pl),
                   0);
  ck_assert_int_eq(mlsba_platform_save(pl, path), 0);
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    kids[k] = fork();
    ck_assert_int_ge(kids[k], 0);
    if (kids[k] == 0) {
      int broken = 0;
      for (int round = 0; round < 100; round++)
        broken |= mlsba_platform_save(pl, path) != 0;
      _exit(broken);
    }
  }
  /* Read while they write: every read sees a whole file. */
  int reads = 0;
  for (int alive = 2; alive > 0;) {
    mlsba_platform_t *back = NULL;
    ck_assert_msg(mlsba_platform_load(path, &back) == 0, "read %d: %s", reads,
                  mlsba_last_error());
    ck_assert_uint_eq(mlsba_platform_num_devices(back), 6);
    mlsba_platform_destroy(back);
    reads++;
    alive = 0;
    for (int k = 0; k < 2; k++) {
      int st;
      if (kids[k] > 0 && waitpid(kids[k], &st, WNOHANG) == kids[k]) {
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        kids[k] = 0;
      }
      alive += kids[k] > 0;
    }
  }
  mlsba_platform_t *back = NULL;
  ck_assert_int_eq(mlsba_platform_load(path, &back), 0);
  mlsba_platform_destroy(back);
  mlsba_platform_destroy(pl);
  scratch_remove();
}
END_TEST
/* A FIFO with no writer blocked the open forever; the case's timeout is
 * the bound. */
START_TEST(a_fifo_in_place_of_a_platform_or_model_file_does_not_hang) {
  scratch_make();
  char fifo[128];
  snprintf(fifo, sizeof fifo, "%s/fifo", scratch);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_load(fifo, &pl), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "FIFO"));
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_load(fifo, "k", &m), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "FIFO"));
  ck_assert_ptr_null(m);
  /* /dev/zero is a character device, not "a directory?". */
  ck_assert_int_eq(mlsba_platform_load("/dev/zero", &pl), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "character device"));
  /* A directory in place of a model file is a directory, not "truncated". */
  ck_assert_int_eq(mlsba_model_load(scratch, "k", &m), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "a directory"));
  scratch_remove();
}
END_TEST
/* Took 38-77 s with a linear search per name (131 s extrapolated on this
 * loaded 2-core machine); the timeout of the case is the bound: 30 s, for
 * a parse of about 2 s here while five builds share the machine. */
START_TEST(a_platform_of_100000_devices_parses_in_linear_time) {
  char *json = big_platform_json(100000);
  ck_assert_ptr_nonnull(json);
  mlsba_platform_t *pl = parse_ok(json);
  ck_assert_uint_eq(mlsba_platform_num_devices(pl), 100000);
  ck_assert_uint_eq(mlsba_platform_num_groups(pl), 50000);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 49999, 1), 99999);
  mlsba_platform_destroy(pl);
  free(json);
  /* A repeated name is still found, and named. */
  json = big_platform_json(1000);
  ck_assert_ptr_nonnull(json);
  char *dup = strstr(json, "\"name\": \"d77\"");
  ck_assert_ptr_nonnull(dup);
  memcpy(dup + 8, "\"d78\"", 5);
  mlsba_platform_t *twice = NULL;
  ck_assert_int_eq(mlsba_platform_parse(json, "big", &twice), MLSBA_EFORMAT);
  ck_assert_msg(strstr(mlsba_last_error(), "devices[78]") != NULL, "%s",
                mlsba_last_error());
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "used twice"));
  free(json);
}
END_TEST

static Suite *platform_suite(void) {
  Suite *s = suite_create("platform");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, seed002_desktop_loads);
  tcase_add_test(tc, groups_default_to_one_device_each);
  tcase_add_test(tc, real_devices_are_validated_but_have_no_model);
  tcase_add_loop_test(tc, bad_platforms_are_refused_with_a_clear_message, 0,
                      (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, unreadable_files_name_the_path);
  tcase_add_test(tc, kinds_default_and_round_trip);
  tcase_add_test(tc, links_are_read_and_round_trip);
  tcase_add_test(tc, backend_fields_round_trip);
  tcase_add_test(tc, columns_of_is_read_and_round_trips);
  tcase_add_test(tc, random_damage_never_crashes_the_parser);
  suite_add_tcase(s, tc);
  TCase *tc_more = tcase_create("damage, writers, scale");
  tcase_set_timeout(tc_more, 60);
  tcase_add_test(tc_more, two_writers_of_a_platform_file_never_leave_it_broken);
  tcase_add_test(tc_more,
                 a_fifo_in_place_of_a_platform_or_model_file_does_not_hang);
  tcase_add_test(tc_more, a_platform_of_100000_devices_parses_in_linear_time);
  suite_add_tcase(s, tc_more);
  return s;
}

int main(void) { return run_suite(platform_suite()); }
