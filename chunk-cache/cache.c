/*
 * cache.c - the shared raw-data chunk cache (cache.h).
 *
 * Layout. Entries sit in an RB tree keyed by address; since they never
 * overlap (C1), the entry holding a byte is the one with the greatest start
 * at or below it. Each entry is also on its dataset's LRU list (most recent
 * first). Datasets sit in an RB tree keyed by id, and those holding entries
 * on the cache's LRU list (most recent first). Registered chunks sit in an
 * RB tree of their own keyed by address (they never overlap either); the
 * nodes are an array owned by their dataset, one allocation per
 * registration, so vfdswmr_cc_register fails with nothing changed.
 *
 * Dataset records (C4): created on demand, freed as soon as one holds no
 * entries, no registered chunks, default settings and all-zero statistics.
 * A lookup or insert counts for its dataset, so in practice records live
 * until vfdswmr_cc_reset_stats: their number is bounded by the datasets
 * used since the last reset, which the caller controls. They come from
 * slabs of their own (mmap), never from the heap the application and HDF5
 * allocate from: a record made for each of 3000 small datasets read in turn,
 * interleaved with HDF5's allocations for opening and reading them, made
 * that reader 9 % slower through glibc's heap (consolidation of its free
 * chunks; BENCHMARKS.md, chunk cache (d)). A freed record goes back to its
 * cache's free list; the slabs go when the cache does.
 *
 * Choices where cache.h is silent: a refused insert (0) changes nothing;
 * ranges reaching past UINT64_MAX are refused by insert, missed by lookup
 * and clipped by update; find_chunk of len 0 finds nothing; registered
 * chunks of size 0 (or reaching past UINT64_MAX) are ignored, and within
 * one registration a later chunk overlapping an earlier one replaces it;
 * a lookup that cannot allocate its dataset's record (ENOMEM) is a miss
 * counted nowhere; a hit leaves an entry's partial mark alone. A dataset
 * gives up entries in pass one while it holds more than its minimum, so
 * the last one it gives may take it below.
 *
 * Costs, n entries and D datasets holding entries: lookup, insert and each
 * entry removed O(log n); an insert's eviction also steps over the datasets
 * at their minimum (O(D)); set_limits O(n) when max_entry shrinks; check
 * O(n log n).
 *
 * Invariant builds (common/check.h) run the check of C1-C3 at the end of
 * every call that changes the cache, paced when it holds many entries, and
 * abort on the first invariant broken.
 */
#include "cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>

struct dset;

struct entry {
    RB_ENTRY(entry) rb;     /* the cache's entries, by addr */
    TAILQ_ENTRY(entry) lru; /* its dataset's entries, most recent first */
    struct dset *d;
    uint64_t addr;
    size_t len;         /* 0 < len <= max_entry, addr + len <= UINT64_MAX */
    bool partial;       /* its second chance is still to come */
    unsigned char *img; /* len bytes, allocated with the entry */
};

struct chunk {
    RB_ENTRY(chunk) rb; /* registered chunks of every dataset, by addr */
    struct dset *d;
    uint64_t addr;
    uint64_t len;
    bool live; /* in the chunk tree (an overlapping registration removes it) */
};

RB_HEAD(entry_tree, entry);
TAILQ_HEAD(entry_lru, entry);
RB_HEAD(chunk_tree, chunk);

struct dset {
    RB_ENTRY(dset) rb;       /* every dataset record, by id */
    SLIST_ENTRY(dset) spare; /* on the cache's free list while unused */
    TAILQ_ENTRY(dset) lru;   /* on the cache's LRU iff it holds entries */
    uint64_t id;
    struct entry_lru entries; /* most recent first */
    vfdswmr_cc_stats_t st;    /* st.entries, st.bytes: what it holds now */
    size_t min;               /* minimum retention; SIZE_MAX: limits.dset_min */
    bool nocache;
    struct chunk *chunks; /* its registration: nchunks nodes, nlive in the tree */
    size_t nchunks;
    size_t nlive;
};

RB_HEAD(dset_tree, dset);
TAILQ_HEAD(dset_lru, dset);
SLIST_HEAD(dset_spares, dset);

