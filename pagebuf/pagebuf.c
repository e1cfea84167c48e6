/*
 * Page buffer of the writer driver; see pagebuf.h for the states and the
 * invariants. Pages live in a red-black tree by page number; pages changed
 * since the last consistency point and pages waiting for a publish are also
 * on lists, so consistency points and publishes cost O(pages involved).
 *
 * Invariant builds (common/check.h) run check_all() -- the page states and
 * counters -- after every change (write, raw write, consistency point,
 * prepare, published, store), paced when there are many pages.
 */
#include "pagebuf.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>

#include "check.h"
#include "grow.h"

struct pbpage {
    RB_ENTRY(pbpage) link;            /* in pb->tree unless `gone` */
    TAILQ_ENTRY(pbpage) changed_link; /* on pb->changed while `changed` */
    TAILQ_ENTRY(pbpage) pending_link; /* on pb->pending while `snap` != NULL */
    TAILQ_ENTRY(pbpage) flying_link;  /* on pb->flying while `fly` != NULL */
    uint64_t page;
    uint8_t *cur, *snap, *pub;
    uint8_t *fly;  /* handed to the publish under way: read by it, never written here */
    uint8_t *fix;  /* fly plus the raw data written over it since: becomes pub */
    bool fix_lost; /* raw data was written over fly and no fix could be made: fly is stale */
    bool changed;
    bool gone; /* dropped while in flight: freed by published() */
    /* Raw data was written over bytes the page's image in the index (or in
     * flight) may mark as metadata: readers of the newest snapshot read
     * there what neither memory nor the HDF5 file holds any more (the old
     * metadata bytes), until the page is published again. */
    bool view_stale;
    /* keep_old made it hold freed space's old bytes for the consistency
     * point before the free: it stays in the index until a consistency
     * point numbered hold_cp (taken after the free) is published, however
     * many ticks publish the older one again. 0: no hold. */
    uint64_t hold_cp;
    uint64_t in_index, pub_tick, flushed;
};

RB_HEAD(pbtree, pbpage);
TAILQ_HEAD(pblist, pbpage);

/* A freed image kept for reuse: the link lives in the image's own bytes. */
struct spare {
    SLIST_ENTRY(spare) link;
};
SLIST_HEAD(sparelist, spare);

static int
page_cmp(const struct pbpage *a, const struct pbpage *b)
{
    return (a->page > b->page) - (a->page < b->page);
}

RB_GENERATE_INTERNAL(pbtree, pbpage, link, page_cmp, __attribute__((__unused__)) static)

enum { SPARE_MIN = 16, TRACKED_BUCKETS = 1u << 14 };

struct vfdswmr_pagebuf {
    uint32_t ps;
    size_t img_size; /* ps image bytes + ps / 8 bytes of metadata map */
    struct pbtree tree;
    struct pblist changed, pending, flying;
    bool in_flight; /* between prepare() and published() */
    /* Consistency points taken, the one the publish under way carries, and
     * the one published last (hold_cp). */
    uint64_t cps, fly_cps, pub_cps;
    uint64_t npages, nimages, nindex, npending;
    /* Freed images kept for the next ones (a writer that publishes at every
     * flush makes and frees an image per changed page each time); at most
     * half the images in use, plus SPARE_MIN. */
    struct sparelist spares;
    uint64_t nspares;
    /* Tracked pages per bucket (page % TRACKED_BUCKETS): a page whose bucket
     * is empty is not tracked, found without a tree search -- most raw-data
     * writes. */
    uint32_t tracked[TRACKED_BUCKETS];
    /* The next publish, built by prepare(), consumed by published(). */
    vfdswmr_mdchange_t *changes;
    size_t nchanges, cap_changes;
    uint64_t *removals;
    size_t nremovals, cap_removals;
    vfdswmr_mdrange_t *ranges; /* the metadata ranges of the next publish's changes */
    size_t nranges, cap_ranges;
    /* Pages dropped (freed space) while in the index: removals of the next publish. */
    uint64_t *dropped;
    size_t ndropped, cap_dropped;
#ifdef VFDSWMR_INVARIANTS
    vfdswmr_pace_t pace; /* when the next check_all() is due */
#endif
};

VFDSWMR_CHECKER const char *check_all(const vfdswmr_pagebuf_t *pb, uint64_t *npages);
/* The page states and counters after a change (invariant builds only). */
#define CHECK_PB(pb) VFDSWMR_CHECK_INVARIANTS(&(pb)->pace, check_all((pb), &(pb)->pace.size))

