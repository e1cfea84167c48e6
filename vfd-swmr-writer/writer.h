/*
 * Internal state of the vfd_swmr_writer driver, by lifecycle: open.c
 * (opening, the steps of start_swmr; claim.c: the metadata file before the
 * HDF5 file is opened; seal.c: the seal on the HDF5 file's superblock),
 * writer.c (the callbacks and I/O while open), publish.c (publishing a
 * tick), ticker.c (when ticks end), close.c (closing); lock.c (the lock).
 *
 * Locking: `lock` guards everything below it, and is taken only through
 * vfdswmr_writer_lock/unlock/wait (lock.c), which in invariant builds record
 * the thread that holds it; every function that needs it asserts so
 * (VFDSWMR_ASSERT_LOCKED). The main thread (HDF5's callbacks) holds it for
 * each callback, and for the whole of close (after the ticker stopped); the
 * ticker thread holds it except while it sleeps and while its publish
 * writes to disk (`publishing`, set through vfdswmr_writer_publishing): then
 * the publishing thread alone uses `mdw` and the images the page buffer
 * handed over (VFDSWMR_ASSERT_MDW), and everyone else may use the rest under
 * the lock (publish.c). Open runs before the ticker exists. The ticker never
 * calls HDF5 (HDF5 is not thread-safe): it only writes the metadata file,
 * updater files and the raw-data log. Everything that touches the HDF5 file
 * -- delayed page writes included -- runs in the main thread.
 *
 * Error contract: as HDF5 expects of a driver: callbacks and helpers return
 * a negative value with the reason pushed on HDF5's error stack
 * (common/h5err.h). The one exception is the ticker thread, which must not
 * call HDF5: it records its failure in `error` below (owned by the open
 * file, read only under `lock`), and the next callback pushes it.
 */
#ifndef VFDSWMR_WRITER_H
#define VFDSWMR_WRITER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ccfile.h"
#include "check.h"
#include "log.h"
#include "kept.h"
#include "marks.h"
#include "rawlog.h"
#include "mdwriter.h"
#include "pagebuf.h"
#include "stack.h"

/* The page size of snapshots and of the metadata file. */
#define VFDSWMR_WRITER_PAGE_SIZE 4096u
/* Epochs whose first tick the writer remembers (writer_t.epoch_first_tick). */
#define VFDSWMR_EPOCH_RING 64u
/* Holes the writer remembers (eoa.c); more are forgotten, smallest first. */
#define VFDSWMR_HOLES 16u
/* The most freed space whose old bytes the writer keeps at the free (eoa.c
 * keep_old): what deleting a dataset may cost in copying. Larger frees are
 * kept from raw data (the hot zone) until HDF5 allocates raw data there:
 * then the block's old bytes are kept (keep_at_alloc), at least this many
 * at a time. */
#define VFDSWMR_KEEP_OLD_MAX (16u << 20)
/* Old bytes kept on disk only (keepdisk.c): pages per metadata file entry
 * (fewer entries for a large keep against more bytes a reader of the old
 * bytes reads per image), and image bytes per publish (what the writer
 * holds of them at once). */
#define VFDSWMR_DK_PAGES 64u
#define VFDSWMR_DK_BATCH (16u << 20)
/* pb_expansion_threshold compares with at least this many page images
 * (1 MiB), so a small page buffer does not end ticks at every flush. */
#define VFDSWMR_PB_EXPANSION_MIN_IMAGES 256u

