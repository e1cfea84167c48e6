/*
 * The shared raw-data chunk cache: one per open file, shared by all its
 * datasets (docs/DESIGN.md section 8a). It holds *images*: byte ranges
 * of the file exactly as the file holds them for this process, so that
 * correctness never depends on which dataset an entry is attributed to --
 * attribution only steers eviction and statistics.
 *
 * Invariants (vfdswmr_cc_check verifies them; tests call it after every
 * mutation, and invariant builds after every call that changes the cache,
 * aborting on a defect: common/check.h):
 *   C1 entries never overlap; each has 0 < len <= limits.max_entry;
 *   C2 every entry is on exactly one dataset's LRU list, and each
 *      dataset's byte count is the sum of its entries' lengths;
 *   C3 the cache's byte count is the sum over datasets, and <= limits.size
 *      after every call returns;
 *   C4 a dataset with no entries, no registered chunks, no statistics and
 *      default settings may be forgotten (datasets stay bounded).
 *
 * Eviction (when an insertion needs room): two-stage LRU. The least
 * recently used dataset gives up entries from the tail of its own LRU list
 * until enough room is free or it is down to its minimum retention
 * (limits.dset_min, or its own vfdswmr_cc_set_dset minimum); an entry
 * marked partial (only part of it was asked for when it was loaded) that
 * reaches the tail for the first time gets a second chance: it moves to the
 * head instead, unmarked. A dataset at its minimum is set aside (exhausted)
 * and the next least recently used dataset continues. If every dataset is
 * exhausted and room is still short, a second pass evicts in the same order
 * ignoring the minimums: the budget is a hard limit.
 *
 * Not thread-safe: the caller serialises calls.
 *
 * Error contract: functions return 0 / 1 (as documented) or -1 with errno
 * set (ENOMEM only); no function prints.
 */
#ifndef VFDSWMR_CHUNK_CACHE_CACHE_H
#define VFDSWMR_CHUNK_CACHE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A dataset: its object header address; VFDSWMR_CC_ANON when unknown. */
#define VFDSWMR_CC_ANON UINT64_MAX
/* vfdswmr_cc_stats: the whole file */
#define VFDSWMR_CC_ALL (UINT64_MAX - 1)

typedef struct vfdswmr_cc vfdswmr_cc_t;

typedef struct vfdswmr_cc_limits {
    size_t size;      /* budget in bytes of images; 0: nothing is cached */
    size_t max_entry; /* largest image cached */
    size_t dset_min;  /* default per-dataset minimum retention */
} vfdswmr_cc_limits_t;

typedef struct vfdswmr_cc_stats {
    uint64_t lookups;       /* vfdswmr_cc_lookup calls */
    uint64_t hits;          /* ... served from the cache */
    uint64_t misses;        /* ... not (lookups = hits + misses) */
    uint64_t bytes_served;  /* bytes copied out on hits */
    uint64_t bytes_loaded;  /* bytes inserted */
    uint64_t insertions;    /* entries inserted */
    uint64_t evictions;     /* entries removed for room or by an evict call */
    uint64_t invalidations; /* entries removed because the file changed under them
                               (vfdswmr_cc_invalidate, truncate, an overlapping insert) */
    uint64_t updates;       /* entries whose bytes a write replaced (vfdswmr_cc_update) */
    uint64_t entries;       /* now: entries held */
    uint64_t bytes;         /* now: bytes held */
} vfdswmr_cc_stats_t;
/* Identity: from an empty cache with zeroed statistics,
 * insertions = entries + evictions + invalidations, per dataset and file-wide. */

typedef struct vfdswmr_cc_chunk {
    uint64_t addr;
    uint64_t size;
} vfdswmr_cc_chunk_t;

/* The defaults for a budget: max_entry = size / 4 (at least 1 byte when
 * size > 0), dset_min = min(10 MiB, size / 16). */
vfdswmr_cc_limits_t vfdswmr_cc_default_limits(size_t size);

