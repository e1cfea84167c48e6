/*
 * Growing an array: the one capacity-doubling realloc of the writer's
 * buffers (page buffer, kept-on-disk entries).
 *
 * Invariant: on success *cap >= need and *arr holds *cap elements, its
 * first old-*cap ones unchanged; on failure nothing changed.
 *
 * Error contract: 0, or -1 (out of memory, or need * elem overflows);
 * nothing is printed.
 */
#ifndef VFDSWMR_COMMON_GROW_H
#define VFDSWMR_COMMON_GROW_H

#include <stddef.h>

/* Make *arr (of *cap elements of elem bytes) hold at least `need`: doubles
 * from 16, or from *cap. */
int vfdswmr_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