typedef struct vfdswmr_writer_t {
    vfdswmr_file_t base; /* first: the stacked file */
    bool active;         /* opened for writing: SWMR machinery on */
    bool read_only;      /* opened without H5F_ACC_RDWR (never active) */
    bool swmr_write;     /* opened with H5F_ACC_SWMR_WRITE */
    char md_path[VFDSWMR_MAX_PATH + 64];
    uint64_t hdf5_id;       /* st_ino of the HDF5 file, 0 unknown */
    bool named;             /* the HDF5 file records md_path (mdfile/sessname.h) ... */
    uint64_t session_named; /* ... and this session: ours, or pred_session */
    /* taking over a crashed writer's metadata file at md_path: its session,
     * recorded until ours has the name (go_live) */
    bool pred;
    uint64_t pred_session;
    char *rec_name; /* the HDF5 file's name, to reach its record without hdf5_fd (malloc'd), or NULL */
    /* Setup deferred (open.c, vfdswmr_writer_setup): an existing file opened
     * without H5F_ACC_TRUNC/CREAT and no metadata file anywhere has only the
     * lower file and the writer's lock on it until the first call that
     * reaches the file; pend_* keep what the rest of the open needs.
     * setup_failed: that call failed, every later one does too. */
    /* -1, or a descriptor of our own on the HDF5 file that holds the
     * writer's lock (mdlock.h): taken before a truncating open, so that a
     * writer refused for another's lock never truncates (open.c,
     * open_lower); closed last (vfdswmr_writer_free). */
    int hdf5_lock_fd;
    bool pending, setup_failed;
    char *pend_name;
    vfdswmr_mdw_opts_t pend_o;
    char pend_ud_base[VFDSWMR_MAX_PATH + 64];
    vfdswmr_log_t log;
    /* the shared raw-data chunk cache: the HDF5 file's bytes, page buffer
     * not included (reads add it on top); own mutex, taken inside `lock` */
    vfdswmr_ccfile_t cc;

    pthread_mutex_t lock;
    /* invariant builds (lock.c): the thread holding `lock`, and the one
     * writing a publish without it; 0 none */
    _Atomic uintptr_t lock_owner, publisher;
    pthread_cond_t wake;
    pthread_cond_t published; /* signalled when `publishing` ends */
    pthread_t ticker;
    bool ticker_running, stop;
    /* ticker.c: the tick thread has left this session (ticker_left) and
     * parked for the next one instead of ending (ticker_parks: no join) */
    bool ticker_left, ticker_parks;

    vfdswmr_pagebuf_t *pb;
    vfdswmr_mdw_t *mdw;
    /* read marks of local readers (marks.h), or NULL: the first reader that
     * needs the table makes it, and publish.c (find_marks) looks for it at
     * every publish until it is there, while marks_look */
    vfdswmr_marks_t *marks;
    bool marks_look;
    vfdswmr_rawlog_t *rawlog; /* what this session wrote to the HDF5 file, per tick (rawlog.h) */
    /* The log is created at the first publish that finds a reader registered
     * (publish.c, start_rawlog); until then unlogged_tick is the newest tick
     * a write was made for (it lists ticks from unlogged_tick + 1 on).
     * rawlog_done: created once (or failed); never again this session. */
    uint64_t unlogged_tick;
    bool rawlog_done;
    uint32_t lag;            /* what is kept for readers: max_lag, or more for read marks */
    unsigned marked_readers; /* live read marks at the last tick */
    /* End of allocation (eoa.c): `eoa` is the HDF5 file's (the lower
     * driver's), at least lib_eoa, higher while a reader may read above
     * HDF5's end; lib_eoa is HDF5's own, as it last set it, which get_eoa
     * answers for metadata; raw data is allocated from hot_end when that is
     * above lib_eoa (space HDF5 freed that a reader may still read; 0 none).
     * tick0_eoa: the file's size when the writer found it, what a reader
     * adopting tick 0 reads; inflight_eoa: the EOA of the publish being
     * written without the lock; lib_high: the highest end HDF5 set in this
     * session (what it can free lies below). */
    uint64_t eoa, lib_eoa, hot_end, tick0_eoa, inflight_eoa, lib_high;
    bool fsm_persistent; /* the header of a persistent file free-space manager went through the driver */
    /* closing_flushed: H5Fclose's last flush came (HDF5 writes no raw data
     * after it: no hot zone any more, eoa.c); hdf5_closing: the truncate
     * after it (H5MF_close is done), so it allocates nothing more: close
     * cuts the file to lib_eoa once no reader can read above it. */
    bool closing_flushed, hdf5_closing;
    uint64_t cp_eoa; /* the EOA of the last consistency point: HDF5's (lib_eoa) then */
    /* The highest EOA of any snapshot of this session (tick 0's included):
     * raw data written below it may be read by a reader as it is written
     * (inplace.c). raw_lock_stuck: a reader held the raw-data lock past
     * the writer's wait; until it lets go, writes do not wait again. */
    uint64_t snap_end;
    bool raw_lock_stuck;
    bool gate_held; /* the raw-data gate (inplace.c): no reader registered, raw writes need no lock */
    /* The lower driver's descriptor of the HDF5 file, -1 none: asked of HDF5
     * once, at open, since the ticker thread must never call HDF5. */
    int hdf5_fd;
    /* The versioned zone [vz_lo, vz_hi) (eoa.c; empty when vz_hi == 0):
     * space HDF5 freed at its end that a reader may still read, which HDF5
     * may allocate again -- raw data written there goes to the page buffer
     * like metadata (inplace.c), so the HDF5 file keeps the old bytes until
     * no reader can read them. */
    uint64_t vz_lo, vz_hi;
    /* Holes (eoa.c): hot space HDF5 allocated raw data above, so HDF5's
     * books lost it (it took hot_end as its end). The writer hands it out
     * again (alloc) once no reader can read its old bytes: no reader is
     * registered and a snapshot numbered `cps` (the first consistency
     * point after it formed) or later is published, or `lag` epochs after
     * `epoch`, that of the first such publish (0: none yet). Every hole
     * lies below lib_eoa. */
    struct vfdswmr_hole {
        uint64_t lo, hi, cps, epoch;
    } holes[VFDSWMR_HOLES];
    unsigned nholes;
    /* Kept old bytes (kept.c, mdfile/kept.h): freed space a registered
     * reader may read, copied into the read-mark table's file so HDF5 may
     * put raw data there at once. ent is the list as last written; an entry
     * goes once the published epoch reaches epoch[i] + lag. The copies lie
     * in a ring of VFDSWMR_KEPT_DATA_MAX bytes, in list order. */
    struct {
        vfdswmr_keptent_t ent[VFDSWMR_KEPT_MAX];
        uint64_t epoch[VFDSWMR_KEPT_MAX];
        uint32_t n;
        bool dirty;   /* the list on disk may not be ent[0, n): rewrite it before adding */
        bool tainted; /* a slot byte was held when the writer started (kept.c) */
    } kept;
    /* Old bytes kept on disk only (keepdisk.c): metadata file entries,
     * sorted by page, of pages the page buffer did not track when they were
     * made, holding freed space's old bytes [lo, hi) (offsets in the image)
     * for the snapshots before consistency point hold_cp. ent[0, npub) are
     * in the published index; ent[npub, n) wait for the next publish, their
     * images in `img` (chg/rng describe them to it). A publish carrying
     * consistency point hold_cp or later removes an entry. */
    struct {
        struct vfdswmr_dkent {
            uint64_t page, hold_cp;
            uint32_t pages, lo, hi;
        } * ent;
        size_t n, npub, cap;
        uint8_t *img;
        vfdswmr_mdchange_t *chg;
        vfdswmr_mdrange_t *rng;
        /* the publish under way: pb's changes and removals merged with ours */
        vfdswmr_mdchange_t *mchg;
        uint64_t *mrem;
        size_t mchg_cap, mrem_cap;
        /* what keep_at_alloc kept last with no reader registered, [ahead_lo,
         * ahead_hi), while no consistency point was taken since (ahead_cps:
         * their number then): blocks HDF5 allocates inside need no keep */
        uint64_t ahead_lo, ahead_hi, ahead_cps;
    } dk;
    /* Consistency points taken (cps; 0: tick 0's state), that of the snapshot
     * published last (pub_cps), and the number the next one will have when
     * the zone last grew (vz_cps): a snapshot with pub_cps >= vz_cps was
     * taken after every free in the zone and reads none of its old bytes. */
    uint64_t cps, pub_cps, vz_cps;
    uint64_t tick; /* the last tick published (mdw's, readable while publishing) */
    /* Epochs (mdfile/format.h): the lag is counted in them. `epoch` is the
     * current one, which the next publish carries; an end of tick (ticker,
     * explicit, close) ends it after publishing, a publish at a flush does
     * not. pub_epoch and pub_eoa: those of the last snapshot published. */
    uint64_t epoch, pub_epoch, pub_eoa;
    bool epoch_published; /* a snapshot of the current epoch is published */
    /* the first tick of each of the last VFDSWMR_EPOCH_RING epochs (the
     * raw-data log's window is counted in ticks) */
    uint64_t epoch_first_tick[VFDSWMR_EPOCH_RING];
    uint32_t index_entries;     /* entries of its index */
    bool publishing;            /* tick + 1 is being written without the lock (publish.c) */
    bool early_tick;            /* the tick being ended ends early (pb_expansion_threshold) */
    uint64_t tick_start_images; /* page images held when the last publish completed */
    uint64_t sb_addr;           /* the superblock's address in the HDF5 file; UINT64_MAX: none yet */
    bool sb_sealed;             /* the HDF5 file's superblock may carry the writer's seal (seal.c) */
    bool sb_shown;              /* the HDF5 file holds a superblock at sb_addr (seal.c, vfdswmr_seal_show) */
    bool truncated;             /* truncate seen since the last flush: H5Fflush or close under way */
    bool closing;               /* in writer_close */
    bool eot_disabled, tick_missed;
    double next_tick; /* monotonic seconds */
    char error[512];  /* first publish failure, reported by the next callback */
    unsigned long long publishes, pages_published, pages_stored;
    unsigned long long kept_old;  /* frees whose old bytes a publish kept (eoa.c) */
    unsigned long long kept_list; /* of those, with a reader registered: copied for it (kept.c) */
} vfdswmr_writer_t;

