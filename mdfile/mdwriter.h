/*
 * The writer side of the metadata file (RFC 3.5.2.1): owns the published
 * index, the metadata file's space (space.h) and the sinks -- the metadata
 * file itself and/or a sequence of updater files.
 *
 * Invariants:
 *  - Every publish writes the new images, then the index, then the header
 *    (plan.h); an index never names space that is free or that holds
 *    anything but the image it names.
 *  - Space an index stops naming (superseded images, a relocated index) is
 *    deferred with the publishing tick and reused only max_lag ticks later.
 *  - Ticks strictly increase by one per publish; tick 0 is the empty index
 *    written when the file is created.
 */
#ifndef VFDSWMR_MDFILE_MDWRITER_H
#define VFDSWMR_MDFILE_MDWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct vfdswmr_mdw_opts_t {
    uint32_t page_size;       /* power of two, VFDSWMR_MIN_PAGE_SIZE..VFDSWMR_MAX_PAGE_SIZE */
    uint32_t reserved_pages;  /* md_pages_reserved, >= 1 */
    uint32_t max_lag;         /* >= 3 */
    const char *md_path;      /* the metadata file; NULL: do not maintain one */
    const char *ud_base;      /* updater files <ud_base>.<n>; NULL: none */
    uint32_t ud_keep_ticks;   /* delete an updater file once the current tick is this many
                                 past the tick it carries; 0: keep them all */
    bool durable;             /* fsync so a crash never leaves a header naming unwritten data */
    uint64_t session;         /* 0: draw a random session identifier */
} vfdswmr_mdw_opts_t;

/* A page or multi-page entry that changed in this tick. */
typedef struct vfdswmr_mdchange_t {
    uint64_t hdf5_page;
    uint32_t length;          /* bytes, >= 1 */
    const void *image;
} vfdswmr_mdchange_t;

typedef struct vfdswmr_mdw vfdswmr_mdw_t;

#define VFDSWMR_MDW_ERRLEN 512

/*
 * Create the metadata file (it must not exist: another writer may be
 * active) with tick 0 and an empty index, made visible only once whole, and
 * the first updater files (sequence 0 CREATE_ONLY, sequence 1 with tick 0).
 * Returns 0, or -1 with a message in err.
 */
int vfdswmr_mdw_open(const vfdswmr_mdw_opts_t *opts, vfdswmr_mdw_t **out, char *err, size_t errlen);

/* Flags of vfdswmr_mdw_publish(). */
#define VFDSWMR_MDW_FINAL 0x1u /* the last publish: its updater carries FINAL_UPDATE */

/*
 * Publish tick (current + 1): `changes` (sorted by hdf5_page, not
 * overlapping) replace whatever the index named in their HDF5 pages;
 * `removals` (sorted hdf5_page values of entries to drop; unknown ones are
 * ignored) leave the index. `eoa` is recorded in the header. Then expired
 * deferred space is released and the metadata file shrunk when possible.
 * Returns 0, or -1 with vfdswmr_mdw_error() telling why; after a failed
 * publish the writer must be closed.
 */
int vfdswmr_mdw_publish(vfdswmr_mdw_t *w, uint64_t eoa, const vfdswmr_mdchange_t *changes, size_t nchanges,
                        const uint64_t *removals, size_t nremovals, unsigned flags);

/* Close; unlink the metadata file unless keep_md. Returns 0 or -1. */
int vfdswmr_mdw_close(vfdswmr_mdw_t *w, bool keep_md);

const char *vfdswmr_mdw_error(const vfdswmr_mdw_t *w);
uint64_t vfdswmr_mdw_tick(const vfdswmr_mdw_t *w);
uint64_t vfdswmr_mdw_session(const vfdswmr_mdw_t *w);
/* The published index (sorted by hdf5_page); valid until the next publish. */
const vfdswmr_mdentry_t *vfdswmr_mdw_index(const vfdswmr_mdw_t *w, uint32_t *n);
/* Pages the metadata file occupies now; whether the index is relocated. */
uint64_t vfdswmr_mdw_file_pages(const vfdswmr_mdw_t *w);
bool vfdswmr_mdw_index_relocated(const vfdswmr_mdw_t *w);
/* The next updater sequence number. */
uint64_t vfdswmr_mdw_next_sequence(const vfdswmr_mdw_t *w);

#endif