/* A slab of dataset records: this header, then records up to SLAB_BYTES. */
struct slab {
    SLIST_ENTRY(slab) link;
};
SLIST_HEAD(slab_list, slab);
#define SLAB_BYTES ((size_t)64 * 1024)
#define SLAB_FIRST ((sizeof(struct slab) + _Alignof(struct dset) - 1) / _Alignof(struct dset) * _Alignof(struct dset))
_Static_assert(SLAB_FIRST + sizeof(struct dset) <= SLAB_BYTES, "a slab holds a record");

struct vfdswmr_cc {
    vfdswmr_cc_limits_t lim;
    struct entry_tree entries;
    struct dset_tree dsets;
    struct dset_lru lru; /* datasets holding entries, most recent first */
    struct chunk_tree chunks;
    struct slab_list slabs;    /* where every record lives */
    struct dset_spares spares; /* records of the slabs not in use */
    vfdswmr_cc_stats_t all;    /* file-wide: always the sum over datasets */
#ifdef VFDSWMR_INVARIANTS
    vfdswmr_pace_t pace; /* when the next check_all() is due */
#endif
};

static const char *check_all(const vfdswmr_cc_t *c, uint64_t *size);
/* C1-C3 at the end of a call that changed c (invariant builds only). */
#define CHECK_CACHE(c) VFDSWMR_CHECK_INVARIANTS(&(c)->pace, check_all((c), &(c)->pace.size))

#define NSTATS (sizeof(vfdswmr_cc_stats_t) / sizeof(uint64_t))
_Static_assert(sizeof(vfdswmr_cc_stats_t) == NSTATS * sizeof(uint64_t), "stats are uint64_t only");

/* Every counter change goes to the dataset and to the file-wide sum. */
#define COUNT(c, d, field, n)   ((d)->st.field += (n), (c)->all.field += (n))
#define UNCOUNT(c, d, field, n) ((d)->st.field -= (n), (c)->all.field -= (n))

#define DEFINE_CMP(type, key)                                         \
    static int type##_cmp(const struct type *a, const struct type *b) \
    {                                                                 \
        return (a->key > b->key) - (a->key < b->key);                 \
    }
DEFINE_CMP(entry, addr)
DEFINE_CMP(chunk, addr)
DEFINE_CMP(dset, id)

/* RB_GENERATE_STATIC would need __unused, which libbsd leaves undefined. */
#define TREE_ATTR __attribute__((__unused__)) static
RB_GENERATE_INTERNAL(entry_tree, entry, rb, entry_cmp, TREE_ATTR)
RB_GENERATE_INTERNAL(chunk_tree, chunk, rb, chunk_cmp, TREE_ATTR)
RB_GENERATE_INTERNAL(dset_tree, dset, rb, dset_cmp, TREE_ATTR)

/* For the trees of disjoint ranges, O(log n) each: name_floor, the node
 * with the greatest addr <= addr; name_first, the first node overlapping
 * [a, b) (the floor of a if it reaches past a, else the next one). */
#define DEFINE_SEARCH(name, type)                                                  \
    static struct type *name##_floor(const struct name *t, uint64_t addr)          \
    {                                                                              \
        struct name *h = (struct name *)t;                                         \
        struct type key = {.addr = addr};                                          \
        struct type *n = RB_NFIND(name, h, &key);                                  \
                                                                                   \
        if (n != NULL && n->addr == addr)                                          \
            return n;                                                              \
        return n != NULL ? RB_PREV(name, h, n) : RB_MAX(name, h);                  \
    }                                                                              \
    static struct type *name##_first(const struct name *t, uint64_t a, uint64_t b) \
    {                                                                              \
        struct type *n = name##_floor(t, a);                                       \
                                                                                   \
        if (n == NULL)                                                             \
            n = RB_MIN(name, (struct name *)t);                                    \
        else if (n->addr + n->len <= a)                                            \
            n = RB_NEXT(name, NULL, n);                                            \
        return a < b && n != NULL && n->addr < b ? n : NULL;                       \
    }
DEFINE_SEARCH(entry_tree, entry)
DEFINE_SEARCH(chunk_tree, chunk)

static uint64_t
end_of(uint64_t addr, uint64_t len) /* addr + len, clipped to UINT64_MAX */
{
    return len > UINT64_MAX - addr ? UINT64_MAX : addr + len;
}

/* ---- dataset records ---------------------------------------------------- */

static struct dset *
dset_get(const vfdswmr_cc_t *c, uint64_t id)
{
    struct dset key = {.id = id};

    return RB_FIND(dset_tree, (struct dset_tree *)&c->dsets, &key);
}

