/* Error table, last-error message and version; the one writer of files
 * (lib/core/atomic_file.c): what a path names stays what it is; the even
 * split (lib/core/even.c) against dealing the units out one by one. */
#define _DEFAULT_SOURCE /* mknod, makedev */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/bigmem.h"
#include "core/even.h"
#include "mlsba.h"
#include "support/run_suite.h"
#include "support/scratch.h"

START_TEST(every_code_has_a_distinct_name_and_text) {
  static const int codes[] = {
#define CODE_(name, value, text) MLSBA_##name,
      MLSBA_ERRNO_MAP(CODE_)
#undef CODE_
  };
  size_t n = sizeof codes / sizeof codes[0];
  ck_assert_uint_ge(n, 10);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_lt(codes[i], 0);
    ck_assert_str_ne(mlsba_strerror(codes[i]), "unknown error");
    ck_assert_str_ne(mlsba_err_name(codes[i]), "MLSBA_EUNKNOWN");
    for (size_t j = 0; j < i; j++) {
      ck_assert_int_ne(codes[i], codes[j]);
      ck_assert_str_ne(mlsba_strerror(codes[i]), mlsba_strerror(codes[j]));
    }
  }
  ck_assert_str_eq(mlsba_err_name(MLSBA_EINVAL), "MLSBA_EINVAL");
  ck_assert_str_eq(mlsba_strerror(MLSBA_ENOMEM), "out of memory");
  ck_assert_str_eq(mlsba_strerror(0), "success");
  ck_assert_str_eq(mlsba_strerror(-12345), "unknown error");
  ck_assert_str_eq(mlsba_strerror(7), "unknown error");
}
END_TEST

START_TEST(failing_call_leaves_a_message_naming_the_problem) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 10, -3), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "speed"));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "-3"));
  /* A later success keeps the message. */
  ck_assert_int_eq(mlsba_model_set_point(m, 10, 3), 0);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "speed"));
  mlsba_model_destroy(m);
}
END_TEST

static void *fail_in_thread(void *arg) {
  (void)arg;
  mlsba_model_set_max_load(NULL, 1);
  return NULL;
}

START_TEST(last_error_is_per_thread) {
  ck_assert_int_eq(mlsba_model_clear(NULL), MLSBA_EINVAL);
  char mine[512];
  snprintf(mine, sizeof mine, "%s", mlsba_last_error());
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_str_eq(mlsba_last_error(), mine);
  ck_assert_ptr_nonnull(strstr(mine, "mlsba_model_clear"));
}
END_TEST

START_TEST(runtime_version_matches_header) {
  ck_assert_uint_eq(mlsba_version(), MLSBA_VERSION_HEX);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", MLSBA_VERSION_MAJOR,
           MLSBA_VERSION_MINOR, MLSBA_VERSION_PATCH);
  ck_assert_str_eq(mlsba_version_string(), expect);
}
END_TEST

/* ---- 10: API holes -------------------------------------------------- */

START_TEST(api_holes_give_errors_not_crashes) {
  ck_assert_uint_eq(mlsba_platform_group_device(NULL, 0, 0), SIZE_MAX);
  mlsba_platform_t *pl = parse_ok(
      "{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
      "1]]}, {\"name\": \"b\", \"type\": \"sim\", \"speed\": [[1, 2]]}]}");
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 1, 0), 1);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 1, 1), SIZE_MAX);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, 2, 0), SIZE_MAX);
  ck_assert_uint_eq(mlsba_platform_group_device(pl, SIZE_MAX, 0), SIZE_MAX);

  /* Loads that sum past INT64_MAX: an error naming the sum, not UB. */
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("sum", 10, &w), 0);
  int64_t units[2] = {INT64_MAX, INT64_MAX};
  double time[2];
  long failed;
  ck_assert_int_eq(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, &failed),
      MLSBA_EINVAL);
  units[0] = 5;
  units[1] = INT64_MAX - 2;
  ck_assert_int_eq(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, &failed),
      MLSBA_EINVAL);
  mlsba_load_destroy(w);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);

  /* A load of INT64_MAX units is refused where it is made, naming 2^53. */
  ck_assert_int_eq(mlsba_load_create("huge", INT64_MAX, &w), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "2^53"));
  ck_assert_int_eq(mlsba_load_create("edge", INT64_C(1) << 53, &w), 0);
  mlsba_load_destroy(w);

  /* Mandelbrot rows from a height of 2^31: -1, no overflow. */
  mlsba_mandelbrot_t mb = {.width = 1, .height = INT64_C(1) << 31};
  ck_assert_int_eq(mlsba_mandelbrot_row(&mb, (INT64_C(1) << 31) - 1), -1);
  mb.height = INT64_MAX;
  ck_assert_int_eq(mlsba_mandelbrot_row(&mb, INT64_MAX - 1), -1);
  mb.height = (INT64_C(1) << 31) - 1;
  int64_t row = mlsba_mandelbrot_row(&mb, mb.height - 1);
  ck_assert(row >= 0 && row < mb.height);
}
END_TEST

