/*
 * The writer's page buffer: the paged snapshot of everything HDF5 wrote as
 * metadata, and the state that decides when each page may be published,
 * written to the HDF5 file, and dropped from the index (docs/DESIGN.md
 * section 6).
 *
 * Every tracked page has up to three images:
 *   cur   the writer's current bytes (reads on the writer see them); kept
 *         while the page is tracked, also once the HDF5 file holds exactly
 *         these bytes, so a page HDF5 writes again is not read back from
 *         the file (the page leaves with its index entry);
 *   snap  a copy of cur taken at the last consistency point, waiting for
 *         the next publish; NULL when none is waiting;
 *   pub   the image last published, until it has been written to the HDF5
 *         file.
 * and, while a publish is under way (between vfdswmr_pb_prepare() and
 * vfdswmr_pb_published()), two more:
 *   fly   the snap image handed to that publish: another thread reads it
 *         while writing the metadata file, so nothing here writes or frees
 *         it until published();
 *   fix   fly plus raw data written over the page since prepare(); it
 *         becomes pub instead of fly, so a later write of pub never puts
 *         back stale raw bytes (as for raw data written over a page after
 *         its publish, the metadata file keeps the image as published).
 * Each image carries a map of its metadata bytes (one bit per byte, after
 * the image): set by metadata writes, cleared by raw data written over the
 * page, empty when the image was made from the HDF5 file's bytes. A publish
 * hands the map on as the change's metadata ranges; crash recovery copies
 * only those bytes back into the HDF5 file, since raw data in the same page
 * may have been written to the file after the image was published.
 *
 * and three ticks: in_index (the tick it entered the published index, 0 when
 * not in it), pub_tick (its last publication) and flushed (when its
 * published image reached the HDF5 file, 0 when not since).
 *
 * Invariants:
 *  - A page's bytes reach the HDF5 file only from `pub`, and only once the
 *    page has been in the index for max_lag ticks without a break: every
 *    snapshot a reader may still hold names the page, so no reader reads it
 *    from the HDF5 file while it changes there. (The writer also writes the
 *    superblock's page of a new file from `pub` early, vfdswmr_pb_pub_image:
 *    no snapshot reads that page from the file; seal.c says why.)
 *  - A page leaves the index only when the HDF5 file holds its latest
 *    published image (flushed, nothing newer published or waiting) and has
 *    for max_lag ticks.
 *  - Raw data written over a tracked page updates all its images (and
 *    clears their metadata bits), so a later write of `pub` never puts back
 *    stale raw bytes; where it clears bits an image published or in flight
 *    still has, and no snapshot waits, the page is changed (republished at
 *    the next consistency point): readers read metadata bytes from images.
 *  - cur's map marks every byte pub's marks (metadata writes only add to
 *    cur; raw data clears both; a consistency point copies cur), and it is
 *    kept when pub reaches the HDF5 file: so raw data written over bytes
 *    the index marks always makes the page changed, as above.
 *  - A byte outside every published image's metadata ranges holds, in the
 *    HDF5 file, what a reader of that snapshot reads there: the image was
 *    made from the file's bytes and only raw writes (which go to the file
 *    too) or metadata writes (which set the bit) changed it since.
 *
 * Not thread-safe: the writer driver serialises calls with its own lock.
 * The one exception is the publish: the changes prepare() returns (and the
 * fly images they point at) may be read by another thread, without the
 * lock, until published(); meanwhile every function but prepare() may be
 * called (writes, raw writes, consistency points, store_due), as if the
 * publish had not begun. published() then keeps what changed meanwhile: a
 * removal that got new bytes leaves the index but stays tracked.
 *
 * Error contract: functions return 0 (or a count), or -1: out of memory, or a
 * fill/store callback failed, having reported its own error. Nothing is
 * printed or kept.
 */
#ifndef VFDSWMR_PAGEBUF_H
#define VFDSWMR_PAGEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mdwriter.h"

typedef struct vfdswmr_pagebuf vfdswmr_pagebuf_t;

/* Fill `image` (page_size bytes) with the current contents of page `page`
 * of the HDF5 file (zeros where the file has none). Returns 0 or -1. */
typedef int (*vfdswmr_pb_fill_t)(void *ctx, uint64_t page, uint8_t *image);
/* Write `len` bytes of a page's published image to the HDF5 file at the
 * page's address. Returns 0 or -1. */
typedef int (*vfdswmr_pb_store_t)(void *ctx, uint64_t page, const uint8_t *image, size_t len);

vfdswmr_pagebuf_t *vfdswmr_pb_new(uint32_t page_size);
void vfdswmr_pb_destroy(vfdswmr_pagebuf_t *pb);

/* Metadata write: copy into the images of the pages [addr, addr + len)
 * touches, creating them from the HDF5 file's bytes (fill) when new. */
int vfdswmr_pb_write(vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, const void *buf, vfdswmr_pb_fill_t fill,
                     void *ctx);
/* Raw data written to the HDF5 file: keep overlapping images coherent.
 * Returns 0, or -1 when out of memory copying a page that is in flight: its
 * other images still take the raw bytes, but the page then has no pub once
 * the publish completes (the handed image lacks them, so it never reaches the
 * HDF5 file), and only vfdswmr_pb_store_current writes it: stop publishing. */
