/*
 * Metadata file writer: builds each tick's plan (plan.h) from the changes,
 * then hands it to the sinks. See mdwriter.h for the invariants; invariant
 * builds (common/check.h) check the published index after every publish
 * (check_index), paced for large indexes.
 */
#include "mdwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "errtext.h"
#include "io.h"
#include "mdlock.h"
#include "plan.h"
#include "safefile.h"
#include "space.h"
#include "sumpool.h"
#include "updater.h"

/* An updater file held back until vfdswmr_mdw_go_live(). */
struct held_ud {
    uint8_t *buf;
    size_t len;
    uint64_t seq, epoch;
};

struct vfdswmr_mdw {
    vfdswmr_mdw_opts_t o;
    char *md_path; /* owned copies of the option strings */
    char *ud_base;
    int fd;            /* metadata file, or -1; its writer lock is held (mdlock.h) */
    char *tmp_path;    /* its name until vfdswmr_mdw_link() */
    bool linked;       /* visible under md_path */
    uint32_t keep_lag; /* superseded space is kept this many epochs (>= max_lag: read marks) */
    bool epoch_given;  /* vfdswmr_mdw_set_epoch() was called: publishes carry next_epoch, else their tick */
    uint64_t next_epoch;
    /* With defer_link, updater files are held back until vfdswmr_mdw_go_live(): an open
     * that fails later (HDF5 tries opens it expects to fail) must leave none behind. */
    bool ud_hold;
    struct held_ud *held; /* updater files held back, oldest first */
    size_t nheld;
    dev_t dev; /* its identity, to never remove another writer's file */
    ino_t ino;
    vfdswmr_space_t *space;
    uint64_t tick;
    uint64_t sequence;   /* next updater sequence number */
    uint64_t *ud_epochs; /* epoch of updater sequence (oldest_ud + i)'s snapshot, for deletion */
    size_t n_ud, cap_ud;
    uint64_t oldest_ud;     /* lowest sequence number not deleted yet */
    vfdswmr_mdentry_t *idx; /* published index */
    uint32_t n;
    vfdswmr_mdrange_t *ranges; /* its ranges, entry by entry */
    uint32_t nranges;
    vfdswmr_mdhdr_t hdr; /* the header last written whole (the metadata file's current one) */
    uint64_t idx_page;   /* relocated index: first page, else 0 */
    uint64_t idx_pages;
    uint64_t file_pages; /* size of the metadata file, in pages */
#ifdef VFDSWMR_INVARIANTS
    vfdswmr_pace_t pace; /* when the next check_index() is due */
#endif
};

VFDSWMR_CHECKER const char *check_index(const vfdswmr_mdw_t *w, uint64_t *size);

/* ---- sinks ------------------------------------------------------------ */

/*
 * Remember the epoch of the snapshot updater `seq` carries, and delete the
 * updater files whose epoch is ud_keep_ticks or more behind `epoch` (a time,
 * like max_lag: publishes at flushes do not shorten it). A file that cannot be
 * deleted (already gone) is no error: deletion only bounds disk use.
 */
static void
retire_updaters(vfdswmr_mdw_t *w, uint64_t seq, uint64_t epoch)
{
    char name[4096 + 32];
    size_t drop = 0;

    if (w->o.ud_keep_ticks == 0)
        return;
    if (w->n_ud == w->cap_ud) {
        size_t cap = w->cap_ud ? 2 * w->cap_ud : 64;
        uint64_t *p = realloc(w->ud_epochs, cap * sizeof *p);
        if (p == NULL)
            return; /* keep the files: a leak of disk space, not of correctness */
        w->ud_epochs = p;
        w->cap_ud = cap;
    }
    if (w->n_ud == 0)
        w->oldest_ud = seq;
    w->ud_epochs[w->n_ud++] = epoch;
    while (drop < w->n_ud && w->ud_epochs[drop] + w->o.ud_keep_ticks <= epoch) {
        if (vfdswmr_updater_name(name, sizeof name, w->ud_base, w->oldest_ud + drop) == 0)
            unlink(name);
        drop++;
    }
    if (drop) {
        memmove(w->ud_epochs, w->ud_epochs + drop, (w->n_ud - drop) * sizeof *w->ud_epochs);
        w->n_ud -= drop;
        w->oldest_ud += drop;
    }
}

