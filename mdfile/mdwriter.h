/*
 * The writer side of the metadata file (docs/DESIGN.md section 5): owns the published
 * index, the metadata file's space (space.h) and the sinks -- the metadata
 * file itself and/or a sequence of updater files.
 *
 * Invariants:
 *  - Every publish writes the new images, then the index, then the header
 *    (plan.h); an index never names space that is free or that holds
 *    anything but the image it names.
 *  - Space an index stops naming (superseded images, a relocated index) is
 *    deferred with the publishing epoch and reused only by a publish after
 *    one whose epoch is max_lag (or the keep lag) later.
 *  - The index the metadata file's current header names is never
 *    overwritten: an index that fits goes to the reserved-page slot the
 *    current header does not name (ping-pong, format.h), a larger one to
 *    freshly allocated pages. So a writer killed between index and header
 *    leaves the previous snapshot whole.
 *  - Ticks strictly increase by one per publish; tick 0 is the empty index
 *    written when the file is created. Epochs never decrease and never
 *    pass the tick.
 *
 * Error contract: a function that fails returns -1 and writes a one-line
 * English message into the caller's err[errlen] (NUL-terminated, truncated
 * to fit; nothing is written when err is NULL or errlen is 0). The writer
 * keeps no error text of its own. After a failed vfdswmr_mdw_publish() the
 * writer only accepts vfdswmr_mdw_mark_failed(), the accessors and
 * vfdswmr_mdw_close().
 */
#ifndef VFDSWMR_MDFILE_MDWRITER_H
#define VFDSWMR_MDFILE_MDWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"

typedef struct vfdswmr_mdw_opts_t {
    uint32_t page_size;      /* power of two, VFDSWMR_MIN_PAGE_SIZE..VFDSWMR_MAX_PAGE_SIZE */
    uint32_t reserved_pages; /* md_pages_reserved, >= 1 */
    uint32_t max_lag;        /* >= 3 */
    const char *md_path;     /* the metadata file; NULL: do not maintain one */
    const char *ud_base;     /* updater files <ud_base>.<n>; NULL: none */
    /* delete an updater file once the current tick is this many past the
     * tick it carries; 0: keep them all */
    uint32_t ud_keep_ticks;
    /* leave the metadata file nameless until vfdswmr_mdw_link(), and hold the
     * first updater files back until vfdswmr_mdw_go_live() */
    bool defer_link;
    bool durable;      /* fsync so a crash never leaves a header naming unwritten data */
    uint64_t session;  /* 0: draw a random session identifier */
    uint32_t tick_len; /* the writer's tick length in tenths of a second, recorded in every header */
    uint64_t hdf5_id;  /* st_ino of the HDF5 file (0: unknown), recorded in every header */
} vfdswmr_mdw_opts_t;

/* A page or multi-page entry that changed in this tick. */
typedef struct vfdswmr_mdchange_t {
    uint64_t hdf5_page;
    uint32_t length; /* bytes, >= 1 */
    const void *image;
    /* metadata bytes of the image: sorted, disjoint, each of length >= 1 and
     * inside the image; copied, so valid only during the call */
    const vfdswmr_mdrange_t *ranges;
    uint32_t nranges; /* 0: no byte of the image is known to be metadata (ranges may be NULL) */
} vfdswmr_mdchange_t;

typedef struct vfdswmr_mdw vfdswmr_mdw_t;

#define VFDSWMR_MDW_ERRLEN 512

/*
 * Create the metadata file with tick 0 and an empty index under a temporary
 * name, holding its writer lock (mdlock.h), and the first updater files
 * (sequence 0 CREATE_ONLY, sequence 1 with tick 0), then gives it its name
 * (vfdswmr_mdw_link without replace) -- or, with opts->defer_link, leaves
 * that to the caller. Returns 0, or -1 with a message in err.
 */
int vfdswmr_mdw_open(const vfdswmr_mdw_opts_t *opts, vfdswmr_mdw_t **out, char *err, size_t errlen);

/*
 * Give the metadata file its name, atomically: link(2), which fails when the
 * name exists (another writer: the message says so), or with `replace`,
 * rename(2) over the file there (a crashed writer's, whose lock the caller
 * holds). A no-op without a metadata file. Returns 0, or -1 with err.
 */
int vfdswmr_mdw_link(vfdswmr_mdw_t *w, bool replace, char *err, size_t errlen);

/* Keep superseded space `lag` ticks instead of max_lag (never fewer) from
 * the next publish on: readers registered with read marks (marks.h) may
 * hold older snapshots than max_lag allows. */
