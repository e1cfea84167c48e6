/*
 * Page buffer of the writer driver; see pagebuf.h for the states and the
 * invariants. Pages live in a red-black tree by page number; pages changed
 * since the last consistency point and pages waiting for a publish are also
 * on lists, so consistency points and publishes cost O(pages involved).
 */
#include "pagebuf.h"

#include <stdlib.h>
#include <string.h>

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>

struct pbpage {
    RB_ENTRY(pbpage) link;
    TAILQ_ENTRY(pbpage) changed_link; /* on pb->changed while `changed` */
    TAILQ_ENTRY(pbpage) pending_link; /* on pb->pending while `snap` != NULL */
    uint64_t page;
    uint8_t *cur, *snap, *pub;
    bool changed;
    uint64_t in_index, pub_tick, flushed;
};

RB_HEAD(pbtree, pbpage);
TAILQ_HEAD(pblist, pbpage);

static int
page_cmp(const struct pbpage *a, const struct pbpage *b)
{
    return (a->page > b->page) - (a->page < b->page);
}

RB_GENERATE_INTERNAL(pbtree, pbpage, link, page_cmp, __attribute__((__unused__)) static)

struct vfdswmr_pagebuf {
    uint32_t ps;
    size_t img_size;                  /* ps image bytes + ps / 8 bytes of metadata map */
    struct pbtree tree;
    struct pblist changed, pending;
    uint64_t npages, nimages, nindex, npending;
    /* The next publish, built by prepare(), consumed by published(). */
    vfdswmr_mdchange_t *changes;
    size_t nchanges, cap_changes;
    uint64_t *removals;
    size_t nremovals, cap_removals;
    vfdswmr_mdrange_t *ranges;       /* the metadata ranges of the next publish's changes */
    size_t nranges, cap_ranges;
    /* Pages dropped (freed space) while in the index: removals of the next publish. */
    uint64_t *dropped;
    size_t ndropped, cap_dropped;
};

static int
grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    if (NULL == (p = realloc(*arr, n * elem)))
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

vfdswmr_pagebuf_t *
vfdswmr_pb_new(uint32_t page_size)
{
    vfdswmr_pagebuf_t *pb = calloc(1, sizeof *pb);

    if (pb == NULL)
        return NULL;
    pb->ps = page_size;
    pb->img_size = page_size + page_size / 8;
    RB_INIT(&pb->tree);
    TAILQ_INIT(&pb->changed);
    TAILQ_INIT(&pb->pending);
    return pb;
}

static void
free_image(vfdswmr_pagebuf_t *pb, uint8_t **img)
{
    if (*img) {
        free(*img);
        *img = NULL;
        pb->nimages--;
    }
}

static void
drop_page(vfdswmr_pagebuf_t *pb, struct pbpage *p)
{
    if (p->changed)
        TAILQ_REMOVE(&pb->changed, p, changed_link);
    if (p->snap) {
        TAILQ_REMOVE(&pb->pending, p, pending_link);
        pb->npending--;
    }
    if (p->in_index)
        pb->nindex--;
    free_image(pb, &p->cur);
    free_image(pb, &p->snap);
    free_image(pb, &p->pub);
    RB_REMOVE(pbtree, &pb->tree, p);
    pb->npages--;
    free(p);
}

void
vfdswmr_pb_destroy(vfdswmr_pagebuf_t *pb)
{
    struct pbpage *p, *next;

    if (pb == NULL)
        return;
    RB_FOREACH_SAFE(p, pbtree, &pb->tree, next)
        drop_page(pb, p);
    free(pb->changes);
    free(pb->ranges);
    free(pb->removals);
    free(pb->dropped);
    free(pb);
}

uint32_t
vfdswmr_pb_page_size(const vfdswmr_pagebuf_t *pb)
{
    return pb->ps;
}

