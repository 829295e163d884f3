/* Replays inputs through a fuzz target without libFuzzer: every file named
 * on the command line, or every file of every directory named. The seed
 * corpora and every crash the fuzzers ever found (tests/fuzz/corpus) run
 * this way in the ordinary test suite, with any compiler. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  static uint8_t buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n); /* a failure aborts: the test fails */
  return 0;
}

int main(int argc, char **argv) {
  int bad = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
          continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
        bad += replay_file(path);
        files++;
      }
      if (d)
        closedir(d);
    } else {
      bad += replay_file(argv[i]);
      files++;
    }
  }
  printf("replayed %d inputs\n", files);
  return bad || files == 0;
}