/* A zeroed record from the slabs, mapping one more when none is spare;
 * NULL: ENOMEM. */
static struct dset *
dset_alloc(vfdswmr_cc_t *c)
{
    struct dset *d;

    if (SLIST_EMPTY(&c->spares)) {
        unsigned char *m = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            errno = ENOMEM;
            return NULL;
        }
        SLIST_INSERT_HEAD(&c->slabs, (struct slab *)(void *)m, link);
        for (size_t off = SLAB_FIRST; off + sizeof *d <= SLAB_BYTES; off += sizeof *d)
            SLIST_INSERT_HEAD(&c->spares, (struct dset *)(void *)(m + off), spare);
    }
    d = SLIST_FIRST(&c->spares);
    SLIST_REMOVE_HEAD(&c->spares, spare);
    memset(d, 0, sizeof *d);
    return d;
}

/* d back to the spares, with what it owns freed. */
static void
dset_release(vfdswmr_cc_t *c, struct dset *d)
{
    free(d->chunks);
    SLIST_INSERT_HEAD(&c->spares, d, spare);
}

/* The record of id, created when missing; NULL: ENOMEM. */
static struct dset *
dset_make(vfdswmr_cc_t *c, uint64_t id)
{
    struct dset *d = dset_get(c, id);

    if (d != NULL || (d = dset_alloc(c)) == NULL)
        return d;
    d->id = id;
    d->min = SIZE_MAX;
    TAILQ_INIT(&d->entries);
    RB_INSERT(dset_tree, &c->dsets, d);
    return d;
}

/* C4: d goes when nothing tells it from a dataset never seen. */
static void
dset_maybe_forget(vfdswmr_cc_t *c, struct dset *d)
{
    static const vfdswmr_cc_stats_t zero;

    if (d->nlive > 0 || d->min != SIZE_MAX || d->nocache || memcmp(&d->st, &zero, sizeof zero) != 0)
        return; /* (st.entries == 0: no entries) */
    RB_REMOVE(dset_tree, &c->dsets, d);
    dset_release(c, d);
}

/* ---- entries ------------------------------------------------------------ */

enum why { EVICTED, INVALIDATED };

/* e becomes its dataset's most recent entry, the dataset the most recent. */
static void
entry_link(vfdswmr_cc_t *c, struct entry *e)
{
    struct dset *d = e->d;

    struct entry *dup = RB_INSERT(entry_tree, &c->entries, e); /* no duplicate: C1 */

    VFDSWMR_ASSERT(dup == NULL);
    TAILQ_INSERT_HEAD(&d->entries, e, lru);
    if (d->st.entries > 0)
        TAILQ_REMOVE(&c->lru, d, lru);
    TAILQ_INSERT_HEAD(&c->lru, d, lru);
    COUNT(c, d, entries, 1);
    COUNT(c, d, bytes, e->len);
}

static void
entry_drop(vfdswmr_cc_t *c, struct entry *e, enum why why)
{
    struct dset *d = e->d;

    RB_REMOVE(entry_tree, &c->entries, e);
    TAILQ_REMOVE(&d->entries, e, lru);
    UNCOUNT(c, d, entries, 1);
    UNCOUNT(c, d, bytes, e->len);
    if (d->st.entries == 0)
        TAILQ_REMOVE(&c->lru, d, lru); /* d is on it: eviction never empties a set-aside one */
    COUNT(c, d, evictions, why == EVICTED);
    COUNT(c, d, invalidations, why == INVALIDATED);
    free(e);
}

static void
entry_touch(vfdswmr_cc_t *c, struct entry *e)
{
    TAILQ_REMOVE(&e->d->entries, e, lru);
    TAILQ_INSERT_HEAD(&e->d->entries, e, lru);
    TAILQ_REMOVE(&c->lru, e->d, lru);
    TAILQ_INSERT_HEAD(&c->lru, e->d, lru);
}

static void
drop_range(vfdswmr_cc_t *c, uint64_t a, uint64_t b, enum why why)
{
    struct entry *next;

    for (struct entry *e = entry_tree_first(&c->entries, a, b); e != NULL && e->addr < b; e = next) {
        next = RB_NEXT(entry_tree, &c->entries, e);
        entry_drop(c, e, why);
    }
}