static uint32_t *
bucket(vfdswmr_pagebuf_t *pb, uint64_t page)
{
    return &pb->tracked[page % TRACKED_BUCKETS];
}

/* An image (contents undefined), a spare one when there is one; the caller
 * counts it in nimages. */
static uint8_t *
new_image(vfdswmr_pagebuf_t *pb)
{
    struct spare *sp = SLIST_FIRST(&pb->spares);

    if (sp == NULL)
        return malloc(pb->img_size);
    SLIST_REMOVE_HEAD(&pb->spares, link);
    pb->nspares--;
    return (uint8_t *)sp;
}

vfdswmr_pagebuf_t *
vfdswmr_pb_new(uint32_t page_size)
{
    vfdswmr_pagebuf_t *pb = calloc(1, sizeof *pb);

    if (pb == NULL)
        return NULL;
    VFDSWMR_ASSERT(page_size % 64 == 0); /* map_next reads the map 64 bits at a time */
    pb->ps = page_size;
    pb->img_size = page_size + page_size / 8;
    RB_INIT(&pb->tree);
    TAILQ_INIT(&pb->changed);
    TAILQ_INIT(&pb->pending);
    TAILQ_INIT(&pb->flying);
    SLIST_INIT(&pb->spares);
    return pb;
}

static void
free_image(vfdswmr_pagebuf_t *pb, uint8_t **img)
{
    if (*img) {
        pb->nimages--;
        if (pb->nspares < pb->nimages / 2 + SPARE_MIN) {
            SLIST_INSERT_HEAD(&pb->spares, (struct spare *)(void *)*img, link);
            pb->nspares++;
        }
        else
            free(*img);
        *img = NULL;
    }
}

/* Forget a page. One in flight stays on pb->flying, `gone`, until
 * published() (the publish under way still reads its fly image). */
static void
drop_page(vfdswmr_pagebuf_t *pb, struct pbpage *p)
{
    if (p->changed)
        TAILQ_REMOVE(&pb->changed, p, changed_link);
    p->changed = false;
    if (p->snap) {
        TAILQ_REMOVE(&pb->pending, p, pending_link);
        pb->npending--;
    }
    if (p->in_index)
        pb->nindex--;
    p->in_index = 0;
    free_image(pb, &p->cur);
    free_image(pb, &p->snap);
    free_image(pb, &p->pub);
    free_image(pb, &p->fix);
    RB_REMOVE(pbtree, &pb->tree, p);
    --*bucket(pb, p->page);
    pb->npages--;
    if (p->fly) {
        p->gone = true;
        return;
    }
    free(p);
}

/* Free a page dropped while in flight, and its fly image. */
static void
free_gone(vfdswmr_pagebuf_t *pb, struct pbpage *p)
{
    TAILQ_REMOVE(&pb->flying, p, flying_link);
    free_image(pb, &p->fly);
    free(p);
}

void
vfdswmr_pb_destroy(vfdswmr_pagebuf_t *pb)
{
    struct pbpage *p, *next;

    if (pb == NULL)
        return;
    RB_FOREACH_SAFE (p, pbtree, &pb->tree, next)
        drop_page(pb, p);
    while ((p = TAILQ_FIRST(&pb->flying)) != NULL) /* a publish that never completed */
        free_gone(pb, p);
    for (struct spare *sp; (sp = SLIST_FIRST(&pb->spares)) != NULL;) {
        SLIST_REMOVE_HEAD(&pb->spares, link);
        free(sp);
    }
    free(pb->changes);
    free(pb->ranges);
    free(pb->removals);
    free(pb->dropped);
    free(pb);
}

static struct pbpage *
find(const vfdswmr_pagebuf_t *pb, uint64_t page)
{
    struct pbpage key = {.page = page};

    if (pb->tracked[page % TRACKED_BUCKETS] == 0)
        return NULL;
    return RB_FIND(pbtree, (struct pbtree *)&pb->tree, &key);
}

