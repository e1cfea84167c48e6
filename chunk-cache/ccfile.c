/* A driver's shared chunk cache for one open file; see ccfile.h. */
#include "ccfile.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5err.h"

/* ---- dataset attribution through HDF5's API context ---------------------- */

typedef haddr_t (*get_tag_fn)(void);

static get_tag_fn tag_fn;
static pthread_once_t tag_once = PTHREAD_ONCE_INIT;

/* H5CX_get_tag, on HDF5 versions where it was checked to hold the dataset's
 * object header address during the dataset's raw-data I/O: 1.14.5 (Debian
 * 13) and 2.2.0 (Debian unstable); tests/integration/chunk_cache.sh checks
 * it again (cctest's tag_attribution lists the same versions). */
static void
find_tag_fn(void)
{
    static const unsigned checked[][3] = {{1, 14, 5}, {2, 2, 0}};
    unsigned v[3];

    if (H5get_libversion(&v[0], &v[1], &v[2]) < 0)
        return;
    for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++)
        if (!memcmp(v, checked[i], sizeof v))
            tag_fn = (get_tag_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "H5CX_get_tag");
}

static uint64_t
current_dset(const vfdswmr_ccfile_t *f)
{
    haddr_t tag;

    if (!f->use_tag || (tag = tag_fn()) == HADDR_UNDEF || tag >= (haddr_t)VFDSWMR_CC_ALL)
        return VFDSWMR_CC_ANON;
    return (uint64_t)tag;
}

/* The dataset a raw read of [addr, addr + size) counts for: the API
 * context's tag, else the registered chunk it lies in, else none. */
static uint64_t
read_dset(const vfdswmr_ccfile_t *f, haddr_t addr, size_t size)
{
    uint64_t d = current_dset(f);
    vfdswmr_cc_chunk_t ch;

    if (d == VFDSWMR_CC_ANON && vfdswmr_cc_find_chunk(f->cc, addr, size, &d, &ch) != 1)
        d = VFDSWMR_CC_ANON;
    return d;
}

/* ---- set-up ------------------------------------------------------------------ */

static vfdswmr_cc_limits_t
limits_of(unsigned long long size, unsigned long long max_entry, unsigned long long dset_min)
{
    vfdswmr_cc_limits_t l = vfdswmr_cc_default_limits((size_t)size);

    if (max_entry != 0 && max_entry != UINT64_MAX)
        l.max_entry = (size_t)max_entry;
    /* An entry larger than the budget is never kept, so it must never be
     * loaded either: load_chunk would read a whole chunk for every small
     * read of it and throw it away. */
    if (l.max_entry > l.size)
        l.max_entry = l.size;
    if (dset_min != UINT64_MAX)
        l.dset_min = (size_t)dset_min;
    return l;
}

int
vfdswmr_ccf_init(vfdswmr_ccfile_t *f, const vfdswmr_config_t *cfg, const char *drv_name)
{
    memset(f, 0, sizeof *f);
    f->drv_name = drv_name;
    pthread_once(&tag_once, find_tag_fn);
    f->use_tag = cfg->chunk_cache_tag && tag_fn != NULL;
    f->readahead = cfg->chunk_cache_readahead;
    if (pthread_mutex_init(&f->mu, NULL) != 0) {
        VFDSWMR_ERR(H5E_CANTINIT, "%s: cannot initialise the chunk cache's mutex", drv_name);
        return -1;
    }
    f->ready = true;
    if (cfg->chunk_cache_size == 0)
        return 0;
    vfdswmr_cc_limits_t l = limits_of(cfg->chunk_cache_size, cfg->chunk_cache_max_entry, cfg->chunk_cache_dset_min);
    if (NULL == (f->cc = vfdswmr_cc_new(&l))) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory for the chunk cache", drv_name);
        return -1;
    }
    return 0;
}

void
vfdswmr_ccf_fini(vfdswmr_ccfile_t *f)
{
    vfdswmr_cc_free(f->cc);
    f->cc = NULL;
    if (f->ready)
        pthread_mutex_destroy(&f->mu);
    f->ready = false;
}

void
vfdswmr_ccf_forbid(vfdswmr_ccfile_t *f, const char *why)
{
    pthread_mutex_lock(&f->mu);
    vfdswmr_cc_free(f->cc);
    f->cc = NULL;
    f->forbidden = why;
    pthread_mutex_unlock(&f->mu);
}