vfdswmr_cc_t *vfdswmr_cc_new(const vfdswmr_cc_limits_t *limits); /* NULL: ENOMEM */
void vfdswmr_cc_free(vfdswmr_cc_t *c);
/* New limits: entries longer than max_entry are evicted, then LRU eviction
 * down to the new size. */
int vfdswmr_cc_set_limits(vfdswmr_cc_t *c, const vfdswmr_cc_limits_t *limits);
void vfdswmr_cc_get_limits(const vfdswmr_cc_t *c, vfdswmr_cc_limits_t *limits);

/*
 * A read of [addr, addr + len), attributed to `dset` (used for statistics of
 * a miss; a hit counts for the entry's dataset). 1: the range lies inside
 * one entry; its bytes are copied to buf, the entry and its dataset become
 * most recently used. 0: a miss (nothing copied). len 0 is a miss.
 */
int vfdswmr_cc_lookup(vfdswmr_cc_t *c, uint64_t dset, uint64_t addr, size_t len, void *buf);

/*
 * Insert the image of [addr, addr + len) as the file holds it now,
 * attributed to dset; `partial`: the caller asked for only part of it.
 * Entries overlapping the range are removed first (invalidations). 1
 * inserted (most recently used), 0 not cached (len 0, len > max_entry,
 * budget 0, or a no-cache dataset), -1 ENOMEM (the cache is unchanged
 * except for removed overlapping entries).
 */
int vfdswmr_cc_insert(vfdswmr_cc_t *c, uint64_t dset, uint64_t addr, size_t len, const void *img, bool partial);

/* Would an entry of len bytes for dset be kept (insert, but for the
 * address: its size within the limits, dset not set to no-cache)? */
bool vfdswmr_cc_keeps(const vfdswmr_cc_t *c, uint64_t dset, size_t len);

/* The file's bytes [addr, addr + len) are now `buf`: every entry
 * overlapping the range takes them (write-through coherence). */
void vfdswmr_cc_update(vfdswmr_cc_t *c, uint64_t addr, size_t len, const void *buf);
/* The file's bytes in [addr, addr + len) are unknown: remove every entry
 * overlapping the range. len UINT64_MAX - addr or more: to the end. */
void vfdswmr_cc_invalidate(vfdswmr_cc_t *c, uint64_t addr, uint64_t len);
/* The file ends at eof: remove every entry reaching past it. */
void vfdswmr_cc_truncate(vfdswmr_cc_t *c, uint64_t eof);

/* Remove every entry of dset (evictions); VFDSWMR_CC_ALL: of all datasets. */
void vfdswmr_cc_evict(vfdswmr_cc_t *c, uint64_t dset);

/* Per-dataset settings: its minimum retention (SIZE_MAX: back to the
 * default) and whether it is cached at all (nocache evicts its entries). */
int vfdswmr_cc_set_dset(vfdswmr_cc_t *c, uint64_t dset, size_t min, bool nocache);

/*
 * The chunk map of dset (e.g. from H5Dchunk_iter): replaces what was
 * registered for dset; n 0 forgets it. Chunks of different datasets may not
 * overlap: a registered chunk overlapping another dataset's removes that
 * one. Registration changes no entry.
 */
int vfdswmr_cc_register(vfdswmr_cc_t *c, uint64_t dset, const vfdswmr_cc_chunk_t *chunks, size_t n);
/* The registered chunk containing all of [addr, addr + len): 1 with *dset
 * and *chunk filled, 0 none. */
int vfdswmr_cc_find_chunk(const vfdswmr_cc_t *c, uint64_t addr, size_t len, uint64_t *dset, vfdswmr_cc_chunk_t *chunk);

/* Statistics of one dataset, or VFDSWMR_CC_ALL for the file (all zero for
 * a dataset never seen). */
void vfdswmr_cc_stats(const vfdswmr_cc_t *c, uint64_t dset, vfdswmr_cc_stats_t *out);
/* Zero every counter (entries and bytes are not counters). */
void vfdswmr_cc_reset_stats(vfdswmr_cc_t *c);

/* Check C1-C3; 0 holds, -1 broken (for tests and the assertion builds). */
int vfdswmr_cc_check(const vfdswmr_cc_t *c);

#endif