void vfdswmr_mdw_set_keep_lag(vfdswmr_mdw_t *w, uint32_t lag);
/* The epoch (format.h) of the publishes from the next on. Never smaller
 * than the last one published, never past the tick a publish gets. Without
 * a call, each publish's epoch is its tick (every publish ends a tick). */
void vfdswmr_mdw_set_epoch(vfdswmr_mdw_t *w, uint64_t epoch);

/* The metadata file's identity (device, inode): 0, or -1 without one. */
int vfdswmr_mdw_file_id(const vfdswmr_mdw_t *w, dev_t *dev, ino_t *ino);

/* With defer_link: the open has succeeded, write the updater files held
 * back since vfdswmr_mdw_open(). Returns 0, or -1 with err. */
int vfdswmr_mdw_go_live(vfdswmr_mdw_t *w, char *err, size_t errlen);

/* The HDF5 file's identity recorded in every header from the next publish
 * on, and at once in tick 0's header while that is the metadata file's
 * (the HDF5 file's record of its session is followed only to a header
 * naming it: sessname.h). 0, or -1 with errno. */
int vfdswmr_mdw_set_hdf5_id(vfdswmr_mdw_t *w, uint64_t hdf5_id);

/* Flags of vfdswmr_mdw_publish(). */
/* The last publish: its header carries VFDSWMR_MDHDR_FINAL and its updater
 * VFDSWMR_UD_FINAL; the caller makes its index empty. */
#define VFDSWMR_MDW_FINAL 0x1u

/*
 * Publish tick (current + 1): `changes` (sorted by hdf5_page, not
 * overlapping) replace whatever the index named in their HDF5 pages, their
 * ranges with them; `removals` (sorted hdf5_page values of entries to drop;
 * unknown ones are ignored) leave the index. `eoa` is recorded in the header.
 * Then expired deferred space is released and the metadata file shrunk when
 * possible. Returns 0, or -1 with a message in err.
 */
int vfdswmr_mdw_publish(vfdswmr_mdw_t *w, uint64_t eoa, const vfdswmr_mdchange_t *changes, size_t nchanges,
                        const uint64_t *removals, size_t nremovals, unsigned flags, char *err, size_t errlen);

/*
 * Tell readers the writer stopped publishing: rewrite the metadata file's
 * current header in place with VFDSWMR_MDHDR_FAILED set -- same tick, same
 * index, one 72-byte pwrite at offset 0, then fdatasync when durable. The
 * current header is the last one a publish wrote whole (after a publish that
 * failed while writing its header, that is the previous tick's). A no-op
 * without a metadata file, and when the header already says FINAL or FAILED.
 * Returns 0, or -1 with a message in err.
 */
int vfdswmr_mdw_mark_failed(vfdswmr_mdw_t *w, char *err, size_t errlen);

/* Close and free w (even on failure), which releases the writer lock;
 * remove the metadata file unless keep_md (and only while its name still
 * refers to this writer's file; a file never linked is always removed).
 * Returns 0, or -1 with a message in err. */
int vfdswmr_mdw_close(vfdswmr_mdw_t *w, bool keep_md, char *err, size_t errlen);

/* A fork child's copy (common/forked.h): close the child's descriptor of the
 * metadata file and nothing else (the parent's lock stays, on its own).
 * Async-signal-safe. */
void vfdswmr_mdw_forget(vfdswmr_mdw_t *w);

uint64_t vfdswmr_mdw_tick(const vfdswmr_mdw_t *w);
uint64_t vfdswmr_mdw_session(const vfdswmr_mdw_t *w);
/* The published index (sorted by hdf5_page) and its ranges (entry e's are
 * ranges[e->range_first .. + e->nranges)); valid until the next publish. */
const vfdswmr_mdentry_t *vfdswmr_mdw_index(const vfdswmr_mdw_t *w, uint32_t *n);
const vfdswmr_mdrange_t *vfdswmr_mdw_ranges(const vfdswmr_mdw_t *w, uint32_t *n);
/* The header last written whole to the metadata file (or that would have
 * been, without one). */
const vfdswmr_mdhdr_t *vfdswmr_mdw_header(const vfdswmr_mdw_t *w);
/* Pages the metadata file occupies now; whether the index is relocated
 * (in body pages rather than a reserved-page slot). */
uint64_t vfdswmr_mdw_file_pages(const vfdswmr_mdw_t *w);
bool vfdswmr_mdw_index_relocated(const vfdswmr_mdw_t *w);
/* The next updater sequence number. */
uint64_t vfdswmr_mdw_next_sequence(const vfdswmr_mdw_t *w);

#endif