/* ---- I/O ----------------------------------------------------------------------- */

/* The lower file's end of allocation for raw data (HADDR_UNDEF: unknown). */
static haddr_t
raw_eoa(const vfdswmr_file_t *base)
{
    return VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(base->lower, H5FD_MEM_DRAW), _r == HADDR_UNDEF);
}

/* Read [start, start + len) from the lower file, cache it as one entry of
 * dset (partial when [addr, addr + size), which it holds, is less) and
 * serve [addr, addr + size) from it. 1 served, 0 not tried (out of
 * memory), -1 the read failed. */
static int
load_entry(vfdswmr_ccfile_t *f, const vfdswmr_file_t *base, uint64_t dset, hid_t dxpl, uint64_t start, size_t len,
           haddr_t addr, size_t size, void *buf)
{
    void *img = malloc(len);

    VFDSWMR_ASSERT(start <= addr && addr + size <= start + len);
    if (img == NULL)
        return 0;
    if (vfdswmr_stack_read(base, H5FD_MEM_DRAW, dxpl, start, len, img) < 0) {
        free(img);
        return -1;
    }
    memcpy(buf, (char *)img + (addr - start), size);
    vfdswmr_cc_insert(f->cc, dset, start, len, img, size < len);
    free(img);
    return 1;
}

/* A miss inside a registered chunk: load the whole chunk (when it fits the
 * cache and lies below the end of allocation). 1 served, 0 not tried, -1. */
static int
load_chunk(vfdswmr_ccfile_t *f, const vfdswmr_file_t *base, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    vfdswmr_cc_limits_t l;
    vfdswmr_cc_chunk_t ch;
    uint64_t dset;
    haddr_t eoa;

    vfdswmr_cc_get_limits(f->cc, &l);
    if (vfdswmr_cc_find_chunk(f->cc, addr, size, &dset, &ch) != 1 || ch.size > l.max_entry ||
        (eoa = raw_eoa(base)) == HADDR_UNDEF || ch.addr + ch.size > eoa)
        return 0;
    return load_entry(f, base, dset, dxpl, ch.addr, (size_t)ch.size, addr, size, buf);
}

/* The stream of dset: its slot, or the least recently used one, reset. */
static vfdswmr_ccf_stream_t *
stream_of(vfdswmr_ccfile_t *f, uint64_t dset)
{
    vfdswmr_ccf_stream_t *s = &f->ra[0];

    for (size_t i = 0; i < VFDSWMR_CCF_RA_STREAMS; i++) {
        if (f->ra[i].used && f->ra[i].dset == dset) {
            s = &f->ra[i];
            break;
        }
        if (f->ra[i].used < s->used)
            s = &f->ra[i];
    }
    if (!s->used || s->dset != dset)
        *s = (vfdswmr_ccf_stream_t){.dset = dset};
    s->used = ++f->ra_clock;
    return s;
}

/* A miss of [addr, addr + size) too small to be cached (ccfile.h,
 * read-ahead): counted in its stream; at a steady stride, the window ahead
 * is loaded, inserted and served from. 1 served, 0 not, -1 failed. */
static int
read_ahead(vfdswmr_ccfile_t *f, const vfdswmr_file_t *base, uint64_t dset, hid_t dxpl, haddr_t addr, size_t size,
           void *buf)
{
    vfdswmr_ccf_stream_t *s = stream_of(f, dset);
    uint64_t from = s->wend > s->last ? s->wend : s->last + 1; /* the first byte no window holds */
    vfdswmr_cc_limits_t l;
    haddr_t eoa;
    uint64_t len;
    int rc;

    if (s->stride && addr > s->last && (addr - s->last) % s->stride == 0 && addr >= from && addr - from < s->stride)
        s->run++;
    else {
        s->stride = addr > s->last && addr - s->last <= VFDSWMR_CCF_RA_MAX_STRIDE ? addr - s->last : 0;
        s->run = s->stride ? 2 : 1; /* this miss and the one before, at the new stride */
        s->wend = 0;
        s->window = VFDSWMR_CCF_RA_FIRST;
    }
    s->last = addr;
    if (s->run < VFDSWMR_CCF_RA_RUN)
        return 0;
    vfdswmr_cc_get_limits(f->cc, &l);
    len = s->window < l.max_entry ? s->window : l.max_entry;
    if ((eoa = raw_eoa(base)) == HADDR_UNDEF || addr >= eoa)
        return 0;
    if (len > eoa - addr)
        len = eoa - addr;
    if (len <= size || !vfdswmr_cc_keeps(f->cc, dset, (size_t)len))
        return 0; /* a window the cache would not keep is never read */
    if ((rc = load_entry(f, base, dset, dxpl, addr, (size_t)len, addr, size, buf)) == 1) {
        s->wend = addr + len;
        s->window = s->window < l.max_entry / 2 ? s->window * 2 : l.max_entry;
    }
    return rc;
}