/* ---- the one writer (lib/core/atomic_file.c) ------------------------- */

/* What every writer of the library goes through: a platform, a model and
 * the writer itself (the kernel cache and the left-out files call it). */
static const char *one_device =
    "{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": [[1, "
    "1]]}]}";

static int save_platform(const char *path) {
  mlsba_platform_t *pl = parse_ok(one_device);
  int err = mlsba_platform_save(pl, path);
  mlsba_platform_destroy(pl);
  return err;
}

static int save_model(const char *path) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 10, 5), 0);
  int err = mlsba_model_save(m, path, "k");
  mlsba_model_destroy(m);
  return err;
}

/* A device node of the scratch folder: a copy of /dev/null (1, 3),
 * /dev/full (1, 7) or a loop disk (block 7, 0), so that a writer that
 * replaces what it names breaks the copy, never the machine's node.
 * Without the right to make nodes (not root), the machine's own, which
 * the writer cannot replace then. 0, or -1 when there is neither. */
static int device_node(char *path, size_t size, const char *name, int block,
                       unsigned major, unsigned minor) {
  snprintf(path, size, "%s/%s", scratch, name);
  mode_t kind = block ? S_IFBLK : S_IFCHR;
  if (mknod(path, kind | 0666, makedev(major, minor)) == 0)
    return 0;
  if (geteuid() == 0 || block)
    return -1;
  snprintf(path, size, "/dev/%s", name);
  return 0;
}

static void expect_kind(const char *path, mode_t kind) {
  struct stat st;
  ck_assert_int_eq(lstat(path, &st), 0);
  ck_assert_msg((st.st_mode & S_IFMT) == kind, "%s is no longer what it was",
                path);
}

static void read_whole(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

START_TEST(a_device_is_written_through_never_replaced) {
  scratch_make();
  char null[128], full[128];
  ck_assert_int_eq(device_node(null, sizeof null, "null", 0, 1, 3), 0);
  ck_assert_int_eq(device_node(full, sizeof full, "full", 0, 1, 7), 0);
  ck_assert_msg(save_platform(null) == 0, "%s", mlsba_last_error());
  ck_assert_int_eq(save_model(null), 0);
  expect_kind(null, S_IFCHR);
  /* A full device: a clear error naming it and why; the node stays. */
  ck_assert_int_eq(save_platform(full), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), full));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), strerror(ENOSPC)));
  ck_assert_int_eq(save_model(full), MLSBA_EIO);
  expect_kind(full, S_IFCHR);
  /* A block device (a disk) is refused, never written. */
  char disk[128];
  if (device_node(disk, sizeof disk, "loop", 1, 7, 0) == 0) {
    ck_assert_int_eq(save_platform(disk), MLSBA_EIO);
    ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "block device"));
    expect_kind(disk, S_IFBLK);
  }
  scratch_remove();
}
END_TEST

/* What a FIFO holds now, read without waiting. */
static size_t drain(int fd, char *buf, size_t size) {
  size_t n = 0;
  ssize_t k;
  while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
    n += (size_t)k;
  buf[n] = '\0';
  return n;
}

/* A reader that leaves after its first bytes, while the writer has more
 * to give. */
