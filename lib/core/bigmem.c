/* Huge-page advice for large buffers (bigmem.h). With the kernel's
 * transparent huge pages in "madvise" mode (Debian's and this VM's
 * default), only memory advised with MADV_HUGEPAGE gets them: 2 MiB a
 * fault instead of 4 KiB, and fewer TLB misses for the GEMM kernels that
 * stream these buffers. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *mlsba__big_alloc(size_t bytes) {
  if (bytes < MLSBA__BIG_FROM)
    return malloc(bytes ? bytes : 1);
  /* Whole huge pages, so that the advice covers every byte handed out
   * and no other allocation shares a huge page with this one. */
  size_t page = MLSBA__BIG_FROM;
  if (bytes > SIZE_MAX - (page - 1))
    return NULL;
  size_t rounded = (bytes + page - 1) / page * page;
  void *p = NULL;
  if (posix_memalign(&p, page, rounded) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  /* Advice only: a kernel without transparent huge pages refuses it, and
   * the memory is then what malloc would have given. */
  (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void *mlsba__big_calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size)
    return NULL;
  void *p = mlsba__big_alloc(n * size);
  if (p != NULL)
    memset(p, 0, n * size);
  return p;
}