herr_t
vfdswmr_ccf_read(vfdswmr_ccfile_t *f, const vfdswmr_file_t *base, H5FD_mem_t type, hid_t dxpl, haddr_t addr,
                 size_t size, void *buf)
{
    herr_t rc = 0;
    int loaded;
    uint64_t dset;

    if (type != H5FD_MEM_DRAW || size == 0)
        return vfdswmr_stack_read(base, type, dxpl, addr, size, buf);
    pthread_mutex_lock(&f->mu);
    if (f->cc == NULL)
        rc = vfdswmr_stack_read(base, type, dxpl, addr, size, buf);
    else if (vfdswmr_cc_lookup(f->cc, dset = read_dset(f, addr, size), addr, size, buf) == 1)
        rc = 0;
    else if ((loaded = load_chunk(f, base, dxpl, addr, size, buf)) != 0)
        rc = loaded < 0 ? -1 : 0;
    else if (f->readahead && size < VFDSWMR_CCF_MIN_ENTRY &&
             (loaded = read_ahead(f, base, dset, dxpl, addr, size, buf)) != 0)
        rc = loaded < 0 ? -1 : 0;
    else if ((rc = vfdswmr_stack_read(base, type, dxpl, addr, size, buf)) >= 0 && size >= VFDSWMR_CCF_MIN_ENTRY)
        vfdswmr_cc_insert(f->cc, dset, addr, size, buf, false); /* not cached when too big */
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void
vfdswmr_ccf_written(vfdswmr_ccfile_t *f, haddr_t addr, size_t size, const void *buf, bool ok)
{
    if (size == 0)
        return;
    pthread_mutex_lock(&f->mu);
    if (f->cc && ok)
        vfdswmr_cc_update(f->cc, addr, size, buf);
    else if (f->cc)
        vfdswmr_cc_invalidate(f->cc, addr, size);
    pthread_mutex_unlock(&f->mu);
}

void
vfdswmr_ccf_truncated(vfdswmr_ccfile_t *f, haddr_t eof)
{
    pthread_mutex_lock(&f->mu);
    if (f->cc)
        vfdswmr_cc_truncate(f->cc, eof == HADDR_UNDEF ? 0 : eof); /* unknown end: drop everything */
    pthread_mutex_unlock(&f->mu);
}

void
vfdswmr_ccf_invalidate(vfdswmr_ccfile_t *f, uint64_t addr, uint64_t len)
{
    pthread_mutex_lock(&f->mu);
    if (f->cc)
        vfdswmr_cc_invalidate(f->cc, addr, len);
    pthread_mutex_unlock(&f->mu);
}

void
vfdswmr_ccf_invalidate_all(vfdswmr_ccfile_t *f)
{
    vfdswmr_ccf_invalidate(f, 0, UINT64_MAX);
}

bool
vfdswmr_ccf_holds_data(vfdswmr_ccfile_t *f)
{
    vfdswmr_cc_stats_t s = {0};

    pthread_mutex_lock(&f->mu);
    if (f->cc)
        vfdswmr_cc_stats(f->cc, VFDSWMR_CC_ALL, &s);
    pthread_mutex_unlock(&f->mu);
    return s.entries > 0;
}

/* ---- ctl operations -------------------------------------------------------------- */

static int
configure(vfdswmr_ccfile_t *f, const vfdswmr_chunk_cache_config_t *c)
{
    if (c->size > VFDSWMR_MAX_CACHE_SIZE) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: chunk cache size %llu is over the limit (1 TiB)", f->drv_name, c->size);
        return -1;
    }
    if (c->size > 0 && f->forbidden) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: no chunk cache on this file: %s", f->drv_name, f->forbidden);
        return -1;
    }
    vfdswmr_cc_limits_t l = limits_of(c->size, c->max_entry, c->dset_min);
    if (c->size == 0) {
        vfdswmr_cc_free(f->cc);
        f->cc = NULL;
        return 0;
    }
    if (f->cc == NULL ? (f->cc = vfdswmr_cc_new(&l)) == NULL : vfdswmr_cc_set_limits(f->cc, &l) < 0) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory configuring the chunk cache", f->drv_name);
        return -1;
    }
    return 0;
}

