/*
 * The end of allocation (EOA): what HDF5 is told, what the HDF5 file keeps.
 *
 * HDF5 lowers its EOA when it frees space at the end of the file, and would
 * hand the same addresses to its next allocation. For metadata that is
 * harmless: every metadata write goes to the page buffer and reaches the
 * file only when no reader can still read the page's old bytes. Raw data is
 * not versioned: a new chunk written where a freed one was would change the
 * bytes a reader of an older snapshot reads as the old chunk. So:
 *
 *  - HDF5 gets back, for metadata, exactly the EOA it set (lib_eoa): its
 *    free-space bookkeeping is sec2's, and so are the file's size and the
 *    superblock's end of file.
 *  - Space HDF5 freed at its end that only a reader registering from now
 *    on could read (none is registered) goes back to HDF5 at once, as on
 *    sec2: the writer first publishes the newest snapshot again with the
 *    space's old bytes as images (keep_old), so that snapshot no longer
 *    reads them from the HDF5 file, and new raw data may go there, into
 *    the file, at once.
 *  - Other space HDF5 freed at its end that a reader may still read (the
 *    hot zone, [lib_eoa, hot_end)) is kept from raw data: for raw types
 *    (H5FD_MEM_DRAW, H5FD_MEM_GHEAP) get_eoa answers hot_end, so HDF5
 *    allocates raw data above it and never extends a raw block into it.
 *  - The HDF5 file keeps its high-water mark (w->eoa, the lower driver's EOA)
 *    while a reader may read above lib_eoa.
 *
 * Who may read above an address: a registered reader (any: the snapshot it
 * holds is not known here), any reader at all with updater files, and --
 * since readers register before they read anything -- a reader that
 * registers from now on, which adopts the newest snapshot published or
 * being published, or the consistency point after it. Those snapshots refer
 * to nothing at or above their EOA (HDF5's own at the consistency point);
 * before the first publish the snapshot is the file as the writer found it.
 *
 * When HDF5 allocates raw data above a hot zone (it took hot_end as its
 * end), the zone drops out of HDF5's books: a hole. The writer allocates
 * for HDF5 (alloc: H5FD_class_t.alloc, which HDF5 calls for every block it
 * takes from the end of the file) and hands a hole out again once no
 * reader can read its old bytes: when no reader is registered and a
 * snapshot from after the free is published, or lag epochs after the first
 * such snapshot was (the delayed-write rule). A program that deletes and
 * re-creates a big dataset then reuses its space within a flush or two
 * instead of growing the file by it each time.
 *
 * Invariants (asserted in vfdswmr_writer_eoa_check):
 *  - lib_eoa <= w->eoa: the HDF5 file reaches whatever HDF5 allocated;
 *  - the newest snapshot's end (published or being published; tick 0's:
 *    the file's size as found) <= w->eoa: HDF5's truncate cuts the file to
 *    w->eoa, and recovery refuses a file shorter than the snapshot;
 *  - hot_end == 0 or lib_eoa < hot_end: the hot zone lies above HDF5's end;
 *  - every hole is non-empty and below lib_eoa (HDF5 covers what it is
 *    given from one).
 * The answer for a raw type changes without HDF5 setting an EOA only at a
 * flush (vfdswmr_writer_eoa_flushed says when that is safe for HDF5) and
 * after H5Fclose's last truncate (H5MF_close is done: HDF5 allocates and
 * frees nothing more), when it becomes lib_eoa for the superblock.
 */
#include <string.h>

#include "h5err.h"
#include "marks.h"
#include "mdlock.h"
#include "testhook.h"
#include "writer.h"

#define LOWER(w) ((w)->base.lower)

/* The versioned zone's largest extent is the key versioned_max: what the
 * page buffer may have to hold of raw data that HDF5 writes into freed
 * space (three images a page at most). Larger frees are kept from raw data
 * instead (the hot zone). */
#define VERSIONED_MAX(w) ((w)->base.cfg.versioned_max)

_Static_assert(VFDSWMR_MARKS_SLOTS <= VFDSWMR_MARKED_SLOTS, "read mark slots without a registration byte");

