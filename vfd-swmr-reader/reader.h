/*
 * vfd_swmr_reader: internal interface between the files of the driver.
 *
 *   reader.c    the driver class and its callbacks (open, close, EOA/EOF,
 *               flush, ctl, lock)
 *   pages.c     metadata reads resolved page by page from the snapshot or
 *               the HDF5 file, the cache of verified page images
 *   snapshot.c  adopting and holding snapshots (emptying the caches an
 *               adoption makes stale), the lag check (with the tick-0 mark
 *               in a new writer's read-mark table)
 *   kept.c      the writer's copies of freed space laid over reads from
 *               the HDF5 file for snapshots older than the copy
 *   locate.c    the metadata file: finding it, waiting for it, noticing
 *               that it was removed or replaced, reading its header; the
 *               read mark of each adopted snapshot
 *   (common/log.c: the optional event log)
 *
 * Calls go one way, down that list: reader.c -> pages.c -> snapshot.c ->
 * locate.c (reader.c also calls snapshot.c and locate.c directly); no file
 * calls one above it. So pages.c asks snapshot.c for the lag check after
 * each read, and snapshot.c, which adopts snapshots, empties the page
 * image cache that pages.c fills.
 *
 * Invariants:
 *  - The adopted snapshot (md.snap) is one vfdswmr_mdr_load() accepted:
 *    header and index checksummed, of one session and one tick. Without a
 *    writer (md.fd < 0) it is the pretend snapshot: tick 0, no entries.
 *  - Bytes returned for metadata always come from the adopted snapshot
 *    (its page images, checksum verified, or the HDF5 file for pages it does
 *    not name), and the lag check that follows every metadata read proves
 *    the writer had not yet overwritten any of them when they were read.
 *  - The reader writes only its own slot in the writer's read-mark table
 *    ("<metadata file>.readers", mdfile/marks.h: zeros when it claims the
 *    slot, then the tick of each snapshot it adopts; locate.c, snapshot.c)
 *    -- and the table itself when it is the first reader that needs one,
 *    made whole before it has its name -- and the optional event log;
 *    never the HDF5 file or the metadata file.
 *  - It locks only with OFD locks and never waits for one (F_OFD_SETLK):
 *    write locks on its slot's claim and tick in the read-mark table, and
 *    read locks on bytes of the HDF5 file far past any data, its
 *    registration (mdfile/mdlock.h; reader.c, locate.c). The writer only
 *    asks about these locks (F_OFD_GETLK) and the reader takes none of the
 *    writer's, so the reader never blocks the writer.
 *
 * Error contract: as HDF5 expects of a driver: callbacks and helpers return a
 * negative value (or -1, NULL) with the reason pushed on HDF5's error stack
 * (common/h5err.h); nothing else holds error text.
 */
#ifndef VFDSWMR_READER_H
#define VFDSWMR_READER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ccfile.h"
#include "check.h"
#include "marks.h"
#include "mdlock.h"
#include "mdreader.h"
#include "log.h"
#include "stack.h"
#include "vfdswmr.h"

#define RDR_NAME VFDSWMR_READER_NAME

/* How often a reader that must wait for the metadata file looks for it. */
#define RDR_POLL_US 10000u
/* Page images kept after their checksum was verified. */
#define RDR_CACHE_SLOTS 8
/* The first read of a load is md_pages_reserved pages, but no more than this. */
#define RDR_MAX_FIRST_READ (4u << 20)

/* The metadata file and the snapshot adopted from it. */
typedef struct rdr_md_t {
    char path[PATH_MAX];
    int fd;    /* -1: no metadata file (no writer) */
    dev_t dev; /* identity of the file fd refers to */
    ino_t ino;
    vfdswmr_mdsnap_t snap;   /* the adopted snapshot; all zero without a writer */
    uint32_t max_lag;        /* the writer's (from the adopted header), else the configuration's */
    uint32_t reserved_pages; /* md_pages_reserved */
    uint64_t h5_ino;         /* the HDF5 file's inode (0 unknown), to refuse another file's metadata */
    bool followed;           /* path is what the HDF5 file records, not conf_path (sessname.h) */
    /* the HDF5 file's file system keeps no record of a writer's metadata
     * file (sessname.h): an idle reader looks for a writer it cannot find
     * by the file's writer lock and seal instead (snapshot.c) */
    bool no_record;
    bool foreign;             /* such a writer took the file since this reader opened it: reads fail */
    char conf_path[PATH_MAX]; /* where the configuration puts the metadata file */
    vfdswmr_mark_t mark;      /* our read mark in the writer's table (mark.fd < 0: none) */
    /* our registration on the HDF5 file: on the mark's slot byte while the
     * mark holds our snapshot's tick, else a byte of our own */
    vfdswmr_reg_t reg;
    /* the adopted snapshot's tick when the writer is sure to honour our mark
     * for it (then the lag check asks for a release, not max_lag); 0 */
    uint64_t marked_tick;
    /* holding the file as it was (no writer, or one that closed): our tick-0
     * mark in the table of a writer that started since */
    vfdswmr_mark_t succ_mark;
    uint64_t succ_session; /* that writer's session once the mark is in time, else 0 */
    /* holding the file as it is: reads that end before this time (vfdswmr_now)
     * need no look for a writer (mdlock.h, the quiet window); 0 none */
    double quiet_until;
    const vfdswmr_config_t *cfg; /* the reader's configuration (explicit tick_len/max_lag) */
} rdr_md_t;