static void *read_a_little(void *arg) {
  int fd = *(int *)arg;
  struct pollfd p = {fd, POLLIN, 0};
  char some[4096];
  if (poll(&p, 1, -1) == 1)
    (void)read(fd, some, sizeof some);
  close(fd);
  return NULL;
}

START_TEST(a_fifo_is_written_through_to_its_reader) {
  scratch_make();
  char fifo[128], got[8192];
  snprintf(fifo, sizeof fifo, "%s/fifo", scratch);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  /* A reader there: it gets the text (less than a pipe holds), the FIFO
   * stays a FIFO. */
  int fd = open(fifo, O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(fd, 0);
  ck_assert_msg(save_model(fifo) == 0, "%s", mlsba_last_error());
  drain(fd, got, sizeof got);
  close(fd);
  ck_assert_msg(strncmp(got, "mlsba-model 1\nkey k\n", 20) == 0, "%s", got);
  ck_assert_ptr_nonnull(strstr(got, "checksum "));
  expect_kind(fifo, S_IFIFO);
  /* No reader: an error after a bounded wait, not a hang (the test's
   * timeout fails a hang). */
  ck_assert_int_eq(save_model(fifo), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "no process opened"));
  expect_kind(fifo, S_IFIFO);
  /* A reader that leaves partway: an error, not a SIGPIPE that ends the
   * host program (fork mode would report the signal). */
  static char big[1 << 20];
  memset(big, 'x', sizeof big);
  fd = open(fifo, O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(fd, 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, read_a_little, &fd), 0);
  ck_assert_int_eq(mlsba__write_atomic(fifo, big, sizeof big), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), strerror(EPIPE)));
  pthread_join(t, NULL);
  expect_kind(fifo, S_IFIFO);
  scratch_remove();
}
END_TEST

START_TEST(a_symbolic_link_stays_and_its_target_gets_the_text) {
  scratch_make();
  char target[128], link[128], text[8192];
  snprintf(target, sizeof target, "%s/target.json", scratch);
  snprintf(link, sizeof link, "%s/link.json", scratch);
  FILE *f = fopen(target, "w");
  ck_assert_ptr_nonnull(f);
  fputs("old\n", f);
  fclose(f);
  ck_assert_int_eq(chmod(target, 0640), 0);
  ck_assert_int_eq(symlink("target.json", link), 0); /* relative */
  ck_assert_msg(save_platform(link) == 0, "%s", mlsba_last_error());
  expect_kind(link, S_IFLNK);
  read_whole(target, text, sizeof text);
  ck_assert_ptr_nonnull(strstr(text, "\"devices\""));
  /* The target was replaced whole, keeping its permissions. */
  struct stat st;
  ck_assert_int_eq(stat(target, &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0640);
  /* A chain of links to a file still to be made: made at the end. */
  char first[128], made[128];
  snprintf(first, sizeof first, "%s/first", scratch);
  snprintf(made, sizeof made, "%s/made.model", scratch);
  ck_assert_int_eq(symlink("second", first), 0);
  snprintf(text, sizeof text, "%s/second", scratch);
  ck_assert_int_eq(symlink(made, text), 0); /* absolute */
  ck_assert_msg(save_model(first) == 0, "%s", mlsba_last_error());
  expect_kind(first, S_IFLNK);
  expect_kind(text, S_IFLNK);
  expect_kind(made, S_IFREG);
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_load(first, "k", &m), 0);
  mlsba_model_destroy(m);
  /* A link to a folder is never written through. */
  char to_dir[128];
  snprintf(to_dir, sizeof to_dir, "%s/to-dir", scratch);
  ck_assert_int_eq(symlink("/tmp", to_dir), 0);
  ck_assert_int_eq(save_platform(to_dir), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "is a directory"));
  expect_kind(to_dir, S_IFLNK);
  scratch_remove();
}
END_TEST

/* The writer of caches (not synced) replaces a file whole as the synced
 * one does, keeps its mode and leaves no temporary file; what a crash
 * could leave of a model written so, a torn file, is refused on load. */
