#include "scratch.h"

#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

char scratch[64];

void scratch_make(void) {
  snprintf(scratch, sizeof scratch, "/tmp/mlsba-test-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(scratch));
}

void scratch_remove(void) {
  DIR *d = opendir(scratch);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.'))
      unlinkat(dirfd(d), e->d_name, 0);
  if (d)
    closedir(d);
  rmdir(scratch);
}

FILE *scratch_create(const char *name, char *path, size_t size) {
  scratch_make();
  snprintf(path, size, "%s/%s", scratch, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  return f;
}

mlsba_platform_t *parse_ok(const char *json) {
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_parse(json, "test", &pl) == 0, "%s",
                mlsba_last_error());
  return pl;
}