/* The page's current image, created from the HDF5 file when needed. */
static struct pbpage *
page_for_write(vfdswmr_pagebuf_t *pb, uint64_t page, vfdswmr_pb_fill_t fill, void *ctx)
{
    struct pbpage *p = find(pb, page);
    bool fresh = p == NULL;

    if (fresh) {
        if (NULL == (p = calloc(1, sizeof *p)))
            return NULL;
        p->page = page;
    }
    if (p->cur == NULL) {
        /* a fresh image: the file's bytes, none of them known to be metadata yet */
        if (NULL != (p->cur = new_image(pb)))
            memset(p->cur, 0, pb->img_size);
        if (p->cur == NULL || fill(ctx, page, p->cur) < 0) {
            free(p->cur);
            p->cur = NULL;
            if (fresh)
                free(p);
            return NULL;
        }
        pb->nimages++;
    }
    if (fresh) {
        RB_INSERT(pbtree, &pb->tree, p);
        ++*bucket(pb, page);
        pb->npages++;
    }
    return p;
}

/* Mark bytes [off, off + n) of a page's map as metadata (or not). */
static void
map_set(uint8_t *map, uint32_t off, size_t n, bool meta)
{
    uint32_t end = off + (uint32_t)n;

    for (; off < end && off % 8; off++)
        map[off / 8] = meta ? map[off / 8] | (uint8_t)(1u << off % 8) : map[off / 8] & (uint8_t) ~(1u << off % 8);
    if (end - off >= 8) {
        memset(map + off / 8, meta ? 0xff : 0, (end - off) / 8);
        off += (end - off) / 8 * 8;
    }
    for (; off < end; off++)
        map[off / 8] = meta ? map[off / 8] | (uint8_t)(1u << off % 8) : map[off / 8] & (uint8_t) ~(1u << off % 8);
}

/* The first byte in [i, end) whose map bit is `meta`, or end when none (end
 * at most the page size): 64 bits a step. Bit i of a map is bit i % 8 of
 * byte i / 8, so the 8 bytes from i / 64 * 8 read as a little-endian word
 * hold it at bit i % 64; the map is page size / 8 bytes, a multiple of 8. */
static uint32_t
map_next(const uint8_t *map, uint32_t i, uint32_t end, bool meta)
{
    while (i < end) {
        uint64_t word;
        memcpy(&word, map + i / 64 * 8, sizeof word);
        word = le64toh(word);
        if (!meta)
            word = ~word;
        word &= ~(uint64_t)0 << (i % 64); /* bits from i on */
        if (word) {
            uint32_t at = i / 64 * 64 + (uint32_t)__builtin_ctzll(word);
            return at < end ? at : end;
        }
        i = (i / 64 + 1) * 64;
    }
    return end;
}

/* Is any of bytes [off, off + n) marked as metadata? */
static bool
map_any(const uint8_t *map, uint32_t off, size_t n)
{
    return map_next(map, off, off + (uint32_t)n, true) < off + n;
}

int
vfdswmr_pb_write(vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, const void *buf, vfdswmr_pb_fill_t fill, void *ctx)
{
    const uint8_t *src = buf;

    while (len > 0) {
        uint64_t page = addr / pb->ps, off = addr % pb->ps;
        size_t n = (size_t)(pb->ps - off) < len ? (size_t)(pb->ps - off) : len;
        struct pbpage *p = page_for_write(pb, page, fill, ctx);

        if (p == NULL)
            return -1;
        memcpy(p->cur + off, src, n);
        map_set(p->cur + pb->ps, off, n, true);
        if (!p->changed) {
            p->changed = true;
            TAILQ_INSERT_TAIL(&pb->changed, p, changed_link);
        }
        src += n;
        addr += n;
        len -= n;
    }
    CHECK_PB(pb);
    return 0;
}

/* Call fn for the part of each tracked page inside [addr, addr + len):
 * page offset `off`, offset `boff` into the caller's buffer, `n` bytes. */
typedef void (*overlap_fn)(struct pbpage *p, uint32_t off, size_t boff, size_t n, void *arg);

/* fn's part of page p, which overlaps [addr, end). */
static void
overlap_part(const vfdswmr_pagebuf_t *pb, struct pbpage *p, uint64_t addr, uint64_t end, overlap_fn fn, void *arg)
{
    uint64_t from = p->page * pb->ps, to = from + pb->ps;

    if (from < addr)
        from = addr;
    if (to > end)
        to = end;
    VFDSWMR_ASSERT(from < to);
    fn(p, (uint32_t)(from - p->page * pb->ps), (size_t)(from - addr), (size_t)(to - from), arg);
}

/* The cost follows the smaller of the range's pages and the tracked ones: a
 * range of few pages looks each up (an empty bucket answers at once: most
 * raw-data writes), a longer one walks the tree from its first page. A
 * large raw-data write thus costs a tree search, not a look-up per page. */