void
vfdswmr_writer_eoa_check(const vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT(w->lib_eoa <= w->eoa);
    VFDSWMR_ASSERT(w->tick0_eoa == UINT64_MAX || (w->tick == 0 ? w->tick0_eoa : w->pub_eoa) <= w->eoa);
    VFDSWMR_ASSERT(!w->publishing || w->inflight_eoa <= w->eoa);
    VFDSWMR_ASSERT(w->hot_end == 0 || w->lib_eoa < w->hot_end);
    VFDSWMR_ASSERT(w->vz_hi == 0 || (w->vz_lo < w->vz_hi && w->vz_hi - w->vz_lo <= VERSIONED_MAX(w)));
    VFDSWMR_ASSERT(w->nholes <= VFDSWMR_HOLES);
    for (unsigned i = 0; i < w->nholes; i++)
        VFDSWMR_ASSERT(w->holes[i].lo < w->holes[i].hi && w->holes[i].hi <= w->lib_eoa);
}

static bool
raw_type(H5FD_mem_t type)
{
    return type == H5FD_MEM_DRAW || type == H5FD_MEM_GHEAP;
}

/* The highest address a reader may read now or later: UINT64_MAX when a
 * reader is registered or cannot be ruled out, else the EOA of the newest
 * snapshot a new reader could adopt. Lock held. */
uint64_t
vfdswmr_writer_read_floor(vfdswmr_writer_t *w)
{
    int fd;
    uint64_t r;

    VFDSWMR_ASSERT_LOCKED(w);
    if (!w->base.cfg.maintain_metadata_file || w->base.cfg.generate_updater_files || (fd = w->hdf5_fd) < 0 ||
        vfdswmr_mdlock_any_reader(fd) != 0)
        return UINT64_MAX;
    r = w->tick == 0 ? w->tick0_eoa : w->pub_eoa;
    if (w->publishing && w->inflight_eoa > r)
        r = w->inflight_eoa;
    return w->cp_eoa > r ? w->cp_eoa : r;
}

void
vfdswmr_writer_cp_taken(vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT_LOCKED(w);
    w->cp_eoa = w->lib_eoa; /* the snapshot refers to nothing above HDF5's end */
    w->cps++;
    if (w->cp_eoa > w->snap_end)
        w->snap_end = w->cp_eoa;
}

/* Make [lo, hi), freed space a reader may still read, part of the versioned
 * zone, if the zone then stays within versioned_max bytes: HDF5 may
 * then allocate it again at once. false: keep it from raw data instead. */
static bool
version_zone(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi)
{
    if (w->vz_hi > w->vz_lo) {
        lo = lo < w->vz_lo ? lo : w->vz_lo;
        hi = hi > w->vz_hi ? hi : w->vz_hi;
    }
    if (hi - lo > VERSIONED_MAX(w))
        return false;
    w->vz_lo = lo;
    w->vz_hi = hi;
    w->vz_cps = w->cps + 1;
    return true;
}

/* The end of what keep_old would keep of [addr, old), space HDF5 freed,
 * given read_floor's answer `floor`: min(floor, old); 0 when it may not.
 * It may when only a reader registering from now on could read that space
 * (no reader is registered, nor can one be ruled out otherwise) -- or a
 * reader is registered and the copy keep_old then makes for it fits
 * (vfdswmr_writer_kept_room) --, nothing above HDF5's end is kept from raw data or versioned (what lies
 * there and the newest snapshot reads is then kept already: cutting the
 * file after a keep loses nothing a reader reads from the file), within
 * VFDSWMR_KEEP_OLD_MAX bytes (the page buffer holds them until they reach
 * the HDF5 file), and only while publication follows flushes: with
 * publish=tick or publication held back (vfdswmr_disable_end_of_tick) the
 * application decides when the tick moves, and a keep's publish would move
 * it in the middle of a flush, without that flush (and, ending a tick
 * early, take the early end the flush's own growth would have made).
 * Before the first publish too (HDF5 frees a cache image while it opens
 * the file): the newest snapshot is then tick 0, the file as the writer
 * found it -- the republish is that state with the old bytes as images,
 * as the ticker's first tick would publish it, and nothing any reader can
 * hold then refers to the space
 * above cp_eoa (a reader marked in this writer's table holds tick 0 or
 * later; with any other reader registered nothing is listed, and
 * keep_old fails), so nothing above it is kept. */