static void
drop_dset(vfdswmr_cc_t *c, struct dset *d)
{
    struct entry *e;

    while ((e = TAILQ_FIRST(&d->entries)) != NULL)
        entry_drop(c, e, EVICTED);
}

/* ---- eviction ----------------------------------------------------------- */

/* Evict from the tail of d's LRU while the cache holds more than target
 * bytes and d more than keep; a partial entry reaching the tail moves to
 * the head instead, unmarked. true: the cache is down to target. */
static bool
trim(vfdswmr_cc_t *c, struct dset *d, size_t target, size_t keep)
{
    while (c->all.bytes > target && d->st.bytes > keep) {
        struct entry *e = TAILQ_LAST(&d->entries, entry_lru); /* bytes > 0: not empty */

        VFDSWMR_ASSERT(e != NULL); /* C2: d's bytes are its entries' */
        if (e->partial) {
            e->partial = false;
            TAILQ_REMOVE(&d->entries, e, lru);
            TAILQ_INSERT_HEAD(&d->entries, e, lru);
        }
        else {
            entry_drop(c, e, EVICTED);
        }
    }
    return c->all.bytes <= target;
}

/* Two-stage LRU (cache.h): evict until the cache holds at most target. */
static void
make_room(vfdswmr_cc_t *c, size_t target)
{
    struct dset_lru spent; /* set aside at their minimum, most recent first */
    struct dset *d;

    TAILQ_INIT(&spent);
    while (c->all.bytes > target && (d = TAILQ_LAST(&c->lru, dset_lru)) != NULL) {
        if (trim(c, d, target, d->min == SIZE_MAX ? c->lim.dset_min : d->min))
            break;
        if (d->st.entries > 0) { /* (an emptied d has left the list) */
            TAILQ_REMOVE(&c->lru, d, lru);
            TAILQ_INSERT_HEAD(&spent, d, lru);
        }
    }
    TAILQ_CONCAT(&c->lru, &spent, lru); /* all spent are older than the rest */
    while (c->all.bytes > target && (d = TAILQ_LAST(&c->lru, dset_lru)) != NULL)
        trim(c, d, target, 0); /* the budget is a hard limit */
}

/* ---- the interface ------------------------------------------------------ */

vfdswmr_cc_limits_t
vfdswmr_cc_default_limits(size_t size)
{
    vfdswmr_cc_limits_t l = {.size = size, .max_entry = size / 4, .dset_min = size / 16};

    if (size > 0 && l.max_entry == 0)
        l.max_entry = 1;
    if (l.dset_min > (size_t)10 << 20)
        l.dset_min = (size_t)10 << 20;
    return l;
}

vfdswmr_cc_t *
vfdswmr_cc_new(const vfdswmr_cc_limits_t *limits)
{
    vfdswmr_cc_t *c = calloc(1, sizeof *c);

    if (c == NULL)
        return NULL;
    c->lim = *limits;
    RB_INIT(&c->entries);
    RB_INIT(&c->dsets);
    RB_INIT(&c->chunks);
    TAILQ_INIT(&c->lru);
    SLIST_INIT(&c->slabs);
    SLIST_INIT(&c->spares);
    return c;
}

void
vfdswmr_cc_free(vfdswmr_cc_t *c)
{
    struct entry *e;
    struct dset *d;
    struct slab *sl;

    if (c == NULL)
        return;
    while ((d = RB_ROOT(&c->dsets)) != NULL) { /* (freed nodes would break RB_NEXT) */
        while ((e = TAILQ_FIRST(&d->entries)) != NULL) {
            TAILQ_REMOVE(&d->entries, e, lru);
            free(e);
        }
        RB_REMOVE(dset_tree, &c->dsets, d);
        free(d->chunks);
    }
    while ((sl = SLIST_FIRST(&c->slabs)) != NULL) {
        SLIST_REMOVE_HEAD(&c->slabs, link);
        munmap(sl, SLAB_BYTES);
    }
    free(c);
}

int
vfdswmr_cc_set_limits(vfdswmr_cc_t *c, const vfdswmr_cc_limits_t *limits)
{
    struct entry *e, *next;
    bool shrunk = limits->max_entry < c->lim.max_entry;

    c->lim = *limits;
    if (shrunk) {
        RB_FOREACH_SAFE (e, entry_tree, &c->entries, next)
            if (e->len > c->lim.max_entry)
                entry_drop(c, e, EVICTED);
    }
    make_room(c, c->lim.size);
    VFDSWMR_ASSERT(c->all.bytes <= c->lim.size); /* C3 */
    CHECK_CACHE(c);
    return 0;
}