START_TEST(a_cache_file_is_replaced_whole_and_a_torn_one_refused) {
  scratch_make();
  char path[128], text[8192];
  snprintf(path, sizeof path, "%s/dev.model", scratch);
  ck_assert_msg(save_model(path) == 0, "%s", mlsba_last_error());
  ck_assert_int_eq(chmod(path, 0640), 0);
  read_whole(path, text, sizeof text);
  size_t whole = strlen(text);
  ck_assert_int_eq(mlsba__write_cache(path, text, whole / 2), 0);
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0640);
  ck_assert_int_eq((long long)st.st_size, (long long)(whole / 2));
  mlsba_model_t *m = NULL;
  ck_assert_int_ne(mlsba_model_load(path, "k", &m), 0);
  ck_assert_ptr_null(m);
  ck_assert_int_eq(mlsba__write_cache(path, text, whole), 0);
  ck_assert_int_eq(mlsba_model_load(path, "k", &m), 0);
  mlsba_model_destroy(m);
  DIR *d = opendir(scratch);
  ck_assert_ptr_nonnull(d);
  size_t files = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    files += e->d_name[0] != '.';
  closedir(d);
  ck_assert_uint_eq(files, 1);
  ck_assert_int_eq(mlsba__write_cache(scratch, "x", 1), MLSBA_EIO);
  scratch_remove();
}
END_TEST

START_TEST(a_directory_is_refused_and_checked_up_front) {
  scratch_make();
  char dir[128], file[128], missing[160];
  snprintf(dir, sizeof dir, "%s/sub", scratch);
  snprintf(file, sizeof file, "%s/new.json", scratch);
  snprintf(missing, sizeof missing, "%s/no/such.json", scratch);
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  ck_assert_int_eq(save_platform(dir), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "it is a directory"));
  expect_kind(dir, S_IFDIR);
  /* The check the tools make before anything runs says the same. */
  ck_assert_int_eq(mlsba__write_check(dir), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "it is a directory"));
  ck_assert_int_eq(mlsba__write_check(missing), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "folder does not exist"));
  ck_assert_int_eq(save_platform(missing), MLSBA_EIO);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "folder does not exist"));
  ck_assert_int_eq(mlsba__write_check(file), 0);
  ck_assert_int_eq(access(file, F_OK), -1); /* checked, not made */
  char null[128];
  ck_assert_int_eq(device_node(null, sizeof null, "null", 0, 1, 3), 0);
  ck_assert_int_eq(mlsba__write_check(null), 0);
  ck_assert_int_eq(mlsba__write_check(""), MLSBA_EIO);
  rmdir(dir);
  scratch_remove();
}
END_TEST

/* The even split equals dealing the n units out one at a time, part 0
 * first, round after round (the brute force): for no units, fewer units
 * than parts, exact multiples and every remainder; a part outside the
 * parts and no parts at all take nothing. */
START_TEST(the_even_split_deals_the_units_out_in_turn) {
  enum { MAX_PARTS = 9, MAX_N = 40 };
  for (int64_t parts = 1; parts <= MAX_PARTS; parts++)
    for (int64_t n = 0; n <= MAX_N; n++) {
      int64_t dealt[MAX_PARTS] = {0}, sum = 0;
      for (int64_t u = 0; u < n; u++)
        dealt[u % parts]++;
      for (int64_t k = 0; k < parts; k++) {
        ck_assert_msg(mlsba__even_share(n, parts, k) == dealt[k],
                      "n %lld, parts %lld, part %lld: %lld, dealt %lld",
                      (long long)n, (long long)parts, (long long)k,
                      (long long)mlsba__even_share(n, parts, k),
                      (long long)dealt[k]);
        sum += mlsba__even_share(n, parts, k);
      }
      ck_assert_int_eq(sum, n);
      ck_assert_int_eq(mlsba__even_share(n, parts, parts), 0);
      ck_assert_int_eq(mlsba__even_share(n, parts, -1), 0);
    }
  ck_assert_int_eq(mlsba__even_share(5, 0, 0), 0);
  ck_assert_int_eq(mlsba__even_share(-5, 2, 0), 0);
  /* Counts beyond 32 bits split without overflow. */
  int64_t big = ((int64_t)1 << 53) + 3;
  ck_assert_int_eq(mlsba__even_share(big, 4, 0), ((int64_t)1 << 51) + 1);
  ck_assert_int_eq(mlsba__even_share(big, 4, 3), (int64_t)1 << 51);
}
END_TEST