static uint64_t
keep_allowed(vfdswmr_writer_t *w, uint64_t addr, uint64_t old, uint64_t floor)
{
    uint64_t end = floor < old ? floor : old;

    if (w->tick == 0 && end > w->cp_eoa)
        end = w->cp_eoa;
    if (end <= addr || w->error[0] || w->vz_hi != 0 || w->eot_disabled || w->base.cfg.publish_at_tick_only)
        return 0;
    if (floor == UINT64_MAX && !vfdswmr_writer_kept_room(w, end - addr))
        return 0; /* a reader registered: only with a copy for snapshots before the keep (kept.c) */
    return end;
}

static uint64_t
keep_end(vfdswmr_writer_t *w, uint64_t addr, uint64_t old, uint64_t floor)
{
    uint64_t end = keep_allowed(w, addr, old, floor);

    return end && end - addr <= VFDSWMR_KEEP_OLD_MAX && w->hot_end == 0 ? end : 0;
}

/* Make the newest snapshot hold the old bytes of [lo, hi) (keep_end):
 * publish it again (same consistency point) with them as images -- the
 * page buffer's pages in its images (vfdswmr_pb_keep_old), the others in
 * entries of their own written straight to the metadata file, a batch per
 * publish (keepdisk.c) -- so that HDF5 may put raw data there at once,
 * into the HDF5 file, as on sec2. A waiting consistency point is published
 * with them (raw data written there would change its images). true: done,
 * and still no reader registered (one that registered meanwhile may hold
 * the snapshot before: the caller then keeps the space from raw data as
 * without this) -- or a reader is registered and the space's bytes were
 * copied for snapshots before this publish (kept.c). false: some pages may
 * have been kept, which is harmless (they hold what the snapshot reads). */
static bool
keep_old(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi)
{
    size_t kept, pages = 0, made;
    uint64_t at = lo;

    VFDSWMR_ASSERT(!w->publishing); /* the caller waited */
    if (!vfdswmr_writer_dk_compatible(w, lo, hi) ||
        vfdswmr_pb_keep_old(w->pb, lo, hi - lo, vfdswmr_writer_fill_page, w, &kept) != 0)
        return false;
    pages = kept;
    do {
        if (vfdswmr_writer_dk_plan(w, lo, hi, &at, &made) < 0)
            return false;
        if ((kept || made || vfdswmr_pb_pending(w->pb)) && vfdswmr_writer_publish_kept(w) < 0) {
            vfdswmr_writer_dk_done(w, w->cps, false, false); /* a publish that never began leaves its batch */
            return false;
        }
        if (made)
            vfdswmr_test_kill_point("kept_batch"); /* recovery: the kept batches, the file for the rest */
        pages += made;
        kept = 0;
    } while (at < hi);
    if (pages) {
        VFDSWMR_LOG(&w->log, "kept_old", "addr=%llu size=%llu pages=%zu tick=%llu", (unsigned long long)lo,
                    (unsigned long long)(hi - lo), pages, (unsigned long long)w->tick);
        w->kept_old++;
    }
    if (vfdswmr_writer_read_floor(w) != UINT64_MAX)
        return true;
    /* a reader is registered (or registered meanwhile): it may hold a
     * snapshot from before this publish, which reads the space from the
     * HDF5 file -- copy its bytes for it first (kept.c) */
    return vfdswmr_writer_kept_add(w, lo, hi) == 0;
}

haddr_t
vfdswmr_writer_get_eoa(const vfdswmr_writer_t *w, H5FD_mem_t type)
{
    if (raw_type(type) && w->hot_end > w->lib_eoa && !w->hdf5_closing)
        return w->hot_end;
    return w->lib_eoa;
}

/* HDF5's end went down to `end`: holes end below it (what lay above is
 * part of the free now, and protected as such). */
static void
trim_holes(vfdswmr_writer_t *w, uint64_t end)
{
    unsigned i = 0;

    while (i < w->nholes) {
        struct vfdswmr_hole *h = &w->holes[i];
        if (h->hi > end)
            h->hi = end;
        if (h->lo < h->hi)
            i++;
        else
            *h = w->holes[--w->nholes];
    }
}

