/*
 * Old bytes kept on disk only (docs/DESIGN.md section 6, "Keeping the old
 * bytes"). keep_old (eoa.c) makes the newest snapshot hold the old bytes of
 * freed space before HDF5 may put raw data there. Pages the page buffer
 * tracks get a waiting image there (pagebuf.h); every other page of the
 * space gets a metadata file entry made here from the HDF5 file's bytes
 * (what that snapshot reads there, since the page buffer does not have the
 * page), the kept bytes marked metadata: up to VFDSWMR_DK_PAGES pages an
 * entry and VFDSWMR_DK_BATCH bytes of images a publish, so keeping a large
 * free costs the writer the memory of one batch, not of the space.
 *
 * The entries stay in the index while the consistency point before the
 * keep is the newest (ticks publish it again); the publish of one taken
 * after the keep (hold_cp) removes them: that snapshot reads the space
 * from the HDF5 file, and readers of the older one keep reading the images
 * until lag epochs have passed (a removed entry's space is deferred as any
 * superseded image's, mdwriter.h). Recovery restores their kept bytes into
 * the HDF5 file as any image's metadata ranges.
 *
 * An entry the newest snapshot reads is `live` (no consistency point taken
 * since the keep); one whose consistency point is taken but not yet
 * published is dying: the publish that carries it removes it.
 *
 * Invariants (vfdswmr_writer_dk_check): published entries sorted by page
 * and disjoint, waiting ones too, each of 1..VFDSWMR_DK_PAGES pages with
 * lo < hi <= its bytes; entries wait only between a plan and the publish
 * right after it (keep_old publishes at once, lock held). A page the page
 * buffer tracks never lies in a live entry the page buffer also publishes:
 * entries are made of untracked pages; keep_old refuses a range where a
 * page tracked since lies in a live entry (dk_compatible), so the page
 * buffer makes no waiting image there; and any other image of such a page
 * is published with a consistency point, after the keep, by the publish
 * that removes the entry (mdwriter drops an entry a change overlaps).
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "h5err.h"
#include "writer.h"

#define PS VFDSWMR_WRITER_PAGE_SIZE
/* Entries one batch makes at most (each of a page at least). */
#define BATCH_ENTRIES (VFDSWMR_DK_BATCH / PS)

typedef struct vfdswmr_dkent dkent_t;

void
vfdswmr_writer_dk_check(const vfdswmr_writer_t *w)
{
    VFDSWMR_ASSERT(w->dk.npub <= w->dk.n && w->dk.n <= w->dk.cap);
    VFDSWMR_ASSERT(w->dk.n == w->dk.npub || w->dk.img != NULL);
    for (size_t i = 0; i < w->dk.n; i++) {
        const dkent_t *e = &w->dk.ent[i];
        VFDSWMR_ASSERT(e->pages >= 1 && e->pages <= VFDSWMR_DK_PAGES && e->lo < e->hi && e->hi <= e->pages * PS);
        if (i > 0 && i != w->dk.npub)
            VFDSWMR_ASSERT(e[-1].page + e[-1].pages <= e->page);
    }
}

/* Does the newest snapshot read e's image (no consistency point since)? */
static bool
live(const vfdswmr_writer_t *w, const dkent_t *e)
{
    return e->hold_cp > w->cps;
}

/* The published entry holding `page`, or NULL. */
static const dkent_t *
entry_at(const vfdswmr_writer_t *w, uint64_t page)
{
    size_t a = 0, b = w->dk.npub;

    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (w->dk.ent[m].page <= page)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0)
        return NULL;
    const dkent_t *e = &w->dk.ent[a - 1];
    return page < e->page + e->pages ? e : NULL;
}

bool
vfdswmr_writer_dk_compatible(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi)
{
    VFDSWMR_ASSERT_LOCKED(w);
    if (w->dk.npub == 0)
        return true;
    for (uint64_t page = lo / PS; page * PS < hi; page++) {
        const dkent_t *e = entry_at(w, page);
        if (e == NULL || !live(w, e))
            continue;
        uint64_t start = e->page * PS, a = page * PS, b = a + PS;
        a = a > lo ? a : lo;
        b = b < hi ? b : hi;
        if (vfdswmr_pb_tracked(w->pb, page) || a < start + e->lo || b > start + e->hi)
            return false;
    }
    return true;
}