static void
public_stats(const vfdswmr_cc_stats_t *s, vfdswmr_chunk_cache_stats_t *o)
{
    *o = (vfdswmr_chunk_cache_stats_t){s->lookups,      s->hits,       s->misses,    s->bytes_served,
                                       s->bytes_loaded, s->insertions, s->evictions, s->invalidations,
                                       s->updates,      s->entries,    s->bytes};
}

static int
register_chunks(vfdswmr_ccfile_t *f, const vfdswmr_chunk_cache_chunks_t *c)
{
    vfdswmr_cc_chunk_t *v = c->n ? calloc(c->n, sizeof *v) : NULL;
    int rc;

    if (c->n && (v == NULL || c->chunks == NULL)) {
        free(v);
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: %s registering %zu chunks", f->drv_name, v ? "no chunk array" : "out of memory",
                    c->n);
        return -1;
    }
    for (size_t i = 0; i < c->n; i++)
        v[i] = (vfdswmr_cc_chunk_t){c->chunks[2 * i], c->chunks[2 * i + 1]};
    rc = vfdswmr_cc_register(f->cc, c->dataset, v, c->n);
    free(v);
    if (rc < 0)
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory registering %zu chunks", f->drv_name, c->n);
    return rc < 0 ? -1 : 0;
}

static int
ctl_locked(vfdswmr_ccfile_t *f, uint64_t op, const void *in, void **out)
{
    const unsigned long long *dset = in;

    switch (op) {
    case VFDSWMR_CTL_CC_CONFIGURE:
        return configure(f, in);
    case VFDSWMR_CTL_CC_GET_STATS: {
        vfdswmr_cc_stats_t s;
        memset(&s, 0, sizeof s);
        if (f->cc)
            vfdswmr_cc_stats(f->cc, dset ? *dset : VFDSWMR_CC_ALL, &s);
        public_stats(&s, *(vfdswmr_chunk_cache_stats_t **)out);
        return 0;
    }
    case VFDSWMR_CTL_CC_RESET_STATS:
        if (f->cc)
            vfdswmr_cc_reset_stats(f->cc);
        return 0;
    case VFDSWMR_CTL_CC_SET_DATASET: {
        const vfdswmr_chunk_cache_dataset_t *d = in;
        if (f->cc &&
            vfdswmr_cc_set_dset(f->cc, d->dataset, d->min_bytes == ULLONG_MAX ? SIZE_MAX : (size_t)d->min_bytes,
                                d->nocache != 0) < 0) {
            VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory", f->drv_name);
            return -1;
        }
        return 0;
    }
    case VFDSWMR_CTL_CC_EVICT:
        if (f->cc)
            vfdswmr_cc_evict(f->cc, dset ? *dset : VFDSWMR_CC_ALL);
        return 0;
    case VFDSWMR_CTL_CC_REGISTER:
        return f->cc ? register_chunks(f, in) : 0;
    default:
        return 1;
    }
}

int
vfdswmr_ccf_ctl(vfdswmr_ccfile_t *f, uint64_t op, const void *in, void **out)
{
    int rc;

    if (op < VFDSWMR_CTL_CC_CONFIGURE || op > VFDSWMR_CTL_CC_REGISTER)
        return 1;
    if ((op == VFDSWMR_CTL_CC_CONFIGURE || op == VFDSWMR_CTL_CC_SET_DATASET || op == VFDSWMR_CTL_CC_REGISTER) &&
        in == NULL) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: chunk cache operation %llu needs its input", f->drv_name,
                    (unsigned long long)op);
        return -1;
    }
    if (op == VFDSWMR_CTL_CC_GET_STATS && (out == NULL || *out == NULL)) {
        VFDSWMR_ERR(H5E_BADVALUE, "%s: chunk cache statistics need somewhere to go", f->drv_name);
        return -1;
    }
    pthread_mutex_lock(&f->mu);
    rc = ctl_locked(f, op, in, out);
    pthread_mutex_unlock(&f->mu);
    return rc;
}