/* Remember [lo, hi) (a hot zone HDF5 allocates above) as a hole, forgetting
 * the smallest one when every slot is taken (its space then stays unused,
 * as without holes). Stamped now: every free that left old bytes in it came
 * before (nothing of HDF5's lies above its end). */
static void
keep_hole(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi)
{
    struct vfdswmr_hole h = {lo, hi, w->cps + 1, 0};
    unsigned i, small = 0;

    if (w->nholes < VFDSWMR_HOLES) {
        w->holes[w->nholes++] = h;
        return;
    }
    for (i = 1; i < w->nholes; i++)
        if (w->holes[i].hi - w->holes[i].lo < w->holes[small].hi - w->holes[small].lo)
            small = i;
    if (w->holes[small].hi - w->holes[small].lo < hi - lo)
        w->holes[small] = h;
}

/* No reader can read the hole's old bytes any more: lag epochs (read
 * marks included) after the first publish of a snapshot from after the
 * hole formed (every snapshot naming the old bytes is at least that old: a
 * reader holding one has fallen behind, which its lag check after every
 * read reports -- the rule a page's delayed write follows, pagebuf.h), or
 * no reader is registered (nor can one be ruled out otherwise: read_floor)
 * and a new one adopts a snapshot taken after the hole formed (numbered cps
 * or later). DESIGN.md, "Holes". */
static bool
hole_cold(vfdswmr_writer_t *w, const struct vfdswmr_hole *h)
{
    if (h->epoch && w->pub_epoch >= h->epoch + w->lag)
        return true;
    return w->pub_cps >= h->cps && vfdswmr_writer_read_floor(w) != UINT64_MAX;
}

void
vfdswmr_writer_holes_published(vfdswmr_writer_t *w, uint64_t cps, uint64_t epoch)
{
    for (unsigned i = 0; i < w->nholes; i++)
        if (w->holes[i].epoch == 0 && cps >= w->holes[i].cps)
            w->holes[i].epoch = epoch;
}

/*
 * Raw data is about to go above the hot zone (a free too large to keep at
 * once, VFDSWMR_KEEP_OLD_MAX, or made while a reader was registered): that
 * would leave a hole HDF5 forgets, and a file bigger than sec2's when
 * nothing reuses it -- a program that replaces a large dataset in each
 * session would grow its file by it each time. Instead keep the old bytes
 * of the zone's bottom as keep_old keeps a free's (on disk, a batch at a
 * time), so the block goes where sec2 puts it. With no reader registered,
 * at least VFDSWMR_KEEP_OLD_MAX bytes, so a run of small blocks costs a
 * publish per that many (a block in space kept already costs none); with
 * one, exactly the block, since keep_old also copies what it keeps for
 * the reader into a bounded ring (kept.c: when that is full, holes as
 * before). Not with an alignment or paged aggregation (the caller): HDF5
 * pads the block for the address get_eoa answers, hot_end, and frees the
 * padding there. true: the block may go at lib_eoa.
 */
static bool
keep_at_alloc(vfdswmr_writer_t *w, hsize_t size)
{
    uint64_t lo = w->lib_eoa, hi, end = 0;

    if (w->hdf5_closing || w->hot_end <= lo || w->closing_flushed)
        return false;
    /* inside what the last keep with no reader kept ahead: nothing to do
     * (a reader registering since adopted the snapshot holding it) */
    if (w->dk.ahead_cps == w->cps && lo >= w->dk.ahead_lo && lo < w->dk.ahead_hi && size <= w->dk.ahead_hi - lo &&
        !w->error[0] && vfdswmr_writer_read_floor(w) != UINT64_MAX)
        return true;
    /* keep_old publishes: wait for a publish under way, but only when the
     * keep may apply (a raw allocation should not wait for the ticker's
     * disk I/O for nothing), and ask again after (a reader may have come) */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t floor = vfdswmr_writer_read_floor(w), want = size;
        if (floor != UINT64_MAX && want < VFDSWMR_KEEP_OLD_MAX) {
            /* ahead, to a page's end: the next block's keep then needs no
             * part of a page whose entry holds only the bytes below it
             * (dk_compatible) */
            want = VFDSWMR_KEEP_OLD_MAX;
            want += VFDSWMR_WRITER_PAGE_SIZE - (lo + want) % VFDSWMR_WRITER_PAGE_SIZE;
        }
        hi = w->hot_end - lo < want ? w->hot_end : lo + want;
        if ((end = keep_allowed(w, lo, hi, floor)) == 0)
            return false;
        if (pass == 0)
            vfdswmr_writer_wait_idle(w);
    }
    /* [end, hi): above anything a snapshot or a new reader reads (keep_allowed) */
    if (!keep_old(w, lo, end))
        return false;
    if (vfdswmr_writer_read_floor(w) != UINT64_MAX) {
        w->dk.ahead_lo = lo;
        w->dk.ahead_hi = end;
        w->dk.ahead_cps = w->cps;
    }
    VFDSWMR_LOG(&w->log, "kept_at_alloc", "addr=%llu size=%llu kept=%llu", (unsigned long long)lo,
                (unsigned long long)size, (unsigned long long)(end - lo));
    return true;
}

