/*
 * Page-granular space management of the metadata file.
 *
 * The file is a sequence of pages. Pages [0, reserved) always belong to the
 * header and the index. Every other page is in exactly one of three states:
 * allocated (holds an image some index may name), deferred (superseded, but a
 * reader up to max_lag ticks behind may still read it), or free. Free space
 * is kept coalesced; a free run that reaches the end of the file is dropped,
 * so the file shrinks. Deferred space becomes free only once
 * tick >= tagged tick + max_lag.
 *
 * Error contract: functions return 0, or -1 for the causes each states
 * (bad argument, out of memory, overflow); nothing is printed.
 */
#ifndef VFDSWMR_MDFILE_SPACE_H
#define VFDSWMR_MDFILE_SPACE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct vfdswmr_space vfdswmr_space_t;

/* NULL when out of memory or reserved_pages == 0. */
vfdswmr_space_t *vfdswmr_space_new(uint64_t reserved_pages);
void vfdswmr_space_destroy(vfdswmr_space_t *s);

/* Allocate npages (>= 1) contiguous pages: the lowest-addressed free run that
 * is large enough, else at the end of the file. Returns 0 and sets *page, or
 * -1 (npages == 0, out of memory, or the page number would overflow).
 * Allocating, freeing and deferring take O(log n) for n free runs. */
int vfdswmr_space_alloc(vfdswmr_space_t *s, uint64_t npages, uint64_t *page);

/* Return allocated pages at once (e.g. an image never published).
 *
 * Invalid ranges are ignored and leave the state unchanged: npages == 0, a
 * range that overlaps the reserved pages, reaches past the end of the file,
 * or overlaps free pages. Allocated pages are not recorded, so freeing pages
 * that are deferred is not detected (vfdswmr_space_check() reports the
 * overlap; an invariant build aborts). When out of memory the pages stay
 * allocated: a leak, never a premature reuse. */
void vfdswmr_space_free(vfdswmr_space_t *s, uint64_t page, uint64_t npages);

/* Put allocated pages on the delayed-free list, tagged with `tick` (the tick
 * whose index no longer names them). Returns 0, or -1 when out of memory
 * (the pages then stay allocated: a leak, never a premature reuse) or when
 * the range is invalid as for vfdswmr_space_free() (then nothing changes).
 *
 * Tags never decrease along the list: a tick smaller than the newest tag on
 * the list is stored as that newest tag, so such pages are released later
 * than asked, never earlier. */
int vfdswmr_space_defer(vfdswmr_space_t *s, uint64_t page, uint64_t npages, uint64_t tick);

/* Free every deferred run whose tag + max_lag <= current_tick (computed
 * without overflow). Returns the number of pages released. */
uint64_t vfdswmr_space_release(vfdswmr_space_t *s, uint64_t current_tick, uint32_t max_lag);

/* Whether pages [page, page + npages) are all allocated: npages >= 1, none
 * reserved, free or deferred, none at or past the end of the file (for
 * assertions: O(log n) plus the deferred runs). */
bool vfdswmr_space_allocated(const vfdswmr_space_t *s, uint64_t page, uint64_t npages);

/* Pages the file must have: one past the last page that is reserved,
 * allocated or deferred. */
uint64_t vfdswmr_space_eof(const vfdswmr_space_t *s);
uint64_t vfdswmr_space_free_pages(const vfdswmr_space_t *s);
uint64_t vfdswmr_space_deferred_pages(const vfdswmr_space_t *s);
uint64_t vfdswmr_space_reserved_pages(const vfdswmr_space_t *s);

/* For tests and the invariant builds, which run it after every change and
 * abort on a defect (common/check.h): NULL when every invariant holds, else
 * what is broken. Checks that free runs are sorted, coalesced, disjoint
 * from each other, from the reserved pages and from deferred runs, that
 * none touches the end of the file, that the counters match the lists and
 * that deferred tags never decrease from oldest to newest. O(n log n). */
const char *vfdswmr_space_check(const vfdswmr_space_t *s);

#endif