static void
for_each_overlap(const vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, overlap_fn fn, void *arg)
{
    uint64_t end = addr + len, first = addr / pb->ps, last = (end - 1) / pb->ps;
    struct pbpage *p;

    if (len == 0 || len > UINT64_MAX - addr || pb->npages == 0)
        return; /* (a range past the address space reaches no page, as before) */
    if (last - first < pb->npages) {
        for (uint64_t page = first; page <= last; page++)
            if ((p = find(pb, page)) != NULL)
                overlap_part(pb, p, addr, end, fn, arg);
        return;
    }
    struct pbpage key = {.page = first};
    for (p = RB_NFIND(pbtree, (struct pbtree *)&pb->tree, &key); p && p->page <= last;
         p = RB_NEXT(pbtree, (struct pbtree *)&pb->tree, p))
        overlap_part(pb, p, addr, end, fn, arg);
}

struct raw_arg {
    vfdswmr_pagebuf_t *pb;
    const uint8_t *buf;
    int rc;
};

/* Raw bytes replace whatever the images held there, and are not metadata.
 * The fly image is the publish's: a page in flight gets its own copy (fix),
 * which takes the raw bytes and becomes pub when the publish completes. When
 * the copy cannot be made, the other images still take the raw bytes (close
 * writes cur), and fly never becomes pub (published()). */
static void
raw_into_images(struct pbpage *p, uint32_t off, size_t boff, size_t n, void *arg)
{
    struct raw_arg *ra = arg;
    uint32_t ps = ra->pb->ps;

    if (p->fly && p->fix == NULL && !p->fix_lost) {
        if (NULL == (p->fix = new_image(ra->pb))) {
            p->fix_lost = true;
            ra->rc = -1;
        }
        else {
            memcpy(p->fix, p->fly, ra->pb->img_size);
            ra->pb->nimages++;
        }
    }
    /* Metadata (or versioned raw) bytes become raw: an image published or
     * being published names them as metadata, and readers read those bytes
     * from it (vfd-swmr-reader/pages.c). Unless a snapshot waits that
     * takes the raw bytes (snap, below), the next consistency point
     * publishes the page again. */
    if ((p->in_index || p->fly) && map_any(p->cur + ps, off, n)) {
        p->view_stale = true;
        if (!p->changed && p->snap == NULL) {
            p->changed = true;
            TAILQ_INSERT_TAIL(&ra->pb->changed, p, changed_link);
        }
    }
    uint8_t *imgs[4] = {p->cur, p->snap, p->pub, p->fix};
    for (int i = 0; i < 4; i++)
        if (imgs[i]) {
            memcpy(imgs[i] + off, ra->buf + boff, n);
            map_set(imgs[i] + ps, off, n, false);
        }
}

int
vfdswmr_pb_write_raw(vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, const void *buf)
{
    struct raw_arg ra = {pb, buf, 0};

    for_each_overlap(pb, addr, len, raw_into_images, &ra);
    CHECK_PB(pb);
    return ra.rc;
}

static void
cur_into_buf(struct pbpage *p, uint32_t off, size_t boff, size_t n, void *arg)
{
    if (p->cur)
        memcpy((uint8_t *)arg + boff, p->cur + off, n);
}

void
vfdswmr_pb_read(const vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, void *buf)
{
    for_each_overlap(pb, addr, len, cur_into_buf, buf);
}

/* Does map b mark every byte map a marks (maps of `bytes` bytes)? */
static bool
map_within(const uint8_t *a, const uint8_t *b, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (a[i] & ~b[i])
            return false;
    return true;
}

/* Are all of bytes [off, off + n) marked as metadata? */
static bool
map_all(const uint8_t *map, uint32_t off, size_t n)
{
    return map_next(map, off, off + (uint32_t)n, false) == off + n;
}

/* Does the newest snapshot -- the published one, and the one waiting, if
 * any -- already serve bytes [off, off + n) of page p from its images? */
static bool
kept_already(const struct pbpage *p, uint32_t ps, uint32_t off, size_t n)
{
    return p && p->pub && map_all(p->pub + ps, off, n) && (p->snap == NULL || map_all(p->snap + ps, off, n));
}

/* Can keep_old make the newest snapshot's view of page p from memory and
 * the HDF5 file? Not for an indexed page without a waiting snapshot whose
 * image in the index raw data overwrote since (view_stale), that never got
 * a published image it could write (fix_lost), or whose image went to the
 * HDF5 file and changed since: that image lives only in the metadata file
 * (the file may not hold it whole: stores stop at the file's end, and the
 * file may have been cut since). */