static struct pbpage *
find(const vfdswmr_pagebuf_t *pb, uint64_t page)
{
    struct pbpage key = {.page = page};
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
        if (NULL == (p->cur = calloc(1, pb->img_size)) || fill(ctx, page, p->cur) < 0) {
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
        map[off / 8] = meta ? map[off / 8] | (uint8_t)(1u << off % 8) : map[off / 8] & (uint8_t)~(1u << off % 8);
    if (end - off >= 8) {
        memset(map + off / 8, meta ? 0xff : 0, (end - off) / 8);
        off += (end - off) / 8 * 8;
    }
    for (; off < end; off++)
        map[off / 8] = meta ? map[off / 8] | (uint8_t)(1u << off % 8) : map[off / 8] & (uint8_t)~(1u << off % 8);
}

static bool
map_get(const uint8_t *map, uint32_t i)
{
    return (map[i / 8] >> (i % 8)) & 1u;
}

int
vfdswmr_pb_write(vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, const void *buf, vfdswmr_pb_fill_t fill,
                 void *ctx)
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
    return 0;
}

/* Call fn for the part of each tracked page inside [addr, addr + len):
 * page offset `off`, offset `boff` into the caller's buffer, `n` bytes. */
typedef void (*overlap_fn)(struct pbpage *p, uint32_t off, size_t boff, size_t n, void *arg);

static void
for_each_overlap(const vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, overlap_fn fn, void *arg)
{
    uint64_t a = addr, end = addr + len;

    while (a < end) {
        uint32_t off = (uint32_t)(a % pb->ps);
        size_t n = (size_t)(pb->ps - off < end - a ? pb->ps - off : end - a);
        struct pbpage *p = find(pb, a / pb->ps);
        if (p)
            fn(p, off, (size_t)(a - addr), n, arg);
        a += n;
    }
}

struct raw_arg {
    const uint8_t *buf;
    uint32_t ps;
};

/* Raw bytes replace whatever the images held there, and are not metadata. */
static void
raw_into_images(struct pbpage *p, uint32_t off, size_t boff, size_t n, void *arg)
{
    const struct raw_arg *ra = arg;
    uint8_t *imgs[3] = {p->cur, p->snap, p->pub};

    for (int i = 0; i < 3; i++)
        if (imgs[i]) {
            memcpy(imgs[i] + off, ra->buf + boff, n);
            map_set(imgs[i] + ra->ps, off, n, false);
        }
}