static int
sink_updater(vfdswmr_mdw_t *w, const vfdswmr_mdplan_t *plan, uint16_t flags, char *err, size_t errlen)
{
    uint8_t *buf;
    size_t len;
    int rc;

    if (w->ud_base == NULL)
        return 0;
    if (vfdswmr_updater_encode(plan, flags, w->sequence, w->o.page_size, w->o.session, w->tick, &buf, &len) < 0)
        return vfdswmr_errtext(err, errlen, "cannot build updater file %llu: %s", (unsigned long long)w->sequence,
                               strerror(errno));
    if (w->ud_hold) {
        struct held_ud *h = realloc(w->held, (w->nheld + 1) * sizeof *h);
        if (h == NULL) {
            free(buf);
            return vfdswmr_errtext(err, errlen, "out of memory");
        }
        w->held = h;
        h[w->nheld++] = (struct held_ud){buf, len, w->sequence, w->hdr.epoch};
        w->sequence++;
        return 0;
    }
    rc = vfdswmr_updater_write(w->ud_base, w->sequence, buf, len, w->o.durable);
    free(buf);
    if (rc < 0)
        return vfdswmr_errtext(err, errlen, "cannot write updater file %s.%llu: %s", w->ud_base,
                               (unsigned long long)w->sequence, strerror(errno));
    retire_updaters(w, w->sequence, w->hdr.epoch); /* sink_md set w->hdr to this publish's */
    w->sequence++;
    return 0;
}

static int
sink_md(vfdswmr_mdw_t *w, const vfdswmr_mdplan_t *plan, const vfdswmr_mdhdr_t *hdr, char *err, size_t errlen)
{
    uint64_t eof = vfdswmr_space_eof(w->space);

    if (w->fd < 0) {
        w->hdr = *hdr;
        return 0;
    }
    if (vfdswmr_mdplan_apply(w->fd, plan, w->o.durable) < 0)
        return vfdswmr_errtext(err, errlen, "cannot write metadata file %s: %s", w->md_path, strerror(errno));
    w->hdr = *hdr;
    /* Pages past the end of the allocated space are free: no index a reader
     * may still hold names them. */
    if (eof < w->file_pages && ftruncate(w->fd, (off_t)(eof * w->o.page_size)) < 0)
        return vfdswmr_errtext(err, errlen, "cannot shrink metadata file %s: %s", w->md_path, strerror(errno));
    w->file_pages = eof; /* every write lies in allocated or reserved pages */
    return 0;
}

/* ---- index bookkeeping ---------------------------------------------------- */

/* First entry whose HDF5 range ends after `page` (format.h). */
static uint32_t
first_ending_after(const vfdswmr_mdw_t *w, uint64_t page)
{
    return vfdswmr_mdidx_search(w->idx, w->n, w->o.page_size, page);
}

static int
defer_entry(vfdswmr_mdw_t *w, const vfdswmr_mdentry_t *e, uint64_t epoch)
{
    return vfdswmr_space_defer(w->space, e->md_page, vfdswmr_pages(e->length, w->o.page_size), epoch);
}

/* A change's ranges: sorted, disjoint, nonempty, inside its image. */
static bool
ranges_ok(const vfdswmr_mdchange_t *c)
{
    uint64_t next = 0;

    if (c->nranges && c->ranges == NULL)
        return false;
    for (uint32_t k = 0; k < c->nranges; k++) {
        const vfdswmr_mdrange_t *r = &c->ranges[k];
        if (r->length == 0 || r->offset < next || (uint64_t)r->offset + r->length > c->length)
            return false;
        next = (uint64_t)r->offset + r->length;
    }
    return true;
}

static int
check_sorted(vfdswmr_mdw_t *w, const vfdswmr_mdchange_t *c, size_t nc, const uint64_t *r, size_t nr, char *err,
             size_t errlen)
{
    const uint64_t max_page = UINT64_MAX / w->o.page_size;

    for (size_t i = 0; i < nc; i++) {
        uint64_t pages = vfdswmr_pages(c[i].length, w->o.page_size);
        if (c[i].length == 0 || c[i].image == NULL || c[i].hdf5_page > max_page - pages)
            return vfdswmr_errtext(err, errlen, "change %zu (HDF5 page %llu) is invalid", i,
                                   (unsigned long long)c[i].hdf5_page);
        if (!ranges_ok(&c[i]))
            return vfdswmr_errtext(err, errlen,
                                   "change %zu (HDF5 page %llu): metadata ranges not sorted, disjoint, nonempty and "
                                   "inside its %u bytes",
                                   i, (unsigned long long)c[i].hdf5_page, c[i].length);
        if (i + 1 < nc && c[i].hdf5_page + pages > c[i + 1].hdf5_page)
            return vfdswmr_errtext(err, errlen, "changes are not sorted and disjoint at HDF5 page %llu",
                                   (unsigned long long)c[i].hdf5_page);
    }
    for (size_t i = 0; i + 1 < nr; i++)
        if (r[i] >= r[i + 1])
            return vfdswmr_errtext(err, errlen, "removals are not sorted at HDF5 page %llu", (unsigned long long)r[i]);
    return 0;
}