haddr_t
vfdswmr_writer_alloc(vfdswmr_writer_t *w, const H5FD_t *file, H5FD_mem_t type, hsize_t size)
{
    haddr_t eoa;

    VFDSWMR_ASSERT_LOCKED(w);
    /* HDF5 aligns what it gets from the end itself (from get_eoa), and pages
     * are its own with paged aggregation: holes only without either */
    if (file->alignment <= 1 && !file->paged_aggr)
        for (unsigned i = 0; i < w->nholes; i++) {
            struct vfdswmr_hole *h = &w->holes[i];
            if (h->hi - h->lo < size || !hole_cold(w, h))
                continue;
            eoa = h->lo;
            VFDSWMR_LOG(&w->log, "hole_reused", "addr=%llu size=%llu hole=[%llu,%llu)", (unsigned long long)eoa,
                        (unsigned long long)size, (unsigned long long)h->lo, (unsigned long long)h->hi);
            h->lo += size;
            if (h->lo == h->hi)
                *h = w->holes[--w->nholes];
            vfdswmr_writer_eoa_check(w);
            return eoa;
        }
    eoa = vfdswmr_writer_get_eoa(w, type);
    if (eoa > w->lib_eoa && file->alignment <= 1 && !file->paged_aggr && keep_at_alloc(w, size))
        eoa = w->lib_eoa;
    if (eoa + size < eoa || eoa + size > file->maxaddr) {
        VFDSWMR_ERR(H5E_NOSPACE, "%s: allocating %llu bytes at %llu passes the largest address", VFDSWMR_WRITER_NAME,
                    (unsigned long long)size, (unsigned long long)eoa);
        return HADDR_UNDEF;
    }
    if (eoa > w->lib_eoa) /* raw data above the hot zone: HDF5 no longer knows that space */
        keep_hole(w, w->lib_eoa, eoa);
    if (vfdswmr_writer_set_eoa(w, type, eoa + size) < 0)
        return HADDR_UNDEF;
    return eoa;
}

/* The HDF5 file may end at lib_eoa: nobody reads above it. */
static herr_t
cut_file(vfdswmr_writer_t *w)
{
    if (w->eoa == w->lib_eoa)
        return 0;
    w->eoa = w->lib_eoa;
    return vfdswmr_pt_set_eoa(&w->base.pub, H5FD_MEM_DEFAULT, w->eoa);
}

