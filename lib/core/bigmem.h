/* Memory for large operands: buffers of megabytes that the library fills
 * or computes into soon after it takes them. */
#ifndef MLSBA_CORE_BIGMEM_H
#define MLSBA_CORE_BIGMEM_H

#include <stddef.h>

/* bytes of memory (at least one), or NULL; freed with free(). From
 * MLSBA__BIG_FROM bytes on, aligned to a huge page and advised to the
 * kernel as huge-page memory: a first touch of 4 KiB pages costs a fault
 * per page, about 20 us each in the 2-core VM the project is measured on
 * (0.28-0.37 s for 64 MiB, 70 times the memset itself), and a product's
 * first step paid that inside its timed compute. Where the kernel gives
 * no huge pages, the memory is still the caller's, as malloc's is. */
void *mlsba__big_alloc(size_t bytes);

/* As mlsba__big_alloc, for n elements of size bytes, zeroed; NULL when
 * n * size overflows. */
void *mlsba__big_calloc(size_t n, size_t size);

/* The size from which mlsba__big_alloc asks for huge pages: one huge
 * page of x86-64. */
#define MLSBA__BIG_FROM ((size_t)2 << 20)

#endif