/*
 * Mark in drop[] the old entries that the changes supersede or the removals
 * name, and defer their space with `epoch` (the publishing one).
 */
static int
drop_superseded(vfdswmr_mdw_t *w, bool *drop, const vfdswmr_mdchange_t *c, size_t nc, const uint64_t *r, size_t nr,
                uint64_t epoch, char *err, size_t errlen)
{
    for (size_t i = 0; i < nc; i++) {
        uint64_t end = c[i].hdf5_page + vfdswmr_pages(c[i].length, w->o.page_size);
        for (uint32_t k = first_ending_after(w, c[i].hdf5_page); k < w->n && w->idx[k].hdf5_page < end; k++)
            drop[k] = true;
    }
    for (size_t i = 0; i < nr; i++) {
        uint32_t k = first_ending_after(w, r[i]);
        if (k < w->n && w->idx[k].hdf5_page == r[i])
            drop[k] = true;
    }
    for (uint32_t k = 0; k < w->n; k++)
        if (drop[k] && defer_entry(w, &w->idx[k], epoch) < 0)
            return vfdswmr_errtext(err, errlen, "out of memory");
    return 0;
}

/* The images written into the metadata file while helpers hash them. */
struct early {
    const vfdswmr_mdw_t *w;
    const vfdswmr_mdimage_t *im;
    size_t n;
    int err; /* errno of a failed write, else 0 */
};

static void
write_early(void *ctx)
{
    struct early *e = ctx;

    if (vfdswmr_mdplan_write_images(e->w->fd, e->im, e->n, e->w->o.page_size) < 0)
        e->err = errno ? errno : EIO;
}

/* Allocate space for the changes and describe them as images, with their
 * checksums (sumpool.h: helper threads share a large publish's). The
 * images go into the metadata file meanwhile (*written): nothing names
 * their new places before the index that emit() writes after them. */
static int
place_changes(vfdswmr_mdw_t *w, const vfdswmr_mdchange_t *c, size_t nc, vfdswmr_mdimage_t *images, bool *written,
              char *err, size_t errlen)
{
    struct early e = {.w = w, .im = images, .n = nc};

    for (size_t i = 0; i < nc; i++) {
        uint64_t page;
        if (vfdswmr_space_alloc(w->space, vfdswmr_pages(c[i].length, w->o.page_size), &page) < 0)
            return vfdswmr_errtext(err, errlen, "cannot allocate metadata file space");
        images[i] = (vfdswmr_mdimage_t){
            .md_page = page, .hdf5_page = c[i].hdf5_page, .length = c[i].length, .image = c[i].image};
    }
    vfdswmr_sumpool_checksums_while(images, nc, w->fd >= 0 && nc > 0 ? write_early : NULL, &e);
    if (e.err)
        return vfdswmr_errtext(err, errlen, "cannot write metadata file %s: %s", w->md_path, strerror(e.err));
    *written = w->fd >= 0;
    return 0;
}

/* The merged index: entries and their ranges. */
typedef struct merged_t {
    vfdswmr_mdentry_t *e;
    uint32_t n;
    vfdswmr_mdrange_t *r;
    uint32_t nr;
} merged_t;

/* Append entry e with its nr ranges r to m. */
static void
merge_add(merged_t *m, vfdswmr_mdentry_t e, const vfdswmr_mdrange_t *r, uint32_t nr)
{
    e.range_first = m->nr;
    e.nranges = nr;
    m->e[m->n++] = e;
    if (nr)
        memcpy(m->r + m->nr, r, (size_t)nr * sizeof *r);
    m->nr += nr;
}

/* Merge surviving old entries and the new images, both sorted by HDF5 page,
 * copying each one's ranges (an old entry's from the index, a new one's
 * from its change). */