static bool
view_known(const struct pbpage *p)
{
    return p == NULL || !p->in_index || p->snap || (!p->view_stale && (p->pub || (p->flushed && !p->changed)));
}

int
vfdswmr_pb_keep_old(vfdswmr_pagebuf_t *pb, uint64_t addr, uint64_t len, vfdswmr_pb_fill_t fill, void *ctx, size_t *kept)
{
    uint64_t a, end = addr + len;

    *kept = 0;
    if (pb->in_flight)
        return -1; /* a caller's bug: the publish under way holds the pages' images */
    /* first whether it can be done at all, so that nothing changes when not */
    for (a = addr; a < end;) {
        uint32_t off = (uint32_t)(a % pb->ps);
        size_t n = (size_t)(pb->ps - off < end - a ? pb->ps - off : end - a);
        const struct pbpage *p = find(pb, a / pb->ps);
        if (p && !kept_already(p, pb->ps, off, n) && !view_known(p))
            return 1;
        a += n;
    }
    for (a = addr; a < end; a += pb->ps - a % pb->ps) {
        uint64_t page = a / pb->ps;
        uint32_t off = (uint32_t)(a % pb->ps);
        size_t n = (size_t)(pb->ps - off < end - a ? pb->ps - off : end - a);
        struct pbpage *p = find(pb, page);

        if (p == NULL)
            continue; /* untracked: the caller's (pagebuf.h) */
        if (kept_already(p, pb->ps, off, n)) {
            p->hold_cp = pb->cps + 1; /* its image must stay in the index as well */
            continue;
        }
        if (NULL == (p = page_for_write(pb, page, fill, ctx)))
            return -1;
        if (p->snap == NULL) {
            /* What a reader of the newest snapshot reads in this page
             * (view_known): the published image as raw data kept it (pub),
             * else -- in the index, written to the HDF5 file and unchanged
             * since -- the current image (its map is the published one),
             * else (not in the index) the HDF5 file's bytes. */
            if (NULL == (p->snap = new_image(pb)))
                return -1;
            pb->nimages++;
            if (p->pub)
                memcpy(p->snap, p->pub, pb->img_size);
            else if (p->in_index) /* written to the HDF5 file, unchanged since (view_known) */
                memcpy(p->snap, p->cur, pb->img_size);
            else {
                memset(p->snap, 0, pb->img_size);
                if (fill(ctx, page, p->snap) < 0) {
                    free_image(pb, &p->snap);
                    return -1;
                }
            }
            TAILQ_INSERT_TAIL(&pb->pending, p, pending_link);
            pb->npending++;
        }
        map_set(p->snap + pb->ps, off, n, true);
        p->hold_cp = pb->cps + 1;
        /* raw data written there later makes the page changed (raw_into_images) */
        map_set(p->cur + pb->ps, off, n, true);
        ++*kept;
    }
    CHECK_PB(pb);
    return 0;
}

bool
vfdswmr_pb_tracked(const vfdswmr_pagebuf_t *pb, uint64_t page)
{
    return find(pb, page) != NULL;
}

int
vfdswmr_pb_consistency_point(vfdswmr_pagebuf_t *pb, uint64_t eoa)
{
    struct pbpage *p, *next;

    pb->cps++;
    TAILQ_FOREACH_SAFE (p, &pb->changed, changed_link, next) {
        if (p->page * pb->ps >= eoa) {   /* freed space: forget it, leave the index */
            if (p->in_index || p->fly) { /* in flight: the publish under way adds it to the index */
                if (vfdswmr_grow((void **)&pb->dropped, &pb->cap_dropped, pb->ndropped + 1, sizeof *pb->dropped) < 0)
                    return -1;
                pb->dropped[pb->ndropped++] = p->page;
            }
            drop_page(pb, p);
            continue;
        }
        if (p->snap == NULL) {
            if (NULL == (p->snap = new_image(pb)))
                return -1;
            pb->nimages++;
            TAILQ_INSERT_TAIL(&pb->pending, p, pending_link);
            pb->npending++;
        }
        memcpy(p->snap, p->cur, pb->img_size);
        p->changed = false;
        TAILQ_REMOVE(&pb->changed, p, changed_link);
    }
    CHECK_PB(pb);
    return 0;
}