int vfdswmr_pb_write_raw(vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, const void *buf);
/* Overlay the writer's current bytes on buf, which holds the HDF5 file's
 * bytes of [addr, addr + len). */
void vfdswmr_pb_read(const vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, void *buf);

/*
 * Keep the old bytes: [addr, addr + len) of the HDF5 file (space HDF5 freed
 * at its end) is about to be given to new raw data while the newest
 * snapshot -- published, or waiting -- reads the file's bytes there. Only
 * pages the page buffer tracks (vfdswmr_pb_tracked) are its business: the
 * caller keeps the others without holding them in memory
 * (vfd-swmr-writer/keepdisk.c). Every tracked page of it gets a waiting
 * image holding what a reader of that snapshot reads in the page, with the
 * range marked metadata: the next publish
 * (vfdswmr_pb_prepare: same consistency point, no new state) then serves
 * those bytes from its images, and recovery restores them. The range is
 * marked metadata in the current images too, so raw data written there
 * makes the page changed and the next consistency point publishes it again
 * without them. Bytes the newest snapshot already serves from images are
 * skipped. Every page of the range stays in the index until a consistency
 * point taken after this call is published (ticks may publish the older
 * one again meanwhile, and its readers read the old bytes from these
 * images). *kept gets the pages that got a waiting image. A waiting
 * snapshot taken before this call must be published before raw data goes
 * there (raw data written over a waiting image changes it), kept or not.
 * No publish may be under way. Returns 0; 1 when a page's view is only in
 * the metadata file (nothing changed); -1 out of memory or fill failed
 * (some pages may have waiting images: the next publish carries them,
 * which is harmless).
 */
int vfdswmr_pb_keep_old(vfdswmr_pagebuf_t *pb, uint64_t addr, uint64_t len, vfdswmr_pb_fill_t fill, void *ctx,
                        size_t *kept);

/* Does the page buffer track `page` (hold an image of it)? */
bool vfdswmr_pb_tracked(const vfdswmr_pagebuf_t *pb, uint64_t page);

/* A consistency point: what the writer has now is a state readers may see.
 * Pages wholly at or past `eoa` are dropped (freed space). Returns 0 or -1
 * (out of memory). */
int vfdswmr_pb_consistency_point(vfdswmr_pagebuf_t *pb, uint64_t eoa);

/*
 * The changes and removals of the next publish (tick `tick`): the pages
 * waiting since consistency points (sorted, images valid and unchanged
 * until vfdswmr_pb_published) and the index entries due to leave the index.
 * The arrays are owned by the page buffer. With `all`, every indexed page is
 * a removal (the last publish at close; the HDF5 file must hold everything).
 * Returns -1 when out of memory (nothing changed) or while a prepared
 * publish has not been published yet.
 */
int vfdswmr_pb_prepare(vfdswmr_pagebuf_t *pb, uint64_t tick, uint32_t max_lag, bool all,
                       const vfdswmr_mdchange_t **changes, size_t *nchanges, const uint64_t **removals,
                       size_t *nremovals);
/* The publish of `tick` prepared last succeeded: update the page states. */
void vfdswmr_pb_published(vfdswmr_pagebuf_t *pb, uint64_t tick);

/* Write every page whose published image is due (in the index for max_lag
 * ticks at `tick`) and was published before tick `published_before` to the
 * HDF5 file through `store`; `eoa` bounds what is written. A writer that
 * publishes several times a tick passes its open tick: a page HDF5 rewrites
 * at every flush then reaches the HDF5 file once a tick, not once a flush
 * (UINT64_MAX: every due page). Returns the number of pages written, or -1
 * when store failed. */
long vfdswmr_pb_store_due(vfdswmr_pagebuf_t *pb, uint64_t tick, uint32_t max_lag, uint64_t eoa,
                          uint64_t published_before, vfdswmr_pb_store_t store, void *ctx);
/* After publishing failed: write every page's current bytes to the HDF5
 * file, pages the published index names first. Returns the number of pages
 * written, or -1 when store failed. */
long vfdswmr_pb_store_current(vfdswmr_pagebuf_t *pb, uint64_t eoa, vfdswmr_pb_store_t store, void *ctx);
/* The image of `page` that the last publish of it carried, while it has not
 * reached the HDF5 file (NULL: not in the published index, or the HDF5 file
 * holds it already). Valid until the next call that changes the page buffer. */
const uint8_t *vfdswmr_pb_pub_image(const vfdswmr_pagebuf_t *pb, uint64_t page);
/* The tick at which every published image will be due (0 when nothing waits),
 * i.e. how long close must keep ticking before it can write everything. */
uint64_t vfdswmr_pb_last_due_tick(const vfdswmr_pagebuf_t *pb, uint32_t max_lag);
/* True when a consistency point's pages wait for publication. */
bool vfdswmr_pb_pending(const vfdswmr_pagebuf_t *pb);

typedef struct vfdswmr_pb_stats_t {
    uint64_t pages;    /* tracked pages */
    uint64_t images;   /* page images held in memory (cur + snap + pub) */
    uint64_t in_index; /* pages in the published index */
    uint64_t pending;  /* pages waiting for the next publish */
    uint64_t dropped;  /* pages dropped while in the index: removals of the next publish */
} vfdswmr_pb_stats_t;
void vfdswmr_pb_stats(const vfdswmr_pagebuf_t *pb, vfdswmr_pb_stats_t *st);

#endif