/* Would a new entry hold `page`: not tracked, and no live entry has it. */
static bool
wanted(const vfdswmr_writer_t *w, uint64_t page)
{
    const dkent_t *e;

    return !vfdswmr_pb_tracked(w->pb, page) && ((e = entry_at(w, page)) == NULL || !live(w, e));
}

static void
drop_batch(vfdswmr_writer_t *w)
{
    w->dk.n = w->dk.npub;
    free(w->dk.img);
    free(w->dk.chg);
    free(w->dk.rng);
    w->dk.img = NULL;
    w->dk.chg = NULL;
    w->dk.rng = NULL;
}

int
vfdswmr_writer_dk_plan(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi, uint64_t *at, size_t *pages)
{
    uint64_t page = *at / PS, last = (hi - 1) / PS;
    size_t used = 0, k = 0;

    VFDSWMR_ASSERT_LOCKED(w);
    VFDSWMR_ASSERT(!w->publishing && w->dk.n == w->dk.npub && lo <= *at && *at < hi);
    *pages = 0;
    if (vfdswmr_grow((void **)&w->dk.ent, &w->dk.cap, w->dk.n + BATCH_ENTRIES, sizeof *w->dk.ent) < 0)
        return -1;
    w->dk.img = malloc(VFDSWMR_DK_BATCH);
    w->dk.chg = calloc(BATCH_ENTRIES, sizeof *w->dk.chg);
    w->dk.rng = calloc(BATCH_ENTRIES, sizeof *w->dk.rng);
    if (!w->dk.img || !w->dk.chg || !w->dk.rng) {
        drop_batch(w);
        return -1;
    }
    while (page <= last && used + PS <= VFDSWMR_DK_BATCH) {
        if (!wanted(w, page)) {
            page++;
            continue;
        }
        uint64_t first = page;
        uint32_t n = 0;
        while (page <= last && n < VFDSWMR_DK_PAGES && used + (size_t)(n + 1) * PS <= VFDSWMR_DK_BATCH &&
               wanted(w, page)) {
            n++;
            page++;
        }
        uint8_t *img = w->dk.img + used;
        if (vfdswmr_writer_fill(w, first * PS, (size_t)n * PS, img) < 0) {
            VFDSWMR_LOG(&w->log, "warning", "cannot read the old bytes of HDF5 pages %llu-%llu to keep them",
                        (unsigned long long)first, (unsigned long long)(first + n - 1));
            drop_batch(w);
            return -1;
        }
        uint64_t s = first * PS, end = s + (uint64_t)n * PS < hi ? s + (uint64_t)n * PS : hi;
        dkent_t e = {.page = first,
                     .hold_cp = w->cps + 1,
                     .pages = n,
                     .lo = (uint32_t)(lo > s ? lo - s : 0),
                     .hi = (uint32_t)(end - s)};
        w->dk.ent[w->dk.n++] = e;
        w->dk.rng[k] = (vfdswmr_mdrange_t){.offset = e.lo, .length = e.hi - e.lo};
        w->dk.chg[k] = (vfdswmr_mdchange_t){
            .hdf5_page = first, .length = n * PS, .image = img, .ranges = &w->dk.rng[k], .nranges = 1};
        k++;
        used += (size_t)n * PS;
        *pages += n;
    }
    *at = page * PS < hi ? page * PS : hi;
    if (k == 0)
        drop_batch(w);
    vfdswmr_writer_dk_check(w);
    return 0;
}

int
vfdswmr_writer_dk_reserve(vfdswmr_writer_t *w)
{
    vfdswmr_pb_stats_t st;

    if (w->dk.n == 0)
        return 0;
    vfdswmr_pb_stats(w->pb, &st);
    if (vfdswmr_grow((void **)&w->dk.mchg, &w->dk.mchg_cap, st.pending + (w->dk.n - w->dk.npub) + 1,
                     sizeof *w->dk.mchg) < 0 ||
        vfdswmr_grow((void **)&w->dk.mrem, &w->dk.mrem_cap, st.in_index + st.dropped + w->dk.npub + 1,
                     sizeof *w->dk.mrem) < 0)
        return -1;
    return 0;
}