static void
merge_index(const vfdswmr_mdw_t *w, const bool *drop, const vfdswmr_mdimage_t *im, const vfdswmr_mdchange_t *c,
            size_t nc, merged_t *m)
{
    uint32_t k = 0;
    size_t i = 0;

    while (k < w->n || i < nc) {
        while (k < w->n && drop[k])
            k++;
        if (i < nc && (k >= w->n || im[i].hdf5_page < w->idx[k].hdf5_page)) {
            merge_add(m,
                      (vfdswmr_mdentry_t){.hdf5_page = im[i].hdf5_page,
                                          .md_page = im[i].md_page,
                                          .length = im[i].length,
                                          .checksum = im[i].checksum},
                      c[i].ranges, c[i].nranges);
            i++;
        }
        else if (k < w->n) {
            merge_add(m, w->idx[k], w->idx[k].nranges ? w->ranges + w->idx[k].range_first : NULL, w->idx[k].nranges);
            k++;
        }
    }
}

/* Choose where the index goes: into the reserved-page slot the current
 * header does not name when it fits (format.h), else into freshly allocated
 * pages. Either way the index the current header names stays intact. The
 * space of a previously relocated index is deferred. Returns the byte
 * offset, or 0. */
static uint64_t
place_index(vfdswmr_mdw_t *w, size_t len, uint64_t epoch)
{
    uint64_t old_page = w->idx_page, old_pages = w->idx_pages, off;
    const uint32_t rp = w->o.reserved_pages, ps = w->o.page_size;

    if ((uint64_t)len <= vfdswmr_mdidx_slot_size(rp, ps)) {
        unsigned slot = w->hdr.index_offset == vfdswmr_mdidx_slot_offset(0, rp, ps) ? 1 : 0;
        w->idx_page = w->idx_pages = 0;
        off = vfdswmr_mdidx_slot_offset(slot, rp, ps);
    }
    else {
        uint64_t pages = vfdswmr_pages(len, w->o.page_size), page;
        if (vfdswmr_space_alloc(w->space, pages, &page) < 0)
            return 0;
        w->idx_page = page;
        w->idx_pages = pages;
        off = page * w->o.page_size;
    }
    if (old_pages && vfdswmr_space_defer(w->space, old_page, old_pages, epoch) < 0)
        return 0;
    /* the index the current header names is never overwritten (mdwriter.h) */
    VFDSWMR_ASSERT(w->hdr.index_length == 0 || off + len <= w->hdr.index_offset ||
                   w->hdr.index_offset + w->hdr.index_length <= off);
    return off;
}

/* Encode index and header of `tick` (of `epoch`) and send the plan to the sinks. */
static int
emit(vfdswmr_mdw_t *w, uint64_t tick, uint64_t epoch, uint64_t eoa, const merged_t *m, const vfdswmr_mdimage_t *images,
     size_t nimages, bool images_written, bool final, char *err, size_t errlen)
{
    vfdswmr_mdidx_t idx = {
        .session = w->o.session, .tick = tick, .nentries = m->n, .entries = m->e, .nranges = m->nr, .ranges = m->r};
    size_t len = vfdswmr_mdidx_size(m->n, m->nr);
    uint8_t *idx_image = malloc(len), hdr_image[VFDSWMR_MDHDR_SIZE];
    vfdswmr_mdhdr_t hdr = {.flags = final ? VFDSWMR_MDHDR_FINAL : 0,
                           .page_size = w->o.page_size,
                           .session = w->o.session,
                           .tick = tick,
                           .index_length = len,
                           .eoa = eoa,
                           .tick_len = w->o.tick_len,
                           .max_lag = w->o.max_lag,
                           .hdf5_id = w->o.hdf5_id,
                           .epoch = epoch};
    vfdswmr_mdplan_t plan = {.page_size = w->o.page_size,
                             .session = w->o.session,
                             .tick = tick,
                             .nimages = nimages,
                             .images = images,
                             .index_image = idx_image,
                             .index_len = len,
                             .header_image = hdr_image,
                             .images_written = images_written};
    int rc = -1;

    /* ticks increase by one per publish; tick 0 is the empty index of a new file (mdwriter.h) */
    VFDSWMR_ASSERT(tick == w->tick + 1 || (tick == 0 && w->tick == 0 && m->n == 0));
    /* epochs never decrease and never pass the tick (format.h) */
    VFDSWMR_ASSERT(epoch >= w->hdr.epoch && epoch <= tick);
    if (idx_image == NULL)
        return vfdswmr_errtext(err, errlen, "out of memory");
    if (0 == (hdr.index_offset = plan.index_offset = place_index(w, len, epoch))) {
        vfdswmr_errtext(err, errlen, "cannot allocate metadata file space for the index");
        goto done;
    }
    vfdswmr_mdidx_encode(&idx, idx_image);
    vfdswmr_mdhdr_encode(&hdr, hdr_image);
    w->tick = tick;
    /* Space superseded at epoch E is free for the publish after the one
     * whose epoch reaches E + keep (DESIGN.md "The lag is a time"). */
    vfdswmr_space_release(w->space, epoch, w->keep_lag > w->o.max_lag ? w->keep_lag : w->o.max_lag);
    if (sink_md(w, &plan, &hdr, err, errlen) < 0 ||
        sink_updater(w, &plan, final ? VFDSWMR_UD_FINAL : 0, err, errlen) < 0)
        goto done;
    rc = 0;
done:
    free(idx_image);
    return rc;
}