/* One verified page image (or multi-page entry image). */
typedef struct rdr_image_t {
    uint64_t session, tick, hdf5_page; /* key: the entry of one snapshot */
    uint64_t last_use;                 /* 0: slot empty */
    size_t cap;
    uint8_t *buf;
} rdr_image_t;

typedef struct rdr_t {
    vfdswmr_file_t base; /* first: the stacked lower file and the configuration */
    rdr_md_t md;
    haddr_t lib_eoa; /* the EOA the library last set */
    rdr_image_t cache[RDR_CACHE_SLOTS];
    uint64_t use_clock;
    vfdswmr_log_t log;   /* log_file_path (common/log.h) */
    vfdswmr_ccfile_t cc; /* the shared raw-data chunk cache (what changed dropped at each snapshot) */
} rdr_t;

/* ---- locate.c ------------------------------------------------------------ */

/* A fork child's copy (common/forked.h): close the child's descriptors --
 * metadata file, read-mark tables, kept list, registration -- and change
 * nothing in them (the parent's mark and locks stay, on its own). */
void vfdswmr_rdr_md_forget(rdr_md_t *md);

/* Set up md for the HDF5 file `name` (path, fd -1, empty snapshot). Returns
 * 0, or -1 with the reason on the error stack. */
int vfdswmr_rdr_md_init(rdr_md_t *md, const vfdswmr_config_t *cfg, const char *name);
/*
 * Open the metadata file and load its snapshot. With `wait`, keep looking
 * (every RDR_POLL_US) until it exists and holds a valid snapshot, up to
 * timeout_ds tenths of a second. Without, an absent file is fine.
 * Returns 0 (md->fd >= 0: loaded; -1: absent, no writer), or -1 with the
 * reason on the stack (md released).
 */
int vfdswmr_rdr_md_attach(rdr_md_t *md, bool wait, unsigned timeout_ds);
/* Close the file, free the snapshot. */
void vfdswmr_rdr_md_release(rdr_md_t *md);
/* What vfdswmr_rdr_md_open found. It pushes nothing: a caller that fails
 * because of it pushes the reason with vfdswmr_rdr_md_open_error. */
typedef enum {
    RDR_MD_OPENED = 1,
    RDR_MD_ABSENT = 0,      /* the file does not exist */
    RDR_MD_FAILED = -1,     /* errno says why */
    RDR_MD_NOT_REGULAR = -2 /* a directory, FIFO, ...: never read */
} rdr_md_open_t;
/* Open `path` read-only into *fd and note its identity (only when opened). */
rdr_md_open_t vfdswmr_rdr_md_open(const char *path, int *fd, dev_t *dev, ino_t *ino);
/* Push why vfdswmr_rdr_md_open(path) failed (rc < 0; errno as it left it). */
void vfdswmr_rdr_md_open_error(const char *path, rdr_md_open_t rc);
/* Whether the path names a file other than the one md->fd refers to (any
 * file, when md->fd < 0): 1 yes, 0 no. Holding no live writer's snapshot
 * (none, a closed writer's, or a dead one's that recovery removed), the
 * path is looked for again first: the session the HDF5 file records
 * (vfdswmr_rdr_md_follow), else the configured name. */
int vfdswmr_rdr_md_replaced(rdr_md_t *md);
/* The metadata file the HDF5 file records (mdfile/sessname.h; h5_name, or
 * NULL: through md->reg.fd), when it may be followed and is not md->path,
 * becomes md->path (md->followed): true. Never with
 * presume_posix_semantics=0 (readers of vfd_swmr_aux's copy). It comes
 * before the configured name: a metadata file there of another session is
 * stale. */