static int
cmp_change(const void *a, const void *b)
{
    const vfdswmr_mdchange_t *x = a, *y = b;
    return (x->hdf5_page > y->hdf5_page) - (x->hdf5_page < y->hdf5_page);
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* May page p leave the index at `tick`, the consistency point numbered
 * pub_cps being published last? */
static bool
removable(const struct pbpage *p, uint64_t tick, uint32_t max_lag, bool all, uint64_t pub_cps)
{
    if (!p->in_index || p->snap || p->fly)
        return false;
    if (all)
        return true;
    if (p->hold_cp > pub_cps)
        return false; /* readers of the older consistency point read the kept bytes from its image */
    return p->flushed && !p->changed && !p->pub && tick >= p->flushed + max_lag;
}

/* Append the runs of metadata bytes of one image's map to pb->ranges. */
static int
map_ranges(vfdswmr_pagebuf_t *pb, const uint8_t *map, uint32_t *count)
{
    uint32_t i = 0;

    *count = 0;
    while ((i = map_next(map, i, pb->ps, true)) < pb->ps) {
        uint32_t start = i;
        i = map_next(map, i, pb->ps, false);
        VFDSWMR_ASSERT(i > start && i <= pb->ps);
        if (vfdswmr_grow((void **)&pb->ranges, &pb->cap_ranges, pb->nranges + 1, sizeof *pb->ranges) < 0)
            return -1;
        pb->ranges[pb->nranges++] = (vfdswmr_mdrange_t){.offset = start, .length = i - start};
        (*count)++;
    }
    return 0;
}

/* The metadata ranges of each of the n changes (pb->ranges may move while
 * it grows, so the pointers are set once it is complete). */
static int
collect_ranges(vfdswmr_pagebuf_t *pb, size_t n)
{
    size_t first = 0;

    pb->nranges = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t count;
        if (map_ranges(pb, (const uint8_t *)pb->changes[i].image + pb->ps, &count) < 0)
            return -1;
        pb->changes[i].nranges = count;
    }
    for (size_t i = 0; i < n; i++) {
        pb->changes[i].ranges = pb->changes[i].nranges ? pb->ranges + first : NULL;
        first += pb->changes[i].nranges;
    }
    return 0;
}

int
vfdswmr_pb_prepare(vfdswmr_pagebuf_t *pb, uint64_t tick, uint32_t max_lag, bool all, const vfdswmr_mdchange_t **changes,
                   size_t *nchanges, const uint64_t **removals, size_t *nremovals)
{
    struct pbpage *p;
    size_t n = 0, r = 0;

    if (pb->in_flight)
        return -1; /* a caller's bug: one publish at a time */
    /* Everything that can fail comes before the first change of state. */
    if (vfdswmr_grow((void **)&pb->changes, &pb->cap_changes, pb->npending, sizeof *pb->changes) < 0 ||
        vfdswmr_grow((void **)&pb->removals, &pb->cap_removals, pb->nindex + pb->ndropped, sizeof *pb->removals) < 0)
        return -1;
    TAILQ_FOREACH (p, &pb->pending, pending_link)
        pb->changes[n++] = (vfdswmr_mdchange_t){.hdf5_page = p->page, .length = pb->ps, .image = p->snap};
    if (n)
        qsort(pb->changes, n, sizeof *pb->changes, cmp_change);
    if (collect_ranges(pb, n) < 0)
        return -1;

    RB_FOREACH (p, pbtree, &pb->tree)
        if (removable(p, tick, max_lag, all, pb->pub_cps))
            pb->removals[r++] = p->page;
    /* dropped pages are no longer in the tree: merge them in, keeping order */
    for (size_t i = 0; i < pb->ndropped; i++)
        pb->removals[r++] = pb->dropped[i];
    if (pb->ndropped)
        qsort(pb->removals, r, sizeof *pb->removals, cmp_u64);
    pb->ndropped = 0;
    /* The waiting images go to the publish: a consistency point from now on
     * makes new snap images, which wait for the next one. */
    while ((p = TAILQ_FIRST(&pb->pending)) != NULL) {
        TAILQ_REMOVE(&pb->pending, p, pending_link);
        pb->npending--;
        p->fly = p->snap;
        p->snap = NULL;
        p->view_stale = false; /* made after any raw data came over the last one */
        TAILQ_INSERT_TAIL(&pb->flying, p, flying_link);
    }
    pb->in_flight = true;
    pb->fly_cps = pb->cps;
    CHECK_PB(pb);
    pb->nchanges = n;
    pb->nremovals = r;
    *changes = pb->changes;
    *nchanges = n;
    *removals = pb->removals;
    *nremovals = r;
    return 0;
}

