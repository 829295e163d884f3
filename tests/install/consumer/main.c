/* An application outside the tree, built against the installed package. */
#include <mlsba.h>
#include <stdio.h>

int main(void) {
  if (mlsba_version() != MLSBA_VERSION_HEX) {
    fprintf(stderr, "header 0x%06x does not match the linked library %s\n",
            (unsigned)MLSBA_VERSION_HEX, mlsba_version_string());
    return 1;
  }
  mlsba_model_t *slow = NULL, *fast = NULL;
  if (mlsba_model_create(&slow) || mlsba_model_create(&fast) ||
      mlsba_model_set_point(slow, 100, 10) ||
      mlsba_model_set_point(fast, 100, 30)) {
    fprintf(stderr, "model: %s\n", mlsba_last_error());
    return 1;
  }
  const mlsba_model_t *models[] = {slow, fast};
  int64_t loads[2];
  int err = mlsba_partition_slba(models, 2, 1000, loads);
  printf("libmlsba %s: %s, loads %lld + %lld\n", mlsba_version_string(),
         mlsba_strerror(err), (long long)loads[0], (long long)loads[1]);
  mlsba_model_destroy(slow);
  mlsba_model_destroy(fast);
  return err == 0 && loads[0] == 250 && loads[1] == 750 ? 0 : 1;
}
