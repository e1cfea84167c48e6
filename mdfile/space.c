/*
 * space.c - page allocator of the metadata file with a tick-tagged
 * delayed-free list (docs/DESIGN.md section 5).
 *
 * Invariants (vfdswmr_space_check() verifies each one):
 *  I1 1 <= reserved <= eof. Pages [reserved, eof) are allocated, deferred or
 *     free; pages [0, reserved) are none of these and never handed out.
 *  I2 Free runs are kept in a red-black tree keyed by start page. Every run
 *     has len >= 1 and lies in [reserved, eof); runs neither overlap nor
 *     touch (they are coalesced), and none ends at eof. Hence eof is one past
 *     the last page that is reserved, allocated or deferred, and when a run
 *     reaching eof is dropped the page below the new eof is never free: one
 *     shrink step always suffices.
 *  I3 Every tree node's `aux` is the longest run in its subtree. First fit
 *     descends by it in O(log n); see first_fit().
 *  I4 Deferred runs are on a list, oldest first, with non-decreasing tags;
 *     each has len >= 1, lies in [reserved, eof) and is disjoint from the
 *     other deferred runs and from the free runs.
 *  I5 free_pages and deferred_pages are the sums of the lengths on the tree
 *     and on the list.
 * Allocated pages are not recorded: they are what is neither free nor
 * deferred. Every page number p and end p + n is checked against overflow.
 *
 * Costs, n free runs: alloc, free, defer O(log n); release O(log n) per run
 * released; check O(n log n). Not thread-safe.
 *
 * Invariant builds (common/check.h) run the check after every change (alloc,
 * free, defer, release), paced when there are many runs, and abort on the
 * first invariant broken.
 */
#include "space.h"

#include <stdbool.h>
#include <stdlib.h>

#include "check.h"

struct run;
static void run_augment(struct run *r);

/* tree.h calls RB_AUGMENT on the nodes a rotation moves. */
#define RB_AUGMENT(x) run_augment(x)
#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>

/* A free or a deferred run of pages: a node is in exactly one structure. */
struct run {
    uint64_t start;
    uint64_t len;
    uint64_t aux; /* free: longest len in this subtree (I3); deferred: tag */
    union {
        RB_ENTRY(run) rb;    /* free runs */
        TAILQ_ENTRY(run) tq; /* deferred runs */
    } link;
};

RB_HEAD(free_tree, run);
TAILQ_HEAD(defer_list, run);

struct vfdswmr_space {
    uint64_t reserved;
    uint64_t eof;
    uint64_t free_pages;
    uint64_t deferred_pages;
    struct free_tree free;
    struct defer_list deferred; /* oldest first */
#ifdef VFDSWMR_INVARIANTS
    vfdswmr_pace_t pace; /* when the next check_all() is due */
#endif
};

static const char *check_all(const vfdswmr_space_t *s, uint64_t *nruns);
/* I1-I5 after a change (invariant builds only). */
#define CHECK_SPACE(s) VFDSWMR_CHECK_INVARIANTS(&(s)->pace, check_all((s), &(s)->pace.size))

/* The free runs next to a page range: pred starts at or before it, succ is
 * the run after pred (the first run when pred is NULL). */
struct neighbours {
    struct run *pred;
    struct run *succ;
};

static int
run_cmp(const struct run *a, const struct run *b)
{
    return (a->start > b->start) - (a->start < b->start);
}

/* RB_GENERATE_STATIC would need __unused, which libbsd leaves undefined (it
 * clashes with Linux headers); not every generated function is used. */
#define RUN_TREE_ATTR __attribute__((__unused__)) static
RB_GENERATE_INTERNAL(free_tree, run, link.rb, run_cmp, RUN_TREE_ATTR)

/* ---- the augmented tree --------------------------------------------------- */