void
vfdswmr_pb_published(vfdswmr_pagebuf_t *pb, uint64_t tick)
{
    struct pbpage *p;

    /* A removal whose page got new bytes while the publish was under way
     * leaves the index but stays: its new bytes wait for a publish of their
     * own. (A page in this publish's changes is never a removal, except a
     * dropped page whose number came back; that one is the new page.) */
    for (size_t i = 0; i < pb->nremovals; i++)
        if ((p = find(pb, pb->removals[i])) != NULL && p->fly == NULL) {
            /* it leaves the index once the HDF5 file holds its latest published image (pagebuf.h) */
            VFDSWMR_ASSERT(p->pub == NULL);
            if (!p->changed && p->snap == NULL)
                drop_page(pb, p);
            else if (p->in_index) {
                p->in_index = 0;
                pb->nindex--;
            }
        }
    while ((p = TAILQ_FIRST(&pb->flying)) != NULL) {
        if (p->gone) {
            free_gone(pb, p);
            continue;
        }
        TAILQ_REMOVE(&pb->flying, p, flying_link);
        free_image(pb, &p->pub);
        if (p->fix) { /* raw data arrived during the publish: its copy is current */
            free_image(pb, &p->fly);
            p->pub = p->fix;
            p->fix = NULL;
        }
        else if (p->fix_lost) { /* fly lacks raw data written since: it must never reach the HDF5 file */
            free_image(pb, &p->fly);
            p->fix_lost = false;
        }
        else
            p->pub = p->fly; /* the image count is unchanged: fly becomes pub */
        p->fly = NULL;
        p->pub_tick = tick;
        p->flushed = 0;
        if (!p->in_index) {
            p->in_index = tick;
            pb->nindex++;
        }
    }
    pb->in_flight = false;
    pb->pub_cps = pb->fly_cps;
    pb->nchanges = pb->nremovals = 0;
    CHECK_PB(pb);
}

long
vfdswmr_pb_store_due(vfdswmr_pagebuf_t *pb, uint64_t tick, uint32_t max_lag, uint64_t eoa, uint64_t published_before,
                     vfdswmr_pb_store_t store, void *ctx)
{
    struct pbpage *p;
    long n = 0;

    RB_FOREACH (p, pbtree, &pb->tree) {
        uint64_t addr = p->page * pb->ps;
        if (!p->pub || p->flushed || !p->in_index || tick < p->in_index + max_lag || p->pub_tick >= published_before)
            continue;
        if (addr < eoa) {
            size_t len = eoa - addr < pb->ps ? (size_t)(eoa - addr) : pb->ps;
            /* only from pub, only after max_lag ticks in the index (pagebuf.h) */
            VFDSWMR_ASSERT(p->pub != NULL && p->in_index != 0 && tick >= p->in_index + max_lag);
            if (store(ctx, p->page, p->pub, len) < 0)
                return -1;
            n++;
        }
        p->flushed = tick;
        free_image(pb, &p->pub);
        /* cur keeps its map: the index still marks those bytes metadata
         * (readers read them from the image), so raw data written over them
         * must still make the page changed (raw_into_images). */
    }
    CHECK_PB(pb);
    return n;
}

/* One pass of store_current: pages in (or out of) the published index. */
static long
store_current_pass(vfdswmr_pagebuf_t *pb, uint64_t eoa, bool indexed, vfdswmr_pb_store_t store, void *ctx)
{
    struct pbpage *p;
    long n = 0;

    RB_FOREACH (p, pbtree, &pb->tree) {
        uint64_t addr = p->page * pb->ps;
        if (p->cur == NULL || (p->in_index != 0) != indexed || addr >= eoa)
            continue;
        if (store(ctx, p->page, p->cur, eoa - addr < pb->ps ? (size_t)(eoa - addr) : pb->ps) < 0)
            return -1;
        n++;
    }
    return n;
}

/*
 * Pages the index names first: if a write fails part way, the metadata
 * file's last snapshot still describes every page written so far, and
 * recovery puts them back. Pages outside the index are written only when
 * all of those succeeded.
 */
long
vfdswmr_pb_store_current(vfdswmr_pagebuf_t *pb, uint64_t eoa, vfdswmr_pb_store_t store, void *ctx)
{
    long a = store_current_pass(pb, eoa, true, store, ctx), b;

    if (a < 0 || (b = store_current_pass(pb, eoa, false, store, ctx)) < 0)
        return -1;
    return a + b;
}