/* eoa.c: the end of allocation HDF5 is told and the HDF5 file keeps (lock held). */
haddr_t vfdswmr_writer_get_eoa(const vfdswmr_writer_t *w, H5FD_mem_t type);
herr_t vfdswmr_writer_set_eoa(vfdswmr_writer_t *w, H5FD_mem_t type, haddr_t addr);
/* HDF5's allocation of `size` bytes (H5FD_class_t.alloc): from a hole no
 * reader can read any more, else at the end of allocation as HDF5's own
 * extension would. HADDR_UNDEF on failure (reported). */
/* inplace.c: hold or open the raw-data gate (mdlock.h) as readers come and go. Lock held. */
void vfdswmr_writer_gate(vfdswmr_writer_t *w);
haddr_t vfdswmr_writer_alloc(vfdswmr_writer_t *w, const H5FD_t *file, H5FD_mem_t type, hsize_t size);
uint64_t vfdswmr_writer_read_floor(vfdswmr_writer_t *w);
/* kept.c: copies of freed space for registered readers (mdfile/kept.h).
 * Whether len more bytes could be kept for them now: not with updater
 * files, without a read-mark table, or while a registered reader may not
 * read the list. Lock held. */
bool vfdswmr_writer_kept_room(vfdswmr_writer_t *w, uint64_t len);
/* At open, once hdf5_fd is known: note readers of an earlier writer. */
void vfdswmr_writer_kept_open(vfdswmr_writer_t *w);
/* Copy [lo, hi) of the HDF5 file and list it for snapshots below the
 * newest published tick (whose snapshot reads the range from its images:
 * keep_old). 0, or -1 (logged; nothing listed). Main thread, lock held. */