void
vfdswmr_cc_get_limits(const vfdswmr_cc_t *c, vfdswmr_cc_limits_t *limits)
{
    *limits = c->lim;
}

int
vfdswmr_cc_lookup(vfdswmr_cc_t *c, uint64_t dset, uint64_t addr, size_t len, void *buf)
{
    struct entry *e = NULL;
    struct dset *d;

    if (len > 0 && len <= UINT64_MAX - addr)
        e = entry_tree_floor(&c->entries, addr); /* e->addr <= addr */
    if (e != NULL && addr + len <= e->addr + e->len) {
        memcpy(buf, e->img + (addr - e->addr), len);
        entry_touch(c, e);
        COUNT(c, e->d, lookups, 1);
        COUNT(c, e->d, hits, 1);
        COUNT(c, e->d, bytes_served, len);
        CHECK_CACHE(c);
        return 1;
    }
    if ((d = dset_make(c, dset)) != NULL) {
        COUNT(c, d, lookups, 1);
        COUNT(c, d, misses, 1);
    }
    CHECK_CACHE(c);
    return 0;
}

bool
vfdswmr_cc_keeps(const vfdswmr_cc_t *c, uint64_t dset, size_t len)
{
    const struct dset *d = dset_get(c, dset);

    return len > 0 && len <= c->lim.max_entry && len <= c->lim.size && !(d && d->nocache);
}

int
vfdswmr_cc_insert(vfdswmr_cc_t *c, uint64_t dset, uint64_t addr, size_t len, const void *img, bool partial)
{
    struct dset *d;
    struct entry *e;

    if (len == 0 || len > c->lim.max_entry || len > c->lim.size || len > UINT64_MAX - addr)
        return 0;
    if ((d = dset_make(c, dset)) == NULL)
        return -1;
    if (d->nocache)
        return 0;
    drop_range(c, addr, addr + len, INVALIDATED);
    e = len <= SIZE_MAX - sizeof *e ? malloc(sizeof *e + len) : NULL;
    if (e == NULL) {
        dset_maybe_forget(c, d);
        CHECK_CACHE(c);
        errno = ENOMEM;
        return -1;
    }
    *e = (struct entry){.d = d, .addr = addr, .len = len, .partial = partial};
    e->img = (unsigned char *)(e + 1);
    memcpy(e->img, img, len);
    make_room(c, c->lim.size - len);
    VFDSWMR_ASSERT(c->all.bytes <= c->lim.size - len); /* C3 once e is in */
    entry_link(c, e);
    COUNT(c, d, insertions, 1);
    COUNT(c, d, bytes_loaded, len);
    CHECK_CACHE(c);
    return 1;
}

void
vfdswmr_cc_update(vfdswmr_cc_t *c, uint64_t addr, size_t len, const void *buf)
{
    uint64_t end = end_of(addr, len);

    for (struct entry *e = entry_tree_first(&c->entries, addr, end); e != NULL && e->addr < end;
         e = RB_NEXT(entry_tree, &c->entries, e)) {
        uint64_t lo = e->addr > addr ? e->addr : addr;
        uint64_t hi = e->addr + e->len < end ? e->addr + e->len : end;

        memcpy(e->img + (lo - e->addr), (const unsigned char *)buf + (lo - addr), hi - lo);
        COUNT(c, e->d, updates, 1);
    }
    CHECK_CACHE(c);
}

void
vfdswmr_cc_invalidate(vfdswmr_cc_t *c, uint64_t addr, uint64_t len)
{
    drop_range(c, addr, end_of(addr, len), INVALIDATED);
    CHECK_CACHE(c);
}

void
vfdswmr_cc_truncate(vfdswmr_cc_t *c, uint64_t eof)
{
    drop_range(c, eof, UINT64_MAX, INVALIDATED); /* entries end at or below UINT64_MAX */
    CHECK_CACHE(c);
}

void
vfdswmr_cc_evict(vfdswmr_cc_t *c, uint64_t dset)
{
    struct dset *d;

    if (dset != VFDSWMR_CC_ALL) {
        if ((d = dset_get(c, dset)) != NULL)
            drop_dset(c, d);
        CHECK_CACHE(c);
        return;
    }
    while ((d = TAILQ_FIRST(&c->lru)) != NULL)
        drop_dset(c, d);
    CHECK_CACHE(c);
}