const uint8_t *
vfdswmr_pb_pub_image(const vfdswmr_pagebuf_t *pb, uint64_t page)
{
    const struct pbpage *p = find(pb, page);

    return p && p->in_index && !p->flushed ? p->pub : NULL;
}

uint64_t
vfdswmr_pb_last_due_tick(const vfdswmr_pagebuf_t *pb, uint32_t max_lag)
{
    struct pbpage *p;
    uint64_t last = 0;

    RB_FOREACH (p, pbtree, (struct pbtree *)&pb->tree)
        if (p->pub && !p->flushed && p->in_index + max_lag > last)
            last = p->in_index + max_lag;
    return last;
}

bool
vfdswmr_pb_pending(const vfdswmr_pagebuf_t *pb)
{
    return pb->npending > 0;
}

void
vfdswmr_pb_stats(const vfdswmr_pagebuf_t *pb, vfdswmr_pb_stats_t *st)
{
    *st = (vfdswmr_pb_stats_t){.pages = pb->npages,
                               .images = pb->nimages,
                               .in_index = pb->nindex,
                               .pending = pb->npending,
                               .dropped = pb->ndropped};
}

/* ---- check_all(): the invariant builds' whole-structure check ------------ */

/* The page states pagebuf.h describes, and the counters and lists: NULL when
 * they hold, else what is broken; *npages gets the pages looked at. Reads
 * the maps of cur and pub images only (the publish under way reads fly
 * images in another thread; nothing writes any image meanwhile). */
VFDSWMR_CHECKER const char *
check_all(const vfdswmr_pagebuf_t *pb, uint64_t *npages)
{
    uint64_t images = 0, indexed = 0, waiting = 0, changed = 0, flying = 0, listed = 0;
    struct pbpage *p;

    *npages = 0;
    RB_FOREACH (p, pbtree, (struct pbtree *)&pb->tree) {
        ++*npages;
        images += (p->cur != NULL) + (p->snap != NULL) + (p->pub != NULL) + (p->fly != NULL) + (p->fix != NULL);
        indexed += p->in_index != 0;
        waiting += p->snap != NULL;
        changed += p->changed;
        flying += p->fly != NULL;
        if (p->gone)
            return "a page dropped while in flight is still in the tree";
        if (pb->tracked[p->page % TRACKED_BUCKETS] == 0)
            return "a tracked page's bucket is empty";
        if ((p->changed || p->snap) && p->cur == NULL)
            return "a page changed or waiting for a publish has no current image";
        if (p->pub && (!p->in_index || p->flushed))
            return "a published image outside the index, or kept after it reached the HDF5 file";
        if (p->fix && !p->fly)
            return "a fix image without the fly image it fixes";
        if (p->fix_lost && (!p->fly || p->fix))
            return "a fix marked lost on a page not in flight, or that has one";
        if (p->pub && p->cur && !map_within(p->pub + pb->ps, p->cur + pb->ps, pb->ps / 8))
            return "a published image marks metadata the current one does not: raw data there would not publish "
                   "the page again";
    }
    TAILQ_FOREACH (p, &pb->flying, flying_link) {
        if (p->fly == NULL || (p->gone && find(pb, p->page) == p))
            return "a page on the flying list without a fly image, or dropped yet still in the tree";
        if (p->gone) {
            images++; /* its fly image, until published() */
            flying++;
        }
        listed++;
    }
    if (listed != flying || (!pb->in_flight && listed > 0))
        return "the flying list does not hold exactly the pages of the publish under way";
    if (*npages != pb->npages || images != pb->nimages || indexed != pb->nindex || waiting != pb->npending)
        return "the page, image, index or pending counters do not match the pages";
    uint64_t bucketed = 0;
    for (uint32_t i = 0; i < TRACKED_BUCKETS; i++)
        bucketed += pb->tracked[i];
    if (bucketed != pb->npages)
        return "the tracked-page buckets do not count the pages";
    listed = 0;
    TAILQ_FOREACH (p, &pb->changed, changed_link) {
        if (!p->changed)
            return "an unchanged page on the changed list";
        listed++;
    }
    if (listed != changed)
        return "a changed page is missing from the changed list";
    listed = 0;
    TAILQ_FOREACH (p, &pb->pending, pending_link) {
        if (p->snap == NULL)
            return "a page without a waiting image on the pending list";
        listed++;
    }
    return listed == waiting ? NULL : "a page with a waiting image is missing from the pending list";
}