/* Does a publish of consistency point cps (final: the last) remove e? */
static bool
leaves(const dkent_t *e, uint64_t cps, bool final)
{
    return final || e->hold_cp <= cps;
}

void
vfdswmr_writer_dk_merge(vfdswmr_writer_t *w, uint64_t cps, bool final, const vfdswmr_mdchange_t **c, size_t *nc,
                        const uint64_t **r, size_t *nr)
{
    size_t nw = w->dk.n - w->dk.npub, i = 0, j = 0, m = 0;
    bool any = false;

    VFDSWMR_ASSERT_LOCKED(w);
#ifdef VFDSWMR_INVARIANTS
    for (size_t k = 0; k < *nc && w->dk.npub; k++) { /* the page buffer's images never supersede a live entry */
        const dkent_t *e = entry_at(w, (*c)[k].hdf5_page);
        VFDSWMR_ASSERT(e == NULL || leaves(e, cps, final));
    }
#endif
    if (nw) { /* both sorted, disjoint (see the top) */
        VFDSWMR_ASSERT(w->dk.mchg_cap >= *nc + nw);
        while (i < *nc || j < nw)
            if (j >= nw || (i < *nc && (*c)[i].hdf5_page < w->dk.chg[j].hdf5_page))
                w->dk.mchg[m++] = (*c)[i++];
            else
                w->dk.mchg[m++] = w->dk.chg[j++];
        for (size_t k = 1; k < m; k++)
            VFDSWMR_ASSERT(w->dk.mchg[k - 1].hdf5_page + w->dk.mchg[k - 1].length / PS <= w->dk.mchg[k].hdf5_page);
        *c = w->dk.mchg;
        *nc = m;
    }
    for (size_t k = 0; k < w->dk.npub && !any; k++)
        any = leaves(&w->dk.ent[k], cps, final);
    if (!any)
        return;
    i = j = m = 0;
    VFDSWMR_ASSERT(w->dk.mrem_cap >= *nr + w->dk.npub);
    while (i < *nr || j < w->dk.npub) {
        if (j < w->dk.npub && !leaves(&w->dk.ent[j], cps, final)) {
            j++;
            continue;
        }
        uint64_t next;
        if (j >= w->dk.npub || (i < *nr && (*r)[i] <= w->dk.ent[j].page)) {
            next = (*r)[i++];
        }
        else
            next = w->dk.ent[j++].page;
        if (m == 0 || w->dk.mrem[m - 1] != next)
            w->dk.mrem[m++] = next;
    }
    *r = w->dk.mrem;
    *nr = m;
}

static int
cmp_entry(const void *a, const void *b)
{
    const dkent_t *x = a, *y = b;
    return (x->page > y->page) - (x->page < y->page);
}

void
vfdswmr_writer_dk_done(vfdswmr_writer_t *w, uint64_t cps, bool final, bool ok)
{
    size_t keep = 0;

    VFDSWMR_ASSERT_LOCKED(w);
    if (!ok) {
        drop_batch(w);
        return;
    }
    /* the published ones that stay, then the waiting ones: all published */
    for (size_t i = 0; i < w->dk.n; i++)
        if (i >= w->dk.npub || !leaves(&w->dk.ent[i], cps, final))
            w->dk.ent[keep++] = w->dk.ent[i];
    if (w->dk.npub != w->dk.n && keep)
        qsort(w->dk.ent, keep, sizeof *w->dk.ent, cmp_entry);
    w->dk.n = w->dk.npub = keep;
    drop_batch(w);
    vfdswmr_writer_dk_check(w);
}

void
vfdswmr_writer_dk_free(vfdswmr_writer_t *w)
{
    drop_batch(w);
    free(w->dk.ent);
    free(w->dk.mchg);
    free(w->dk.mrem);
    memset(&w->dk, 0, sizeof w->dk);
}