int
vfdswmr_cc_set_dset(vfdswmr_cc_t *c, uint64_t dset, size_t min, bool nocache)
{
    struct dset *d = dset_get(c, dset);

    if (d == NULL && min == SIZE_MAX && !nocache)
        return 0; /* defaults for a record that does not exist */
    if (d == NULL && (d = dset_make(c, dset)) == NULL)
        return -1;
    d->min = min;
    d->nocache = nocache;
    if (nocache)
        drop_dset(c, d);
    dset_maybe_forget(c, d);
    CHECK_CACHE(c);
    return 0;
}

/* Take k out of the chunk tree (its node stays in its owner's array). */
static void
chunk_unlink(vfdswmr_cc_t *c, struct chunk *k)
{
    RB_REMOVE(chunk_tree, &c->chunks, k);
    k->live = false;
    k->d->nlive--;
}

static void
chunks_forget(vfdswmr_cc_t *c, struct dset *d)
{
    for (size_t i = 0; i < d->nchunks; i++)
        if (d->chunks[i].live)
            chunk_unlink(c, &d->chunks[i]);
    free(d->chunks);
    d->chunks = NULL;
    d->nchunks = 0;
}

/* Register k for d, removing every chunk it overlaps. */
static void
chunk_add(vfdswmr_cc_t *c, struct dset *d, struct chunk *k)
{
    uint64_t end = k->addr + k->len;
    struct chunk *next;

    for (struct chunk *o = chunk_tree_first(&c->chunks, k->addr, end); o != NULL && o->addr < end; o = next) {
        struct dset *owner = o->d;

        next = RB_NEXT(chunk_tree, &c->chunks, o);
        chunk_unlink(c, o);
        if (owner != d)
            dset_maybe_forget(c, owner);
    }
    RB_INSERT(chunk_tree, &c->chunks, k);
    k->live = true;
    d->nlive++;
}

int
vfdswmr_cc_register(vfdswmr_cc_t *c, uint64_t dset, const vfdswmr_cc_chunk_t *chunks, size_t n)
{
    struct dset *d = dset_get(c, dset);
    struct chunk *arr = NULL;

    if (n == 0 && d == NULL)
        return 0;
    if (d == NULL && (d = dset_make(c, dset)) == NULL)
        return -1;
    if (n > 0 && (arr = calloc(n, sizeof *arr)) == NULL) {
        dset_maybe_forget(c, d);
        CHECK_CACHE(c);
        return -1;
    }
    chunks_forget(c, d);
    d->chunks = arr;
    d->nchunks = n;
    for (size_t i = 0; i < n; i++) {
        arr[i] = (struct chunk){.d = d, .addr = chunks[i].addr, .len = chunks[i].size};
        if (chunks[i].size > 0 && chunks[i].size <= UINT64_MAX - chunks[i].addr)
            chunk_add(c, d, &arr[i]);
    }
    dset_maybe_forget(c, d);
    CHECK_CACHE(c);
    return 0;
}

int
vfdswmr_cc_find_chunk(const vfdswmr_cc_t *c, uint64_t addr, size_t len, uint64_t *dset, vfdswmr_cc_chunk_t *chunk)
{
    const struct chunk *k;

    if (len == 0 || len > UINT64_MAX - addr)
        return 0;
    k = chunk_tree_floor(&c->chunks, addr); /* k->addr <= addr */
    if (k == NULL || addr + len > k->addr + k->len)
        return 0;
    *dset = k->d->id;
    *chunk = (vfdswmr_cc_chunk_t){.addr = k->addr, .size = k->len};
    return 1;
}

void
vfdswmr_cc_stats(const vfdswmr_cc_t *c, uint64_t dset, vfdswmr_cc_stats_t *out)
{
    const struct dset *d;

    if (dset == VFDSWMR_CC_ALL)
        *out = c->all;
    else if ((d = dset_get(c, dset)) != NULL)
        *out = d->st;
    else
        *out = (vfdswmr_cc_stats_t){0};
}