void
vfdswmr_pb_write_raw(vfdswmr_pagebuf_t *pb, uint64_t addr, size_t len, const void *buf)
{
    struct raw_arg ra = {buf, pb->ps};

    for_each_overlap(pb, addr, len, raw_into_images, &ra);
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

int
vfdswmr_pb_consistency_point(vfdswmr_pagebuf_t *pb, uint64_t eoa)
{
    struct pbpage *p, *next;

    TAILQ_FOREACH_SAFE(p, &pb->changed, changed_link, next) {
        if (p->page * pb->ps >= eoa) { /* freed space: forget it, leave the index */
            if (p->in_index) {
                if (grow((void **)&pb->dropped, &pb->cap_dropped, pb->ndropped + 1, sizeof *pb->dropped) < 0)
                    return -1;
                pb->dropped[pb->ndropped++] = p->page;
            }
            drop_page(pb, p);
            continue;
        }
        if (p->snap == NULL) {
            if (NULL == (p->snap = malloc(pb->img_size)))
                return -1;
            pb->nimages++;
            TAILQ_INSERT_TAIL(&pb->pending, p, pending_link);
            pb->npending++;
        }
        memcpy(p->snap, p->cur, pb->img_size);
        p->changed = false;
        TAILQ_REMOVE(&pb->changed, p, changed_link);
    }
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

/* May page p leave the index at `tick`? */
static bool
removable(const struct pbpage *p, uint64_t tick, uint32_t max_lag, bool all)
{
    if (!p->in_index || p->snap)
        return false;
    if (all)
        return true;
    return p->flushed && !p->changed && !p->pub && p->cur == NULL && tick >= p->flushed + max_lag;
}

/* Append the runs of metadata bytes of one image's map to pb->ranges. */
static int
map_ranges(vfdswmr_pagebuf_t *pb, const uint8_t *map, uint32_t *count)
{
    uint32_t i = 0;

    *count = 0;
    while (i < pb->ps) {
        uint32_t start;
        if (map[i / 8] == 0 && i % 8 == 0) { /* skip 8 raw bytes at a time */
            i += 8;
            continue;
        }
        if (!map_get(map, i)) {
            i++;
            continue;
        }
        for (start = i; i < pb->ps && map_get(map, i); i++)
            if (i % 8 == 0 && map[i / 8] == 0xff && i + 8 <= pb->ps)
                i += 7; /* a whole byte of metadata bits */
        if (grow((void **)&pb->ranges, &pb->cap_ranges, pb->nranges + 1, sizeof *pb->ranges) < 0)
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
vfdswmr_pb_prepare(vfdswmr_pagebuf_t *pb, uint64_t tick, uint32_t max_lag, bool all,
                   const vfdswmr_mdchange_t **changes, size_t *nchanges, const uint64_t **removals,
                   size_t *nremovals)
{
    struct pbpage *p;
    size_t n = 0, r = 0;

    if (grow((void **)&pb->changes, &pb->cap_changes, pb->npending, sizeof *pb->changes) < 0)
        return -1;
    TAILQ_FOREACH(p, &pb->pending, pending_link)
        pb->changes[n++] = (vfdswmr_mdchange_t){.hdf5_page = p->page, .length = pb->ps, .image = p->snap};
    if (n)
        qsort(pb->changes, n, sizeof *pb->changes, cmp_change);
    if (collect_ranges(pb, n) < 0)
        return -1;

    if (grow((void **)&pb->removals, &pb->cap_removals, pb->nindex + pb->ndropped, sizeof *pb->removals) < 0)
        return -1;
    RB_FOREACH(p, pbtree, &pb->tree)
        if (removable(p, tick, max_lag, all))
            pb->removals[r++] = p->page;
    /* dropped pages are no longer in the tree: merge them in, keeping order */
    for (size_t i = 0; i < pb->ndropped; i++)
        pb->removals[r++] = pb->dropped[i];
    if (pb->ndropped)
        qsort(pb->removals, r, sizeof *pb->removals, cmp_u64);
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
    struct pbpage *p, *next;

    for (size_t i = 0; i < pb->nremovals; i++)
        if ((p = find(pb, pb->removals[i])) != NULL)
            drop_page(pb, p);
    pb->ndropped = 0;
    TAILQ_FOREACH_SAFE(p, &pb->pending, pending_link, next) {
        free_image(pb, &p->pub);
        p->pub = p->snap; /* the image count is unchanged: snap becomes pub */
        p->snap = NULL;
        TAILQ_REMOVE(&pb->pending, p, pending_link);
        pb->npending--;
        p->pub_tick = tick;
        p->flushed = 0;
        if (!p->in_index) {
            p->in_index = tick;
            pb->nindex++;
        }
    }
    pb->nchanges = pb->nremovals = 0;
}

long
vfdswmr_pb_store_due(vfdswmr_pagebuf_t *pb, uint64_t tick, uint32_t max_lag, uint64_t eoa, vfdswmr_pb_store_t store,
                     void *ctx)
{
    struct pbpage *p;
    long n = 0;

    RB_FOREACH(p, pbtree, &pb->tree) {
        uint64_t addr = p->page * pb->ps;
        if (!p->pub || p->flushed || !p->in_index || tick < p->in_index + max_lag)
            continue;
        if (addr < eoa) {
            size_t len = eoa - addr < pb->ps ? (size_t)(eoa - addr) : pb->ps;
            if (store(ctx, p->page, p->pub, len) < 0)
                return -1;
            n++;
        }
        p->flushed = tick;
        free_image(pb, &p->pub);
        if (!p->changed && !p->snap) /* the HDF5 file now holds the current bytes */
            free_image(pb, &p->cur);
    }
    return n;
}

/* One pass of store_current: pages in (or out of) the published index. */
static long
store_current_pass(vfdswmr_pagebuf_t *pb, uint64_t eoa, bool indexed, vfdswmr_pb_store_t store, void *ctx)
{
    struct pbpage *p;
    long n = 0;

    RB_FOREACH(p, pbtree, &pb->tree) {
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

uint64_t
vfdswmr_pb_last_due_tick(const vfdswmr_pagebuf_t *pb, uint32_t max_lag)
{
    struct pbpage *p;
    uint64_t last = 0;

    RB_FOREACH(p, pbtree, (struct pbtree *)&pb->tree)
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
    *st = (vfdswmr_pb_stats_t){.pages = pb->npages, .images = pb->nimages, .in_index = pb->nindex,
                               .pending = pb->npending};
}