herr_t
vfdswmr_writer_set_eoa(vfdswmr_writer_t *w, H5FD_mem_t type, haddr_t addr)
{
    /* HDF5 frees [addr, old) when it lowers its end -- but only space it
     * had: the end it starts from at open is the lower file's (after
     * recovery, the recovered file's size), and its search for the
     * signature (H5FD_locate_signature) lowers that before it set any end
     * of its own, freeing nothing (it sets the superblock's end next). */
    uint64_t old = w->lib_eoa < w->lib_high ? w->lib_eoa : w->lib_high;

    (void)type;
    VFDSWMR_ASSERT_LOCKED(w);
    /* keep_old publishes: wait for a publish under way first, but only
     * when it may apply (the application's thread should not wait for the
     * ticker's disk I/O for nothing) */
    bool keep = addr < old && !w->closing_flushed && keep_end(w, addr, old, vfdswmr_writer_read_floor(w)) != 0;
    if (keep)
        vfdswmr_writer_wait_idle(w);
    w->lib_eoa = addr;
    if (addr > w->lib_high)
        w->lib_high = addr;
    if (addr < old)
        trim_holes(w, addr);
    if (addr < old && !w->closing_flushed) { /* HDF5 freed [addr, old) */
        uint64_t floor = vfdswmr_writer_read_floor(w), end = keep ? keep_end(w, addr, old, floor) : 0;
        bool kept = end && keep_old(w, addr, end);
        if (kept)
            floor = addr; /* the newest snapshot holds the old bytes: nobody reads them here */
        if (floor > addr) {
            uint64_t end = floor < old ? floor : old;
            if (!version_zone(w, addr, end) && end > w->hot_end)
                w->hot_end = end;
        }
        else if (!kept && w->hot_end == 0 && w->eoa > addr) {
            /* nobody reads above addr: the file may end there (HDF5's next
             * truncate cuts it). Not after a keep: the newest snapshot, the
             * keep's, still ends at its consistency point's EOA, and the
             * file must reach it until a later one is published -- cut now,
             * a crash between HDF5's truncate and its flush's publish would
             * leave a file shorter than the snapshot recovery restores
             * (eoa_flushed cuts it once the flush is published). */
            vfdswmr_writer_eoa_check(w);
            return cut_file(w);
        }
    }
    if (w->hot_end <= addr)
        w->hot_end = 0;
    if (addr > w->eoa)
        w->eoa = addr;
    vfdswmr_writer_eoa_check(w);
    return vfdswmr_pt_set_eoa(&w->base.pub, H5FD_MEM_DEFAULT, w->eoa);
}

/* A free-space manager header ("FSHD", version, client) whose client is
 * the file (1; 0 is a fractal heap's own manager). */
void
vfdswmr_writer_eoa_saw(vfdswmr_writer_t *w, H5FD_mem_t type, const void *buf, size_t size)
{
    const uint8_t *b = buf;

    if (type != H5FD_MEM_DRAW && size >= 6 && !memcmp(b, "FSHD", 4) && b[5] == 1)
        w->fsm_persistent = true;
}

/*
 * After a flush published (or found nothing to publish): once no reader can
 * read above HDF5's end, the hot zone goes -- HDF5 gives raw space at its
 * end back as on sec2 from now on -- and the HDF5 file ends where HDF5's
 * does, as sec2's after H5Fflush.
 *
 * H5Fclose's last flush (closing) comes after HDF5 settled its free-space
 * managers and before H5MF_close shrinks the file by what they hold at its
 * end. HDF5 writes no raw data after it, so the hot zone can go then too --
 * unless a file free-space manager is persistent (its header went through
 * the driver: fsm_persistent). A settled persistent manager fails
 * H5Fclose if H5MF_close changes it ("unexpected rdfsm ring unsettle"),
 * and it would: a raw section freed while the zone was hot ends at HDF5's
 * end, and is shrunk the moment the answer changes. Earlier flushes come
 * before any settling, which then shrinks such a section itself.
 * Closing, close.c cuts the file.
 */
herr_t
vfdswmr_writer_eoa_flushed(vfdswmr_writer_t *w, bool closing)
{
    uint64_t floor;
    herr_t rc;

    VFDSWMR_ASSERT_LOCKED(w);
    if (closing) {
        if (!w->fsm_persistent)
            w->hot_end = 0;
        return 0;
    }
    if (w->eoa == w->lib_eoa && w->hot_end == 0 && w->vz_hi == 0)
        return 0;
    floor = vfdswmr_writer_read_floor(w);
    if (floor != UINT64_MAX && w->pub_cps >= w->vz_cps)
        w->vz_lo = w->vz_hi = 0; /* no reader, and a new one adopts a snapshot from after every free */
    if (floor > w->lib_eoa)
        return 0;
    w->hot_end = 0;
    if ((rc = cut_file(w)) >= 0)
        rc = vfdswmr_pt_truncate(&w->base.pub, H5P_DEFAULT, false);
    vfdswmr_writer_truncated(w, rc >= 0);
    vfdswmr_writer_eoa_check(w);
    return rc;
}