int vfdswmr_writer_kept_add(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi);
/* A publish finished: drop entries no reader can need (kept.c). */
void vfdswmr_writer_kept_published(vfdswmr_writer_t *w);
/* Invariants of w->kept, asserted (kept.c). */
void vfdswmr_writer_kept_check(const vfdswmr_writer_t *w);
/* keepdisk.c: freed space's old bytes kept as metadata file entries of
 * pages the page buffer does not track (lock held, no publish under way).
 * May keep_old keep [lo, hi)? Not where a page the page buffer tracks, or
 * bytes not kept, lie in an entry the newest snapshot reads. */
bool vfdswmr_writer_dk_compatible(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi);
/* Images for the next publish of the untracked pages of [*at, hi) that no
 * entry the newest snapshot reads holds (the kept bytes: from lo), at most
 * VFDSWMR_DK_BATCH bytes of them; *at moves past them, *pages gets their
 * number. 0, or -1 (out of memory, a read failed; nothing waits then). */
int vfdswmr_writer_dk_plan(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi, uint64_t *at, size_t *pages);
/* Before the page buffer's prepare: room for merging (pb's counts bound
 * what it hands over). 0, or -1 out of memory. */
int vfdswmr_writer_dk_reserve(vfdswmr_writer_t *w);
/* The publish of consistency point `cps` (every entry goes with `final`):
 * pb's changes and removals in *c, *r become theirs merged with ours. */