bool vfdswmr_rdr_md_follow(rdr_md_t *md, const char *h5_name);
/* Whether md->fd's file has been unlinked (its writer closed): 1 yes, 0 no. */
int vfdswmr_rdr_md_unlinked(const rdr_md_t *md);
/* Load options for md (first read sized from the page size once known). */
void vfdswmr_rdr_load_opts(const rdr_md_t *md, vfdswmr_mdr_opts_t *o);
/* May md adopt a snapshot with header h? It must name this HDF5 file and
 * agree with the settings the reader's configuration gives explicitly.
 * 0 (and md->max_lag taken from h), or -1 with the reason on the stack. */
int vfdswmr_rdr_check_header(rdr_md_t *md, const vfdswmr_mdhdr_t *h);

/* Mark the adopted snapshot in the writer's read-mark table (registering
 * first when needed); sets md->marked_tick when the mark is in time. Never
 * fails: without a mark the max_lag contract applies. */
void vfdswmr_rdr_mark(rdr_md_t *md);
/* Give up the read mark (registered on a byte of our own first; when that
 * fails the mark stays, held: the writer keeps waiting for us rather than
 * losing sight of us); marked_tick 0. */
void vfdswmr_rdr_unmark(rdr_md_t *md);
/* Register in the table of `session` (vfdswmr_mark_attach with the
 * metadata file md_fd); a table we made stays only while the writer of
 * that session still runs and publishes (its header on md_fd), else it
 * goes again (the writer may have closed before it had its name). true
 * when m holds a slot. */
bool vfdswmr_rdr_mark_attach(rdr_md_t *md, vfdswmr_mark_t *m, uint64_t session, int md_fd);
/* What the writer's process relies on (marks.h, mdlock.h): marked_tick is
 * the adopted snapshot's tick, held by a mark of that snapshot's session;
 * succ_session is set only while our tick-0 mark is in that session's
 * table. Asserted wherever the marks change or are relied on. */
static inline void
vfdswmr_rdr_assert_marks(const rdr_md_t *md)
{
    VFDSWMR_ASSERT(md->marked_tick == 0 || (md->mark.fd >= 0 && md->mark.session == md->snap.hdr.session &&
                                            md->marked_tick == md->snap.hdr.tick));
    VFDSWMR_ASSERT(md->succ_session == 0 || (md->succ_mark.fd >= 0 && md->succ_mark.session == md->succ_session));
}

/* ---- snapshot.c ---------------------------------------------------------- */

/* Adopt the newest snapshot (VFDSWMR_CTL_REFRESH, flush). 0, or -1 with
 * the reason on the stack; the adopted snapshot is unchanged then. */
int vfdswmr_rdr_refresh(rdr_t *r);
/* After a metadata read: 0 when no byte of the adopted snapshot can have
 * been overwritten yet, else -1 with the reason on the stack. */
int vfdswmr_rdr_lag_check(rdr_t *r);
/* Holding no live writer's snapshot, on a file system that keeps no record
 * of a writer's metadata file (rdr_md_t.no_record): a vfd_swmr_writer this
 * reader cannot find holds the file (another name or configuration), and
 * its reads fail from then on (rdr_md_t.foreign). -1 with the reason on the
 * stack, else 0. One fcntl when no writer holds the file (reader.c). */
int vfdswmr_rdr_writer_unfound(rdr_t *r);
/* The adopted snapshot's EOA (0 without a writer). */
haddr_t vfdswmr_rdr_snap_eoa(const rdr_t *r);
/* Tell the lower driver the larger of the library's EOA and the snapshot's. */
int vfdswmr_rdr_forward_eoa(rdr_t *r);
void vfdswmr_rdr_status(const rdr_t *r, vfdswmr_status_t *st);

/* ---- pages.c ------------------------------------------------------------- */

herr_t vfdswmr_rdr_read_meta(rdr_t *r, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf);
/* Raw data read from the HDF5 file into buf: the bytes the snapshot's images
 * hold as metadata replace the file's, then the lag check (pages.c). */
herr_t vfdswmr_rdr_overlay_raw(rdr_t *r, haddr_t addr, size_t size, void *buf);
/* Free the cache's buffers. */
void vfdswmr_rdr_cache_free(rdr_t *r);

/* ---- kept.c -------------------------------------------------------------- */

/* buf holds [addr, addr + size) as read from the HDF5 file: lay over it
 * the writer's copies of freed space that the adopted snapshot reads
 * there (mdfile/kept.h). The lag check must follow. 0, or -1 with the
 * reason on the stack. */
int vfdswmr_rdr_kept_patch(rdr_t *r, haddr_t addr, size_t size, void *buf);

/* One log line (common/log.h): cheap when there is no log. */
#define vfdswmr_rdr_log(r, ...) VFDSWMR_LOG(&(r)->log, "reader", __VA_ARGS__)

#endif