/* Large buffers: whole huge pages, aligned to one (the advice covers only
 * whole pages), every byte the caller's; small ones as malloc's; sizes
 * whose bytes overflow refused. */
START_TEST(a_large_buffer_is_aligned_to_a_huge_page_and_usable) {
  size_t sizes[] = {0,
                    1,
                    4096,
                    MLSBA__BIG_FROM - 1,
                    MLSBA__BIG_FROM,
                    5 * MLSBA__BIG_FROM / 2 + 3};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    size_t n = sizes[i];
    unsigned char *p = mlsba__big_alloc(n);
    ck_assert_ptr_nonnull(p);
    if (n >= MLSBA__BIG_FROM)
      ck_assert_uint_eq((uintptr_t)p % MLSBA__BIG_FROM, 0);
    memset(p, 0xa5, n);
    for (size_t j = 0; j < n; j += 4093)
      ck_assert_uint_eq(p[j], 0xa5);
    free(p);
  }
  ck_assert_ptr_null(mlsba__big_alloc(SIZE_MAX - 7));
}
END_TEST

START_TEST(a_large_zeroed_buffer_is_zero_and_overflow_is_refused) {
  /* A buffer written and freed first, so that a reused one would show
   * what calloc's promise hides. */
  size_t n = 3 * MLSBA__BIG_FROM / sizeof(double);
  double *dirty = mlsba__big_alloc(n * sizeof *dirty);
  ck_assert_ptr_nonnull(dirty);
  for (size_t j = 0; j < n; j++)
    dirty[j] = 1.5;
  free(dirty);
  double *z = mlsba__big_calloc(n, sizeof *z);
  ck_assert_ptr_nonnull(z);
  size_t nonzero = 0;
  for (size_t j = 0; j < n; j++)
    nonzero += z[j] != 0.0;
  ck_assert_uint_eq(nonzero, 0);
  free(z);
  ck_assert_ptr_null(mlsba__big_calloc(SIZE_MAX / 4, 8));
  void *none = mlsba__big_calloc(0, 8);
  ck_assert_ptr_nonnull(none);
  free(none);
}
END_TEST

static Suite *core_suite(void) {
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, every_code_has_a_distinct_name_and_text);
  tcase_add_test(tc, failing_call_leaves_a_message_naming_the_problem);
  tcase_add_test(tc, last_error_is_per_thread);
  suite_add_tcase(s, tc);
  tc = tcase_create("even split");
  tcase_add_test(tc, the_even_split_deals_the_units_out_in_turn);
  suite_add_tcase(s, tc);
  tc = tcase_create("large buffers");
  tcase_set_timeout(tc, 60); /* a first touch of huge pages may compact */
  tcase_add_test(tc, a_large_buffer_is_aligned_to_a_huge_page_and_usable);
  tcase_add_test(tc, a_large_zeroed_buffer_is_zero_and_overflow_is_refused);
  suite_add_tcase(s, tc);
  tc = tcase_create("version");
  tcase_add_test(tc, runtime_version_matches_header);
  suite_add_tcase(s, tc);
  TCase *tc_more = tcase_create("API holes");
  tcase_set_timeout(tc_more, 60);
  tcase_add_test(tc_more, api_holes_give_errors_not_crashes);
  suite_add_tcase(s, tc_more);
  tc = tcase_create("writer");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, a_device_is_written_through_never_replaced);
  tcase_add_test(tc, a_fifo_is_written_through_to_its_reader);
  tcase_add_test(tc, a_symbolic_link_stays_and_its_target_gets_the_text);
  tcase_add_test(tc, a_directory_is_refused_and_checked_up_front);
  tcase_add_test(tc, a_cache_file_is_replaced_whole_and_a_torn_one_refused);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(core_suite()); }