void vfdswmr_writer_dk_merge(vfdswmr_writer_t *w, uint64_t cps, bool final, const vfdswmr_mdchange_t **c, size_t *nc,
                             const uint64_t **r, size_t *nr);
/* That publish succeeded (ok) or failed: entries removed go, waiting ones
 * are published or dropped. */
void vfdswmr_writer_dk_done(vfdswmr_writer_t *w, uint64_t cps, bool final, bool ok);
void vfdswmr_writer_dk_free(vfdswmr_writer_t *w);
void vfdswmr_writer_dk_check(const vfdswmr_writer_t *w);
/* A snapshot of consistency point `cps` was published in `epoch` (eoa.c). */
void vfdswmr_writer_holes_published(vfdswmr_writer_t *w, uint64_t cps, uint64_t epoch);
herr_t vfdswmr_writer_eoa_flushed(vfdswmr_writer_t *w, bool closing);
/* A metadata read or write of `buf`: notes persistent free-space managers. */
void vfdswmr_writer_eoa_saw(vfdswmr_writer_t *w, H5FD_mem_t type, const void *buf, size_t size);
void vfdswmr_writer_eoa_check(const vfdswmr_writer_t *w);
/* A consistency point's snapshot ends at HDF5's end (lock held). */
void vfdswmr_writer_cp_taken(vfdswmr_writer_t *w);

/* inplace.c: a raw-data write: into the page buffer where it lands in the
 * versioned zone, else to the HDF5 file, holding the raw-data lock
 * (mdlock.h) when a reader may be reading there (lock held). */
herr_t vfdswmr_writer_raw_write(vfdswmr_writer_t *w, hid_t dxpl, haddr_t addr, size_t size, const void *buf);
/* writer.c: [start, start + size) as the HDF5 file holds it (zeros past its
 * end; the superblock as HDF5 must see it). 0, or -1 on the error stack.
 * fill_page: the page buffer's fill callback, a page of it. Lock held. */
int vfdswmr_writer_fill(vfdswmr_writer_t *w, uint64_t start, size_t size, uint8_t *buf);
int vfdswmr_writer_fill_page(void *ctx, uint64_t page, uint8_t *image);

/* writer.c: the HDF5 file was truncated to the lower driver's EOF (ok), or
 * a truncate failed (its bytes are unknown from 0 on): the chunk cache and
 * the raw-data log hear of it (lock held). */
void vfdswmr_writer_truncated(vfdswmr_writer_t *w, bool ok);

/* lock.c: the lock, and what invariant builds assert of it. */
void vfdswmr_writer_lock(vfdswmr_writer_t *w);
void vfdswmr_writer_unlock(vfdswmr_writer_t *w);
/* Wait on cond (lock held; released meanwhile) until signalled or, with
 * `until` (CLOCK_MONOTONIC for w->wake), that time: pthread_cond_*wait's result. */
int vfdswmr_writer_wait(vfdswmr_writer_t *w, pthread_cond_t *cond, const struct timespec *until);
/* Lock held: a publish begins (on) or ends being written without the lock
 * by the calling thread. */
void vfdswmr_writer_publishing(vfdswmr_writer_t *w, bool on);
/* Invariant builds: does the calling thread hold the lock / may it use
 * w->mdw (the lock holder while no publish is written without the lock, the
 * publishing thread while one is)? Elsewhere always true. */
bool vfdswmr_writer_locked(const vfdswmr_writer_t *w);
bool vfdswmr_writer_owns_mdw(const vfdswmr_writer_t *w);
#define VFDSWMR_ASSERT_LOCKED(w) VFDSWMR_ASSERT(vfdswmr_writer_locked(w))
#define VFDSWMR_ASSERT_MDW(w)    VFDSWMR_ASSERT(vfdswmr_writer_owns_mdw(w))