static int
publish(vfdswmr_mdw_t *w, uint64_t eoa, const vfdswmr_mdchange_t *changes, size_t nchanges, const uint64_t *removals,
        size_t nremovals, unsigned flags, char *err, size_t errlen)
{
    uint64_t tick = w->tick + 1, nranges = w->nranges, epoch = w->epoch_given ? w->next_epoch : tick;
    bool *drop = NULL, written = false;
    vfdswmr_mdimage_t *images = NULL;
    merged_t m = {0};
    int rc = -1;

    if (check_sorted(w, changes, nchanges, removals, nremovals, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < nchanges; i++)
        nranges += changes[i].nranges;
    if ((uint64_t)w->n + nchanges > UINT32_MAX || nranges > UINT32_MAX)
        return vfdswmr_errtext(err, errlen, "index would exceed 2^32 entries or ranges");
    drop = calloc((size_t)w->n + 1, sizeof *drop);
    images = calloc(nchanges + 1, sizeof *images);
    m.e = calloc((size_t)w->n + nchanges + 1, sizeof *m.e);
    m.r = calloc((size_t)nranges + 1, sizeof *m.r);
    if (!drop || !images || !m.e || !m.r) {
        vfdswmr_errtext(err, errlen, "out of memory");
        goto done;
    }
    if (drop_superseded(w, drop, changes, nchanges, removals, nremovals, epoch, err, errlen) < 0 ||
        place_changes(w, changes, nchanges, images, &written, err, errlen) < 0)
        goto done;
    merge_index(w, drop, images, changes, nchanges, &m);
    if (emit(w, tick, epoch, eoa, &m, images, nchanges, written, (flags & VFDSWMR_MDW_FINAL) != 0, err, errlen) < 0)
        goto done;
    free(w->idx);
    free(w->ranges);
    w->idx = m.e;
    w->n = m.n;
    w->ranges = m.r;
    w->nranges = m.nr;
    m.e = NULL;
    m.r = NULL;
    VFDSWMR_CHECK_INVARIANTS(&w->pace, check_index(w, &w->pace.size));
    rc = 0;
done:
    free(drop);
    free(images);
    free(m.e);
    free(m.r);
    return rc;
}

int
vfdswmr_mdw_publish(vfdswmr_mdw_t *w, uint64_t eoa, const vfdswmr_mdchange_t *changes, size_t nchanges,
                    const uint64_t *removals, size_t nremovals, unsigned flags, char *err, size_t errlen)
{
    return publish(w, eoa, changes, nchanges, removals, nremovals, flags, err, errlen);
}

int
vfdswmr_mdw_mark_failed(vfdswmr_mdw_t *w, char *err, size_t errlen)
{
    vfdswmr_mdhdr_t h = w->hdr;
    uint8_t image[VFDSWMR_MDHDR_SIZE];
    int rc = 0;

    if (w->fd < 0 || (h.flags & (VFDSWMR_MDHDR_FINAL | VFDSWMR_MDHDR_FAILED)))
        return 0;
    h.flags |= VFDSWMR_MDHDR_FAILED;
    vfdswmr_mdhdr_encode(&h, image);
    if (vfdswmr_pwrite_all(w->fd, image, sizeof image, 0) < 0 || (w->o.durable && fdatasync(w->fd) < 0))
        rc = vfdswmr_errtext(err, errlen, "cannot mark metadata file %s failed: %s", w->md_path, strerror(errno));
    else
        w->hdr = h;
    return rc;
}

/* ---- open / close -------------------------------------------------------- */

static int
check_opts(const vfdswmr_mdw_opts_t *o, char *err, size_t errlen)
{
    const char *why = NULL;

    if (!vfdswmr_page_size_valid(o->page_size))
        why = "page size must be a power of two from 512 bytes to 1 GiB";
    else if (o->reserved_pages == 0)
        why = "md_pages_reserved must be at least 1";
    else if (o->max_lag < 3)
        why = "max_lag must be at least 3";
    else if (o->md_path == NULL && o->ud_base == NULL)
        why = "neither a metadata file nor updater files requested";
    return why ? vfdswmr_errtext(err, errlen, "%s", why) : 0;
}

/*
 * Create the metadata file whole under an unpredictable temporary name
 * (never following a planted link), take its writer lock before anyone can
 * see it, and write tick 0. vfdswmr_mdw_link() gives it its name.
 */
static int
create_md_file(vfdswmr_mdw_t *w, char *err, size_t errlen)
{
    char tmp[4096 + 64];
    struct stat st;
    int fd, rc = 0;
    vfdswmr_take_t lk;

    if ((fd = vfdswmr_create_temp(w->md_path, tmp, sizeof tmp, 0644)) < 0)
        return vfdswmr_errtext(err, errlen, "cannot create metadata file %s: %s", w->md_path, strerror(errno));
    w->fd = fd;
    if (NULL == (w->tmp_path = strdup(tmp))) {
        unlink(tmp);
        return vfdswmr_errtext(err, errlen, "out of memory");
    }
    if ((lk = vfdswmr_mdlock_take(fd)) != VFDSWMR_TAKEN) {
        int e = errno;
        unlink(tmp);
        return vfdswmr_errtext(err, errlen, "cannot lock metadata file %s: %s", tmp,
                               lk == VFDSWMR_TAKE_BUSY ? "locked by another process" : strerror(e));
    }
    if (fstat(fd, &st) < 0) {
        int e = errno;
        unlink(tmp);
        return vfdswmr_errtext(err, errlen, "cannot stat metadata file %s: %s", tmp, strerror(e));
    }
    w->dev = st.st_dev;
    w->ino = st.st_ino;
    w->file_pages = w->o.reserved_pages;
    if (ftruncate(fd, (off_t)((uint64_t)w->o.reserved_pages * w->o.page_size)) < 0)
        rc = vfdswmr_errtext(err, errlen, "cannot write metadata file %s: %s", tmp, strerror(errno));
    else if (emit(w, 0, 0, 0, &(merged_t){0}, NULL, 0, false, false, err, errlen) < 0)
        rc = -1;
    else if (w->o.durable && fsync(fd) < 0)
        rc = vfdswmr_errtext(err, errlen, "cannot sync metadata file %s: %s", tmp, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    return rc;
}

int
vfdswmr_mdw_link(vfdswmr_mdw_t *w, bool replace, char *err, size_t errlen)
{
    int rc;

    if (w->fd < 0 || w->linked)
        return 0;
    rc = replace ? rename(w->tmp_path, w->md_path) : link(w->tmp_path, w->md_path);
    if (rc < 0) {
        int e = errno;
        if (e == EEXIST)
            return vfdswmr_errtext(err, errlen,
                                   "metadata file %s already exists: another writer has just opened this file; "
                                   "nothing was changed",
                                   w->md_path);
        return vfdswmr_errtext(err, errlen, "cannot create metadata file %s: %s", w->md_path, strerror(e));
    }
    if (!replace)
        unlink(w->tmp_path);
    if (w->o.durable)
        vfdswmr_fsync_dir_of(w->md_path);
    w->linked = true;
    return 0;
}

int
vfdswmr_mdw_go_live(vfdswmr_mdw_t *w, char *err, size_t errlen)
{
    int rc = 0;

    w->ud_hold = false;
    for (size_t i = 0; i < w->nheld; i++) {
        struct held_ud *h = &w->held[i];
        if (rc == 0 && vfdswmr_updater_write(w->ud_base, h->seq, h->buf, h->len, w->o.durable) < 0)
            rc = vfdswmr_errtext(err, errlen, "cannot write updater file %s.%llu: %s", w->ud_base,
                                 (unsigned long long)h->seq, strerror(errno));
        if (rc == 0)
            retire_updaters(w, h->seq, h->epoch);
        free(h->buf);
    }
    free(w->held);
    w->held = NULL;
    w->nheld = 0;
    return rc;
}

void
vfdswmr_mdw_forget(vfdswmr_mdw_t *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

int
vfdswmr_mdw_file_id(const vfdswmr_mdw_t *w, dev_t *dev, ino_t *ino)
{
    if (w->fd < 0)
        return -1;
    *dev = w->dev;
    *ino = w->ino;
    return 0;
}

void
vfdswmr_mdw_set_keep_lag(vfdswmr_mdw_t *w, uint32_t lag)
{
    w->keep_lag = lag;
}

void
vfdswmr_mdw_set_epoch(vfdswmr_mdw_t *w, uint64_t epoch)
{
    w->epoch_given = true;
    w->next_epoch = epoch;
}

int
vfdswmr_mdw_set_hdf5_id(vfdswmr_mdw_t *w, uint64_t hdf5_id)
{
    uint8_t image[VFDSWMR_MDHDR_SIZE];

    w->o.hdf5_id = hdf5_id;
    if (w->fd < 0 || w->tick != 0 || w->hdr.hdf5_id == hdf5_id)
        return 0;
    /* tick 0 (empty, written before the HDF5 file was opened) names it
     * from now on: one write of the whole header, which a reader reading
     * it meanwhile sees whole or retries (checksum) */
    VFDSWMR_ASSERT(w->n == 0);
    w->hdr.hdf5_id = hdf5_id;
    vfdswmr_mdhdr_encode(&w->hdr, image);
    if (vfdswmr_pwrite_all(w->fd, image, sizeof image, 0) < 0 || (w->o.durable && fdatasync(w->fd) < 0))
        return -1;
    return 0;
}

/* Remove the metadata file -- only while its name is still ours (a writer
 * of a file that was deleted and created anew may have replaced it). */
static int
remove_md_file(vfdswmr_mdw_t *w)
{
    struct stat st;

    if (!w->linked)
        return unlink(w->tmp_path);
    if (stat(w->md_path, &st) < 0 || st.st_dev != w->dev || st.st_ino != w->ino)
        return 0;
    return unlink(w->md_path);
}

static void
mdw_free(vfdswmr_mdw_t *w)
{
    for (size_t i = 0; i < w->nheld; i++)
        free(w->held[i].buf);
    free(w->held);
    vfdswmr_space_destroy(w->space);
    free(w->idx);
    free(w->ranges);
    free(w->ud_epochs);
    free(w->md_path);
    free(w->tmp_path);
    free(w->ud_base);
    free(w);
}

int
vfdswmr_mdw_open(const vfdswmr_mdw_opts_t *opts, vfdswmr_mdw_t **out, char *err, size_t errlen)
{
    vfdswmr_mdw_t *w;

    *out = NULL;
    if (check_opts(opts, err, errlen) < 0)
        return -1;
    if (NULL == (w = calloc(1, sizeof *w)))
        return vfdswmr_errtext(err, errlen, "out of memory");
    w->o = *opts;
    w->fd = -1;
    while (w->o.session == 0)
        if (getrandom(&w->o.session, sizeof w->o.session, 0) != sizeof w->o.session) {
            free(w);
            return vfdswmr_errtext(err, errlen, "cannot draw a session identifier: %s", strerror(errno));
        }
    w->md_path = opts->md_path ? strdup(opts->md_path) : NULL;
    w->ud_base = opts->ud_base ? strdup(opts->ud_base) : NULL;
    w->ud_hold = opts->defer_link;
    w->space = vfdswmr_space_new(opts->reserved_pages);
    if ((opts->md_path && !w->md_path) || (opts->ud_base && !w->ud_base) || !w->space) {
        vfdswmr_errtext(err, errlen, "out of memory");
        goto fail;
    }
    if (w->ud_base && sink_updater(w, NULL, VFDSWMR_UD_CREATE_ONLY, err, errlen) < 0)
        goto fail;
    if (w->md_path ? create_md_file(w, err, errlen) < 0
                   : emit(w, 0, 0, 0, &(merged_t){0}, NULL, 0, false, false, err, errlen) < 0)
        goto fail;
    /* create_md_file emitted tick 0 before the file has its name; the
     * updater of tick 0 was written then too. */
    if (w->fd >= 0 && !opts->defer_link && vfdswmr_mdw_link(w, false, err, errlen) < 0)
        goto fail;
    *out = w;
    return 0;
fail:
    if (w->tmp_path && !w->linked)
        unlink(w->tmp_path);
    if (w->fd >= 0)
        close(w->fd);
    mdw_free(w);
    return -1;
}

int
vfdswmr_mdw_close(vfdswmr_mdw_t *w, bool keep_md, char *err, size_t errlen)
{
    int rc = 0;

    if (w->fd >= 0) {
        if (w->o.durable && fsync(w->fd) < 0)
            rc = vfdswmr_errtext(err, errlen, "cannot sync metadata file %s: %s", w->md_path, strerror(errno));
        /* removed while still locked: no other writer ever finds it unlocked */
        if ((!keep_md || !w->linked) && remove_md_file(w) < 0)
            rc = vfdswmr_errtext(err, errlen, "cannot remove metadata file %s: %s", w->md_path, strerror(errno));
        if (close(w->fd) < 0)
            rc = vfdswmr_errtext(err, errlen, "cannot close metadata file %s: %s", w->md_path, strerror(errno));
    }
    mdw_free(w);
    return rc;
}

uint64_t
vfdswmr_mdw_tick(const vfdswmr_mdw_t *w)
{
    return w->tick;
}
uint64_t
vfdswmr_mdw_session(const vfdswmr_mdw_t *w)
{
    return w->o.session;
}
uint64_t
vfdswmr_mdw_file_pages(const vfdswmr_mdw_t *w)
{
    return w->file_pages;
}
bool
vfdswmr_mdw_index_relocated(const vfdswmr_mdw_t *w)
{
    return w->idx_pages != 0;
}
uint64_t
vfdswmr_mdw_next_sequence(const vfdswmr_mdw_t *w)
{
    return w->sequence;
}

const vfdswmr_mdentry_t *
vfdswmr_mdw_index(const vfdswmr_mdw_t *w, uint32_t *n)
{
    *n = w->n;
    return w->idx;
}

const vfdswmr_mdrange_t *
vfdswmr_mdw_ranges(const vfdswmr_mdw_t *w, uint32_t *n)
{
    *n = w->nranges;
    return w->ranges;
}

const vfdswmr_mdhdr_t *
vfdswmr_mdw_header(const vfdswmr_mdw_t *w)
{
    return &w->hdr;
}

/* ---- check_index(): the invariant builds' check of the published index --- */

static int
cmp_extent(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/*
 * The published index as mdwriter.h and format.h state it: entries sorted
 * by HDF5 page and not overlapping there, each entry's ranges where its
 * range_first says, sorted, disjoint and inside its image; every image --
 * and a relocated index -- in metadata file space that is allocated (never
 * free, deferred or reserved) and shared with nothing else the index
 * names. NULL when it holds, else what is broken; *size gets the entries.
 */
VFDSWMR_CHECKER const char *
check_index(const vfdswmr_mdw_t *w, uint64_t *size)
{
    const uint32_t ps = w->o.page_size;
    uint64_t(*ext)[2], next_range = 0;
    size_t n = 0;
    const char *err = NULL;

    *size = w->n;
    for (uint32_t k = 0; k < w->n; k++) {
        const vfdswmr_mdentry_t *e = &w->idx[k];
        vfdswmr_mdchange_t as_change = {
            .length = e->length, .nranges = e->nranges, .ranges = e->nranges ? w->ranges + e->range_first : NULL};
        if (k > 0 && w->idx[k - 1].hdf5_page + vfdswmr_pages(w->idx[k - 1].length, ps) > e->hdf5_page)
            return "index entries not sorted by HDF5 page, or overlapping there";
        if (e->length == 0 || e->range_first != next_range || e->nranges > w->nranges - next_range ||
            !ranges_ok(&as_change))
            return "an index entry's metadata ranges are misplaced, unsorted, overlapping or outside its image";
        next_range += e->nranges;
    }
    if (next_range != w->nranges)
        return "the index's range count is not the sum of its entries'";
    if (NULL == (ext = malloc(((size_t)w->n + 1) * sizeof *ext)))
        return "out of memory while checking";
    for (uint32_t k = 0; k < w->n; k++)
        ext[n][0] = w->idx[k].md_page, ext[n++][1] = vfdswmr_pages(w->idx[k].length, ps);
    if (w->idx_pages)
        ext[n][0] = w->idx_page, ext[n++][1] = w->idx_pages;
    qsort(ext, n, sizeof *ext, cmp_extent);
    for (size_t i = 0; i < n && err == NULL; i++)
        if (!vfdswmr_space_allocated(w->space, ext[i][0], ext[i][1]))
            err = "the index names metadata file space that is not allocated (free, deferred or reserved)";
        else if (i > 0 && ext[i - 1][0] + ext[i - 1][1] > ext[i][0])
            err = "two images named by the index (or the index itself) share metadata file pages";
    free(ext);
    return err;
}