static uint64_t
run_end(const struct run *r)
{
    VFDSWMR_ASSERT(r->len <= UINT64_MAX - r->start);
    return r->start + r->len; /* no overflow: I1, I2, I4 keep runs below eof */
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t
subtree_max(const struct run *r)
{
    return r != NULL ? r->aux : 0;
}

static uint64_t
augmented_value(const struct run *r)
{
    return max_u64(r->len, max_u64(subtree_max(RB_LEFT(r, link.rb)), subtree_max(RB_RIGHT(r, link.rb))));
}

static void
run_augment(struct run *r)
{
    r->aux = augmented_value(r);
}

/*
 * Recompute `aux` from r up to the root. tree.h (libbsd) augments only the
 * nodes a rotation moves and the direct parent of an inserted or unlinked
 * node, so after an insertion, a removal or a change of len the stale values
 * all lie on one path to the root: the one this walk repairs.
 */
static void
augment_path(struct run *r)
{
    for (; r != NULL; r = RB_PARENT(r, link.rb))
        run_augment(r);
}

static void
tree_insert(vfdswmr_space_t *s, struct run *r)
{
    struct run *dup;

    r->aux = r->len;
    dup = RB_INSERT(free_tree, &s->free, r); /* never a duplicate start (I2) */
    VFDSWMR_ASSERT(dup == NULL);
    augment_path(r);
}

/* Unlink r from the tree and free it. */
static void
tree_drop(vfdswmr_space_t *s, struct run *r)
{
    struct run *parent = RB_PARENT(r, link.rb); /* stays in the tree */

    RB_REMOVE(free_tree, &s->free, r);
    augment_path(parent);
    free(r);
}

/*
 * The lowest-addressed free run with len >= n, or NULL. At each node whose
 * subtree holds a fit: the left subtree holds a lower one if its maximum
 * allows, else the node fits, else the fit is to the right. O(log n).
 */
static struct run *
first_fit(const vfdswmr_space_t *s, uint64_t n)
{
    struct run *r = RB_ROOT(&s->free);

    if (subtree_max(r) < n)
        return NULL;
    while (r != NULL) {
        struct run *left = RB_LEFT(r, link.rb);
        if (subtree_max(left) >= n)
            r = left;
        else if (r->len >= n)
            return r;
        else
            r = RB_RIGHT(r, link.rb);
    }
    VFDSWMR_ASSERT(!"first_fit: a subtree maximum promised a fit that is not there (I3)");
    return NULL; /* unreachable while I3 holds */
}

static struct run *
tree_first(const vfdswmr_space_t *s)
{
    struct run *r = RB_ROOT(&s->free);

    while (r != NULL && RB_LEFT(r, link.rb) != NULL)
        r = RB_LEFT(r, link.rb);
    return r;
}

static struct neighbours
neighbours_of(const vfdswmr_space_t *s, uint64_t page)
{
    struct neighbours nb = {NULL, NULL};

    for (struct run *r = RB_ROOT(&s->free); r != NULL;) {
        if (r->start <= page) {
            nb.pred = r;
            r = RB_RIGHT(r, link.rb);
        }
        else
            r = RB_LEFT(r, link.rb);
    }
    nb.succ = nb.pred != NULL ? RB_NEXT(free_tree, &s->free, nb.pred) : tree_first(s);
    return nb;
}

/* ---- freeing -------------------------------------------------------------- */

/*
 * Whether [page, page + n) may be freed or deferred: n >= 1, it lies in
 * [reserved, eof) and overlaps no free run. Fills *nb on success.
 */
static bool
range_ok(const vfdswmr_space_t *s, uint64_t page, uint64_t n, struct neighbours *nb)
{
    if (n == 0 || page < s->reserved || page >= s->eof || n > s->eof - page)
        return false;
    *nb = neighbours_of(s, page);
    if (nb->pred != NULL && run_end(nb->pred) > page)
        return false;
    return nb->succ == NULL || nb->succ->start >= page + n;
}

/*
 * Make [page, page + n) free, coalescing with its neighbours nb, or move eof
 * down when the coalesced run reaches it (I2). `spare` (may be NULL) is a
 * node the caller gives up; it is used or freed. Returns false when a new
 * node was needed and none could be allocated: the pages stay allocated.
 */
static bool
add_free(vfdswmr_space_t *s, uint64_t page, uint64_t n, struct neighbours nb, struct run *spare)
{
    bool join_left = nb.pred != NULL && run_end(nb.pred) == page;
    bool join_right = nb.succ != NULL && nb.succ->start == page + n;
    struct run *node = NULL;

    if (page + n == s->eof) { /* then join_right is false (I2) */
        VFDSWMR_ASSERT(!join_right);
        s->eof = join_left ? nb.pred->start : page;
        if (join_left) {
            s->free_pages -= nb.pred->len;
            tree_drop(s, nb.pred);
        }
    }
    else if (join_left) {
        node = nb.pred;
        node->len += n;
        if (join_right) {
            node->len += nb.succ->len;
            tree_drop(s, nb.succ);
        }
    }
    else if (join_right) {
        node = nb.succ;
        node->start = page; /* still between its neighbours: order kept */
        node->len += n;
    }
    else {
        node = spare != NULL ? spare : malloc(sizeof *node);
        if (node == NULL)
            return false;
        node->start = page;
        node->len = n;
        tree_insert(s, node);
    }
    if (node != NULL) {
        s->free_pages += n;
        augment_path(node);
    }
    if (node != spare)
        free(spare);
    return true;
}

/* tag + max_lag <= now, without overflow. */
static bool
expired(uint64_t tag, uint64_t now, uint32_t max_lag)
{
    return tag <= now && now - tag >= max_lag;
}

/* ---- public functions ----------------------------------------------------- */

vfdswmr_space_t *
vfdswmr_space_new(uint64_t reserved_pages)
{
    vfdswmr_space_t *s;

    if (reserved_pages == 0 || (s = malloc(sizeof *s)) == NULL)
        return NULL;
    *s = (vfdswmr_space_t){.reserved = reserved_pages, .eof = reserved_pages};
    RB_INIT(&s->free);
    TAILQ_INIT(&s->deferred);
    return s;
}

/* Post-order, so no freed node is read; depth <= 2 log2(n + 1). */
static void
free_subtree(struct run *r)
{
    if (r == NULL)
        return;
    free_subtree(RB_LEFT(r, link.rb));
    free_subtree(RB_RIGHT(r, link.rb));
    free(r);
}

void
vfdswmr_space_destroy(vfdswmr_space_t *s)
{
    struct run *r;

    if (s == NULL)
        return;
    free_subtree(RB_ROOT(&s->free));
    while ((r = TAILQ_FIRST(&s->deferred)) != NULL) {
        TAILQ_REMOVE(&s->deferred, r, link.tq);
        free(r);
    }
    free(s);
}

int
vfdswmr_space_alloc(vfdswmr_space_t *s, uint64_t npages, uint64_t *page)
{
    struct run *r;

    if (s == NULL || page == NULL || npages == 0)
        return -1;
    if ((r = first_fit(s, npages)) == NULL) {
        if (npages > UINT64_MAX - s->eof)
            return -1;
        *page = s->eof;
        s->eof += npages;
        CHECK_SPACE(s);
        return 0;
    }
    VFDSWMR_ASSERT(r->len >= npages && r->start >= s->reserved); /* I1, I2 */
    *page = r->start;
    s->free_pages -= npages;
    if (r->len == npages) {
        tree_drop(s, r);
        CHECK_SPACE(s);
        return 0;
    }
    r->start += npages; /* the rest stays between the same neighbours */
    r->len -= npages;
    augment_path(r);
    CHECK_SPACE(s);
    return 0;
}

void
vfdswmr_space_free(vfdswmr_space_t *s, uint64_t page, uint64_t npages)
{
    struct neighbours nb;

    if (s != NULL && range_ok(s, page, npages, &nb)) {
        (void)add_free(s, page, npages, nb, NULL);
        CHECK_SPACE(s); /* (freeing deferred pages is caught here) */
    }
}

int
vfdswmr_space_defer(vfdswmr_space_t *s, uint64_t page, uint64_t npages, uint64_t tick)
{
    struct neighbours nb;
    struct run *r, *newest;

    if (s == NULL || !range_ok(s, page, npages, &nb) || (r = malloc(sizeof *r)) == NULL)
        return -1;
    newest = TAILQ_LAST(&s->deferred, defer_list);
    r->start = page;
    r->len = npages;
    r->aux = newest != NULL ? max_u64(newest->aux, tick) : tick; /* I4 */
    TAILQ_INSERT_TAIL(&s->deferred, r, link.tq);
    s->deferred_pages += npages;
    CHECK_SPACE(s);
    return 0;
}

uint64_t
vfdswmr_space_release(vfdswmr_space_t *s, uint64_t current_tick, uint32_t max_lag)
{
    uint64_t released = 0;
    struct run *r;

    if (s == NULL)
        return 0;
    /* Tags never decrease (I4): the first run not expired ends the scan. */
    while ((r = TAILQ_FIRST(&s->deferred)) != NULL && expired(r->aux, current_tick, max_lag)) {
        TAILQ_REMOVE(&s->deferred, r, link.tq);
        s->deferred_pages -= r->len;
        released += r->len;
        /* r is the spare node, so this cannot fail; disjointness (I4) makes
         * the neighbours valid. */
        (void)add_free(s, r->start, r->len, neighbours_of(s, r->start), r);
    }
    if (released)
        CHECK_SPACE(s);
    return released;
}

bool
vfdswmr_space_allocated(const vfdswmr_space_t *s, uint64_t page, uint64_t npages)
{
    struct neighbours nb;
    const struct run *r;

    if (s == NULL || !range_ok(s, page, npages, &nb)) /* reserved, past eof or free */
        return false;
    TAILQ_FOREACH (r, &s->deferred, link.tq)
        if (r->start < page + npages && page < run_end(r))
            return false;
    return true;
}

uint64_t
vfdswmr_space_eof(const vfdswmr_space_t *s)
{
    return s->eof;
}

uint64_t
vfdswmr_space_free_pages(const vfdswmr_space_t *s)
{
    return s->free_pages;
}

uint64_t
vfdswmr_space_deferred_pages(const vfdswmr_space_t *s)
{
    return s->deferred_pages;
}

uint64_t
vfdswmr_space_reserved_pages(const vfdswmr_space_t *s)
{
    return s->reserved;
}

/* ---- vfdswmr_space_check() ------------------------------------------------ */

/* Whether run r (start, len) is well formed and lies in [reserved, limit). */
static bool
run_inside(const vfdswmr_space_t *s, const struct run *r, uint64_t limit)
{
    return r->len >= 1 && r->start >= s->reserved && r->start < limit && r->len <= limit - r->start;
}

/* I3 and the tree's links at one node. */
static const char *
check_node(const struct run *r)
{
    const struct run *left = RB_LEFT(r, link.rb), *right = RB_RIGHT(r, link.rb);

    if ((left != NULL && RB_PARENT(left, link.rb) != r) || (right != NULL && RB_PARENT(right, link.rb) != r))
        return "free tree: a child does not point back to its parent";
    if (r->aux != augmented_value(r))
        return "free tree: a node's subtree maximum is wrong";
    return NULL;
}

/* I2, I3 and the free counter of I5, walking the tree in order. */
static const char *
check_free(const vfdswmr_space_t *s, size_t *count)
{
    uint64_t sum = 0;
    const char *err;
    const struct run *prev = NULL;

    *count = 0;
    if (RB_ROOT(&s->free) != NULL && RB_PARENT(RB_ROOT(&s->free), link.rb) != NULL)
        return "free tree: the root has a parent";
    for (struct run *r = tree_first(s); r != NULL; prev = r, r = RB_NEXT(free_tree, &s->free, r)) {
        if ((err = check_node(r)) != NULL)
            return err;
        /* Strictly below eof: a free run must not touch the end of file. */
        if (!run_inside(s, r, s->eof) || run_end(r) == s->eof)
            return "free run empty, overlapping the reserved pages or reaching the end of file";
        if (prev != NULL && run_end(prev) >= r->start)
            return "free runs not sorted, overlapping or not coalesced";
        sum += r->len;
        ++*count;
    }
    return sum == s->free_pages ? NULL : "free page counter does not match the free runs";
}

/* I4 except disjointness, and the deferred counter of I5. */
static const char *
check_deferred_list(const vfdswmr_space_t *s, size_t *count)
{
    uint64_t sum = 0;
    const struct run *prev = NULL;
    const struct run *r;

    *count = 0;
    TAILQ_FOREACH (r, &s->deferred, link.tq) {
        if (!run_inside(s, r, s->eof))
            return "deferred run empty, overlapping the reserved pages or past the end of file";
        if (prev != NULL && prev->aux > r->aux)
            return "deferred tags decrease from oldest to newest";
        sum += r->len;
        ++*count;
        prev = r;
    }
    return sum == s->deferred_pages ? NULL : "deferred page counter does not match the deferred runs";
}

static int
cmp_run_ptr(const void *a, const void *b)
{
    return run_cmp(*(const struct run *const *)a, *(const struct run *const *)b);
}

/*
 * Disjointness in I4: merge the deferred runs, sorted by start, with the free
 * runs (already sorted) and require each run to start at or after the end of
 * the one before.
 */
static const char *
check_disjoint(const vfdswmr_space_t *s, size_t ndeferred)
{
    const struct run **d = NULL;
    const struct run *r;
    struct run *f = tree_first(s);
    uint64_t end = s->reserved;
    size_t i = 0;
    const char *err = NULL;

    /* No overflow: the ndeferred runs themselves are larger than pointers. */
    if (ndeferred > 0 && (d = malloc(ndeferred * sizeof *d)) == NULL)
        return "out of memory while checking";
    TAILQ_FOREACH (r, &s->deferred, link.tq)
        d[i++] = r;
    if (ndeferred > 1)
        qsort(d, ndeferred, sizeof *d, cmp_run_ptr);
    for (i = 0; i < ndeferred || f != NULL;) {
        bool take_free = i == ndeferred || (f != NULL && f->start < d[i]->start);
        r = take_free ? f : d[i++];
        if (r->start < end) {
            err = "deferred runs overlap each other or free runs";
            break;
        }
        end = run_end(r);
        if (take_free)
            f = RB_NEXT(free_tree, &s->free, f);
    }
    free(d);
    return err;
}

/* Every invariant; *nruns gets the number of runs looked at (the checker's
 * size, for pacing). */
static const char *
check_all(const vfdswmr_space_t *s, uint64_t *nruns)
{
    size_t nfree = 0, ndeferred = 0;
    const char *err;

    *nruns = 0;
    if (s == NULL)
        return "no space manager";
    if (s->reserved == 0 || s->eof < s->reserved)
        return "reserved pages missing or past the end of file";
    err = check_free(s, &nfree);
    if (err == NULL)
        err = check_deferred_list(s, &ndeferred);
    *nruns = nfree + ndeferred;
    return err != NULL ? err : check_disjoint(s, ndeferred);
}

const char *
vfdswmr_space_check(const vfdswmr_space_t *s)
{
    uint64_t nruns;

    return check_all(s, &nruns);
}