/* open.c, close.c: the driver's open and close callbacks; free what open
 * initialised before the lower file (both). */
H5FD_t *vfdswmr_writer_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr);
/* close.c: in a fork child, let go of the writer's locked descriptors
 * (common/forked.h; the fork handler, async-signal-safe). */
void vfdswmr_writer_drop_in_child(void *w, int devnull);
herr_t vfdswmr_writer_close(H5FD_t *file);
void vfdswmr_writer_free(vfdswmr_writer_t *w);

/* writer.c, lock held. The page buffer's store callback (pagebuf.h): page
 * to the HDF5 file, sealed where it holds the superblock. durable=1:
 * fsync the HDF5 file (0, or -1 with the reason on the stack). A publish
 * failure of the ticker thread pushed on this callback's stack (-1), or 0. */
int vfdswmr_writer_store_page(void *ctx, uint64_t page, const uint8_t *image, size_t len);
int vfdswmr_writer_sync_hdf5(vfdswmr_writer_t *w);
int vfdswmr_writer_check_error(vfdswmr_writer_t *w);

/* claim.c: the metadata file before the HDF5 file is opened (see there). */
typedef enum vfdswmr_claim_t {
    VFDSWMR_CLAIM_REFUSED = -1, /* the reason on the error stack; nothing was changed */
    VFDSWMR_CLAIM_FREE,         /* no metadata file: ours takes the name */
    VFDSWMR_CLAIM_CRASHED,      /* a dead writer's, open and locked in *old_fd: recover, then ours replaces it */
    VFDSWMR_CLAIM_REPLACE,      /* a writer of this process of a file that is gone: ours replaces it */
    VFDSWMR_CLAIM_AGAIN         /* a writer of this process has this very file open: HDF5 shares it */
} vfdswmr_claim_t;
/* *old_fd: the crashed writer's metadata file with CRASHED, else -1. With
 * no metadata file at w->md_path, the one the HDF5 file records
 * (mdfile/sessname.h) is claimed instead, and w->md_path names it (unless
 * FREE). */
vfdswmr_claim_t vfdswmr_claim_md(vfdswmr_writer_t *w, const char *h5_name, int *old_fd);
void vfdswmr_registry_add(const vfdswmr_writer_t *w, const char *h5_name);
void vfdswmr_registry_remove(const vfdswmr_writer_t *w);
/* Does a writer of this process have the HDF5 file at h5_name open? */
bool vfdswmr_registry_writes(const char *h5_name);

/* seal.c: the writer's seal on the superblock in the HDF5 file
 * (common/superblock.h). Main thread only, with `lock` held or at open and
 * close; errors pushed on HDF5's stack. */
/* At open of an existing file, after recovery: find the superblock and seal
 * it. A sealed superblock that no recovery of this open explains (recovered
 * false) is refused: -1. */
int vfdswmr_seal_at_open(vfdswmr_writer_t *w, const char *name, bool recovered);
/* Record the session on the HDF5 file (mdfile/sessname.h; w->named), before
 * anything seals it -- the crashed writer's while its metadata file still
 * has the name (w->pred), else ours; md_path, or for a writer keeping no
 * metadata file VFDSWMR_SESSNAME_NONE (an older session's must not stay
 * recorded on the file it seals). A file system without extended
 * attributes: logged, 0. With `strict`, a record that cannot be written
 * over another session's: -1 on the error stack (the open is refused);
 * without (go_live, our metadata file has the recorded place now: the old
 * record leads to it), logged. */
int vfdswmr_seal_name_session(vfdswmr_writer_t *w, const char *name, bool strict);
/* A descriptor on the HDF5 file (for its record, the readers registered on
 * it): hdf5_fd, or one opened read-only by name that the caller closes
 * when it is not hdf5_fd (a lower driver without a descriptor); -1 none. */
int vfdswmr_writer_name_fd(const vfdswmr_writer_t *w, const char *name);
/* Remove the record of our session (w->session_named) from the HDF5 file
 * (through hdf5_fd, else by name: NULL, nothing), whatever else it holds. */