void
vfdswmr_cc_reset_stats(vfdswmr_cc_t *c)
{
    struct dset *d, *next;

    c->all = (vfdswmr_cc_stats_t){.entries = c->all.entries, .bytes = c->all.bytes};
    RB_FOREACH_SAFE (d, dset_tree, &c->dsets, next) {
        d->st = (vfdswmr_cc_stats_t){.entries = d->st.entries, .bytes = d->st.bytes};
        dset_maybe_forget(c, d);
    }
    CHECK_CACHE(c);
}

/* ---- vfdswmr_cc_check --------------------------------------------------- */

/* C1: entries in address order, non-empty, within max_entry, disjoint. */
static int
check_entries(const vfdswmr_cc_t *c, uint64_t *n)
{
    uint64_t prev_end = 0;
    struct entry *e;

    *n = 0;
    RB_FOREACH (e, entry_tree, (struct entry_tree *)&c->entries) {
        if (e->len == 0 || e->len > c->lim.max_entry || e->len > UINT64_MAX - e->addr || e->addr < prev_end ||
            e->d == NULL || e->d->nocache)
            return -1;
        prev_end = e->addr + e->len;
        ++*n;
    }
    return 0;
}

/* C2 for d: its LRU holds exactly st.entries entries of d, st.bytes bytes,
 * each in the entry tree. */
static int
check_dset(const vfdswmr_cc_t *c, const struct dset *d)
{
    uint64_t n = 0, bytes = 0;
    size_t live = 0;
    const struct entry *e;

    TAILQ_FOREACH (e, &d->entries, lru) {
        if (e->d != d || RB_FIND(entry_tree, (struct entry_tree *)&c->entries, (struct entry *)e) != e)
            return -1;
        n++;
        bytes += e->len;
    }
    if (n != d->st.entries || bytes != d->st.bytes || d->st.lookups != d->st.hits + d->st.misses)
        return -1;
    for (size_t i = 0; i < d->nchunks; i++)
        live += d->chunks[i].live;
    return live == d->nlive ? 0 : -1;
}

/* Registered chunks: disjoint, non-empty, each live and owned by a record. */
static int
check_chunks(const vfdswmr_cc_t *c)
{
    uint64_t prev_end = 0;
    struct chunk *k;

    RB_FOREACH (k, chunk_tree, (struct chunk_tree *)&c->chunks) {
        if (k->len == 0 || k->addr < prev_end || !k->live || dset_get(c, k->d->id) != k->d || k < k->d->chunks ||
            k >= k->d->chunks + k->d->nchunks)
            return -1;
        prev_end = k->addr + k->len;
    }
    return 0;
}

/* C1-C3: NULL when they hold, else which is broken. *size gets the number
 * of entries, registered chunks and dataset records looked at (for pacing). */
static const char *
check_all(const vfdswmr_cc_t *c, uint64_t *size)
{
    uint64_t nentries, sum[NSTATS] = {0}, all[NSTATS], holding = 0, on_lru = 0;
    struct dset *d;

    *size = 0;
    if (check_entries(c, &nentries) != 0)
        return "C1: an entry is empty, longer than max_entry, overlaps another or belongs to a no-cache dataset";
    *size = nentries;
    if (check_chunks(c) != 0)
        return "registered chunks overlap, are empty or are not their record's";
    RB_FOREACH (d, dset_tree, (struct dset_tree *)&c->dsets) {
        uint64_t v[NSTATS];

        if (check_dset(c, d) != 0)
            return "C2: a dataset's LRU list does not hold exactly its entries and bytes";
        memcpy(v, &d->st, sizeof v);
        for (size_t i = 0; i < NSTATS; i++)
            sum[i] += v[i];
        holding += d->st.entries > 0;
        *size += 1 + d->nlive;
    }
    TAILQ_FOREACH (d, &c->lru, lru) {
        if (d->st.entries == 0 || dset_get(c, d->id) != d)
            return "C2: the dataset LRU list holds a dataset without entries or without its record";
        on_lru++;
    }
    if (on_lru != holding)
        return "C2: a dataset holding entries is not on the dataset LRU list";
    memcpy(all, &c->all, sizeof all);
    if (memcmp(sum, all, sizeof all) != 0 || nentries != c->all.entries) /* C3: the sums */
        return "C3: the file-wide counters are not the sums over the datasets and the entries";
    return c->all.bytes <= c->lim.size ? NULL : "C3: more bytes cached than the budget";
}

int
vfdswmr_cc_check(const vfdswmr_cc_t *c)
{
    uint64_t size;

    return check_all(c, &size) == NULL ? 0 : -1;
}
