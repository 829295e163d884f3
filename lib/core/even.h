/* The even split of a count between parts, as the layers above hand
 * columns or rows to the cores or the nodes that share them alike. */
#ifndef MLSBA_CORE_EVEN_H
#define MLSBA_CORE_EVEN_H

#include <stdint.h>

/* Part k's share when n units are split evenly between `parts`: n / parts
 * each and one more for each of the first n % parts, so that the shares
 * sum to n and differ by one at most. 0 for parts 0, for a part k outside
 * [0, parts) and for n <= 0, so that a caller's loop over parts that
 * takes none hands nothing out. */
int64_t mlsba__even_share(int64_t n, int64_t parts, int64_t k);

#endif