void vfdswmr_seal_unname_session(vfdswmr_writer_t *w, const char *name);
/* A metadata write of HDF5's: a new file's superblock tells where it is. */
void vfdswmr_seal_learn(vfdswmr_writer_t *w, haddr_t addr, const void *buf, size_t size);
/* Bytes [addr, addr + size) just read from the HDF5 file: clear the seal as
 * HDF5 must see them. 0, or -1. */
int vfdswmr_seal_incoming(vfdswmr_writer_t *w, haddr_t addr, size_t size, void *buf);
/* What to write to the HDF5 file for `len` bytes of `image` at addr: the
 * image, or `copy` holding it with the superblock sealed. */
const uint8_t *vfdswmr_seal_outgoing(vfdswmr_writer_t *w, uint64_t addr, const uint8_t *image, size_t len,
                                     uint8_t copy[VFDSWMR_WRITER_PAGE_SIZE]);
/* After a publish (main thread): a file found without a superblock gets
 * its superblock's page, as published and sealed, ahead of the delayed-write
 * rule, so programs that look for HDF5's signature on disk find it. 0, or -1. */
int vfdswmr_seal_show(vfdswmr_writer_t *w);
/* At close, every page written: clear the seal (the file is whole). 0, or -1. */
int vfdswmr_seal_clear(vfdswmr_writer_t *w);

/* open.c: the rest of a deferred open (pending), at the first call of
 * HDF5's that reaches the file, without `lock`: 0 when the writer is live
 * (or was not pending), -1 with the reason on the error stack (then and at
 * every later call). */
int vfdswmr_writer_setup(vfdswmr_writer_t *w);

/* ticker.c (a tick's length: vfdswmr_tick_seconds, common/drvconfig.h) */
int vfdswmr_ticker_start(vfdswmr_writer_t *w);
void vfdswmr_ticker_stop(vfdswmr_writer_t *w);

/* publish.c; called with `lock` held (asserted). Publish the tick after
 * w->tick; wait first for a publish under way. 0, or -1 with the failure in w->error.
 * end_tick keeps the lock throughout (a call of the application's, or
 * close); end_tick_unlocked_io releases it while writing to disk (the
 * ticker). Both end the epoch. */
int vfdswmr_writer_end_tick(vfdswmr_writer_t *w, bool final);
int vfdswmr_writer_end_tick_unlocked_io(vfdswmr_writer_t *w);
/* A flush made a consistency point (publish=flush): publish it in the
 * current epoch before the flush returns -- unless a publish that was under
 * way took it already (group commit) and nothing changed since. */
int vfdswmr_writer_publish_flush(vfdswmr_writer_t *w);
/* Wait until no publish is being written (the lock is released meanwhile). */
void vfdswmr_writer_wait_idle(vfdswmr_writer_t *w);
/* Publish the latest consistency point again, in the current epoch, with
 * the images vfdswmr_pb_keep_old made waiting (eoa.c). */
int vfdswmr_writer_publish_kept(vfdswmr_writer_t *w);
/* Publish the latest consistency point in an epoch no earlier snapshot
 * has, so that a read mark at that epoch or later means this snapshot or a
 * later one (close). */
int vfdswmr_writer_publish_fresh(vfdswmr_writer_t *w);
/* Stop publishing for good (out of memory, ...): w->error, readers told. */
void vfdswmr_writer_stop_publishing(vfdswmr_writer_t *w, const char *why);
/* publish.c: adopt the read-mark table a reader made, if there is one now.
 * 0, or -1 when it cannot be read -- at a publish (`publishing`) publishing
 * then stops: its marks cannot be honoured. Lock held. */
int vfdswmr_writer_find_marks(vfdswmr_writer_t *w, bool publishing);
/* vfdswmr_marks_find for w's session and metadata file. */
int vfdswmr_writer_marks_find(vfdswmr_writer_t *w, vfdswmr_marks_t **out);
/* The tick that publishes what is written to the HDF5 file now. */
uint64_t vfdswmr_writer_write_tick(const vfdswmr_writer_t *w);
/* The session wrote [addr, addr + len) of the HDF5 file (raw data, a page,
 * a truncation): into the raw-data log, or remembered as unlogged. */
void vfdswmr_writer_log_write(vfdswmr_writer_t *w, uint64_t addr, uint64_t len);

#endif
