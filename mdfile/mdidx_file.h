/*
 * A metadata file's index read in place: checked whole, exactly as
 * vfdswmr_mdidx_decode checks an image in memory (the same pieces of the one
 * codec, format.h), but a window at a time, and then read entry by entry and
 * range by range from the file. Memory is two windows (2 x 64 KiB) whatever
 * the index's size: crash recovery (common/recover.c) must not need memory
 * in proportion to the snapshot, nor let an index's stated counts decide
 * what it allocates (docs/DESIGN.md, "Crash recovery").
 *
 * An index in memory (a reader's adopted snapshot) can be wrapped in the
 * same interface, so the code that walks an index is written once.
 *
 * Invariant: after vfdswmr_mdidx_file_open succeeded, every entry and range
 * the accessors return passed the checks of vfdswmr_mdidx_decode when the
 * index was opened, and again its own field checks when read (the caller
 * holds the metadata file's writer lock, so the bytes do not change; a read
 * that fails or no longer checks is EIO).
 *
 * Error contract: open returns a vfdswmr_mderr_t (EIO with errno); the
 * accessors return 0, or -1 with errno.
 */
#ifndef VFDSWMR_MDFILE_MDIDX_FILE_H
#define VFDSWMR_MDFILE_MDIDX_FILE_H

#include <stdint.h>

#include "format.h"

typedef struct vfdswmr_mdidx_file_t {
    vfdswmr_mdidx_t head;       /* session, tick, nentries, nranges (entries, ranges NULL) */
    const vfdswmr_mdidx_t *mem; /* wrapped: the index in memory; else NULL */
    int fd;                     /* the metadata file (in place) */
    uint64_t offset, length;    /* of the index image in it */
    uint32_t page_size;
    /* where vfdswmr_mdidx_file_open found an entry or range invalid: the
     * entry (UINT32_MAX: none, or the fault lay elsewhere) and the offset
     * in the image of the 32 or 8 bytes it decoded (vfd_swmr_inspect) */
    uint32_t bad_entry;
    uint64_t bad_at;
    uint8_t *win[2];    /* windows on the image: entries, ranges */
    uint64_t win_at[2]; /* image offset of each window's first byte */
    size_t win_len[2];  /* valid bytes in each */
} vfdswmr_mdidx_file_t;

/* Check the index the header h names in the metadata file on fd (a header
 * that vfdswmr_mdhdr_decode accepted), as vfdswmr_mdidx_decode would:
 * VFDSWMR_MD_OK, its error, EBOUNDS when the image does not lie inside the
 * file, ENOMEM, or EIO (errno). Always pair with vfdswmr_mdidx_file_close. */
vfdswmr_mderr_t vfdswmr_mdidx_file_open(vfdswmr_mdidx_file_t *f, int fd, const vfdswmr_mdhdr_t *h);

/* The same interface over an index already decoded in memory. */
void vfdswmr_mdidx_file_wrap(vfdswmr_mdidx_file_t *f, const vfdswmr_mdidx_t *idx, uint32_t page_size);

/* Entry i < head.nentries. */
int vfdswmr_mdidx_file_entry(vfdswmr_mdidx_file_t *f, uint32_t i, vfdswmr_mdentry_t *e);

/* Range k < e->nranges of entry e (one this index returned). */
int vfdswmr_mdidx_file_range(vfdswmr_mdidx_file_t *f, const vfdswmr_mdentry_t *e, uint32_t k, vfdswmr_mdrange_t *r);

/* The entry whose HDF5 range covers `page`: 1 (in *e), 0 none, -1. O(log n)
 * reads. */
int vfdswmr_mdidx_file_find(vfdswmr_mdidx_file_t *f, uint64_t page, vfdswmr_mdentry_t *e);

void vfdswmr_mdidx_file_close(vfdswmr_mdidx_file_t *f);

#endif
