/*
 * vfd_swmr_reader: a metadata read, resolved page by page -- pages the
 * adopted snapshot's index names come from their images in the metadata
 * file, every other page from the HDF5 file -- then the superblock patch
 * and the lag check.
 *
 * Invariants:
 *  - An image is used only after its checksum matched the index entry; a
 *    verified image is cached under (session, tick, page) of its snapshot
 *    and the cache is emptied whenever another snapshot is adopted (by
 *    snapshot.c, which adopts it; this file fills, reads and frees it).
 *  - Every metadata read ends with the lag check; a read that fails a
 *    check returns -1 with the reason on the error stack, never bytes.
 *  - Bytes read from the HDF5 file get the writer's copies of freed space
 *    that the snapshot still reads there laid over them (kept.c) before
 *    the lag check.
 *  - Raw data comes from the HDF5 file but where the index names a page
 *    and its ranges mark bytes as metadata: raw data the writer wrote into
 *    space readers may still read is versioned like metadata
 *    (vfd-swmr-writer/inplace.c) and read from the image; with a writer's
 *    snapshot in use a raw read ends with the lag check too.
 */
#include "reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "h5err.h"
#include "superblock.h"

void
vfdswmr_rdr_cache_free(rdr_t *r)
{
    for (unsigned i = 0; i < RDR_CACHE_SLOTS; i++) {
        free(r->cache[i].buf);
        r->cache[i] = (rdr_image_t){0};
    }
}

/* The slot holding e's image, or the least recently used one (empty first). */
static rdr_image_t *
cache_slot(rdr_t *r, const vfdswmr_mdentry_t *e, bool *hit)
{
    const vfdswmr_mdhdr_t *h = &r->md.snap.hdr;
    rdr_image_t *victim = &r->cache[0];

    for (unsigned i = 0; i < RDR_CACHE_SLOTS; i++) {
        rdr_image_t *c = &r->cache[i];
        if (c->last_use && c->session == h->session && c->tick == h->tick && c->hdf5_page == e->hdf5_page) {
            *hit = true;
            return c;
        }
        if (c->last_use < victim->last_use)
            victim = c;
    }
    *hit = false;
    return victim;
}

/* Report a bad image; the lag check first, since a writer far ahead may
 * have reused its space legitimately. */
static int
image_error(rdr_t *r, const vfdswmr_mdentry_t *e, vfdswmr_mderr_t err)
{
    unsigned long long page = (unsigned long long)e->hdf5_page, tick = (unsigned long long)r->md.snap.hdr.tick;

    if (err == VFDSWMR_MD_ENOMEM) {
        VFDSWMR_ERR(H5E_CANTALLOC, "%s: out of memory for a page image of %u bytes", RDR_NAME, e->length);
        return -1;
    }
    if (err == VFDSWMR_MD_EIO) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read page %llu of the snapshot of tick %llu from \"%s\": %s", RDR_NAME,
                    page, tick, r->md.path, strerror(errno));
        return -1;
    }
    if (vfdswmr_rdr_lag_check(r) < 0)
        return -1;
    if (err == VFDSWMR_MD_ESHORT)
        VFDSWMR_ERR(H5E_READERROR,
                    "%s: metadata file damaged: page %llu of the snapshot of tick %llu lies past the end of "
                    "\"%s\"",
                    RDR_NAME, page, tick, r->md.path);
    else
        VFDSWMR_ERR(H5E_READERROR,
                    "%s: metadata file damaged: page %llu of the snapshot of tick %llu fails its checksum "
                    "(\"%s\")",
                    RDR_NAME, page, tick, r->md.path);
    return -1;
}

/* Read e's image into slot c and verify it: 0, or -1 with the reason on
 * the stack (c is left empty). */
static int
cache_fill(rdr_t *r, rdr_image_t *c, const vfdswmr_mdentry_t *e)
{
    const vfdswmr_mdhdr_t *h = &r->md.snap.hdr;
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&r->md.fd);
    vfdswmr_mderr_t err;

    c->last_use = 0;
    if (c->cap < e->length) {
        uint8_t *b = realloc(c->buf, e->length);
        if (b == NULL)
            return image_error(r, e, VFDSWMR_MD_ENOMEM);
        c->buf = b;
        c->cap = e->length;
    }
    if ((err = vfdswmr_mdr_read_image(&io, h->page_size, e, c->buf)) != VFDSWMR_MD_OK)
        return image_error(r, e, err);
    c->session = h->session;
    c->tick = h->tick;
    c->hdf5_page = e->hdf5_page;
    return 0;
}

/* e's verified image, from the cache or read now; NULL with the reason on
 * the stack. */
static const uint8_t *
image_of(rdr_t *r, const vfdswmr_mdentry_t *e)
{
    bool hit;
    rdr_image_t *c = cache_slot(r, e, &hit);

    if (!hit && cache_fill(r, c, e) < 0)
        return NULL;
    c->last_use = ++r->use_clock;
    return c->buf;
}

/* From the HDF5 file, with the writer's copies of freed space our snapshot
 * reads there (kept.c). */
static herr_t
lower_read(rdr_t *r, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    if (vfdswmr_pt_read(&r->base.pub, type, dxpl, addr, size, buf) < 0)
        return -1;
    return vfdswmr_rdr_kept_patch(r, addr, size, buf) < 0 ? -1 : 0;
}

/* The entry whose image holds the byte at addr, or NULL. */
static const vfdswmr_mdentry_t *
entry_at(const rdr_t *r, haddr_t addr)
{
    uint32_t ps = r->md.snap.hdr.page_size;
    const vfdswmr_mdentry_t *e = vfdswmr_mdidx_find(&r->md.snap.idx, ps, addr / ps);

    /* Past the image's length, in its last page, lies what it does not hold. */
    return e && addr < e->hdf5_page * ps + e->length ? e : NULL;
}

/* [addr, addr + size) from the snapshot: images where it names pages, the
 * HDF5 file in between (one lower read per run of unnamed pages). */
static herr_t
assemble(rdr_t *r, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, uint8_t *buf)
{
    uint32_t ps = r->md.snap.hdr.page_size;
    haddr_t pos = addr, end = addr + size;

    while (pos < end) {
        const vfdswmr_mdentry_t *e = entry_at(r, pos);
        haddr_t stop;

        if (e) {
            const uint8_t *img = image_of(r, e);
            haddr_t start = e->hdf5_page * ps;
            if (img == NULL)
                return -1;
            stop = start + e->length < end ? start + e->length : end;
            memcpy(buf + (pos - addr), img + (pos - start), stop - pos);
        }
        else {
            stop = (pos / ps + 1) * ps;
            while (stop < end && entry_at(r, stop) == NULL)
                stop += ps;
            if (stop > end)
                stop = end;
            if (lower_read(r, type, dxpl, pos, stop - pos, buf + (pos - addr)) < 0)
                return -1;
        }
        pos = stop;
    }
    return 0;
}

herr_t
vfdswmr_rdr_read_meta(rdr_t *r, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    herr_t rc;

    if (r->md.snap.idx.nentries == 0)
        rc = lower_read(r, type, dxpl, addr, size, buf);
    else
        rc = assemble(r, type, dxpl, addr, size, buf);
    if (rc < 0)
        return -1;
    /* Only while a writer's metadata file is in use: without one the
     * superblock's flags keep guarding against writers that are not ours,
     * and the writer's seal (superblock.h) against a file its writer left
     * mixed, with no metadata file to read it right. */
    if (type == H5FD_MEM_SUPER && r->md.fd >= 0) { /* at 0, or after a user block */
        vfdswmr_sb_set_seal(buf, size, false);
        vfdswmr_sb_patch(buf, size, vfdswmr_rdr_snap_eoa(r));
    }
    else if (type == H5FD_MEM_SUPER && vfdswmr_sb_sealed(buf, size) == 1) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: the superblock says a vfd_swmr_writer has this file, or had it and died, but there was no "
                    "metadata file %s when it was opened: if a writer was just starting, open again; if it died, "
                    "run vfd_swmr_recover (with the writer's configuration)",
                    RDR_NAME, r->md.path);
        return -1;
    }
    return vfdswmr_rdr_lag_check(r) < 0 ? -1 : 0;
}

/* The first byte at or after pos that an entry holds, with that entry
 * (NULL: none before end). */
static const vfdswmr_mdentry_t *
next_entry(const rdr_t *r, haddr_t pos, haddr_t end, haddr_t *at)
{
    const vfdswmr_mdidx_t *idx = &r->md.snap.idx;
    uint32_t ps = r->md.snap.hdr.page_size;
    uint32_t k = vfdswmr_mdidx_search(idx->entries, idx->nentries, ps, pos / ps);

    for (; k < idx->nentries; k++) {
        const vfdswmr_mdentry_t *e = &idx->entries[k];
        haddr_t start = e->hdf5_page * ps;
        if (start >= end)
            return NULL;
        if (start + e->length > pos) {
            *at = start > pos ? start : pos;
            return e;
        }
    }
    return NULL;
}

herr_t
vfdswmr_rdr_overlay_raw(rdr_t *r, haddr_t addr, size_t size, void *buf)
{
    const vfdswmr_mdidx_t *idx = &r->md.snap.idx;
    uint32_t ps = r->md.snap.hdr.page_size;
    haddr_t pos = addr, end = addr + size;
    const vfdswmr_mdentry_t *e;

    /* no writer's snapshot: the HDF5 file is all there is -- unless a
     * writer this reader cannot find holds it */
    if (r->md.fd < 0)
        return vfdswmr_rdr_writer_unfound(r) < 0 ? -1 : 0;
    while (pos < end && (e = next_entry(r, pos, end, &pos)) != NULL) {
        haddr_t start = e->hdf5_page * ps, stop = start + e->length < end ? start + e->length : end;
        const uint8_t *img = NULL;

        for (uint32_t k = 0; k < e->nranges; k++) {
            const vfdswmr_mdrange_t *g = &idx->ranges[e->range_first + k];
            haddr_t lo = start + g->offset, hi = lo + g->length;
            lo = lo > pos ? lo : pos;
            hi = hi < stop ? hi : stop;
            if (lo >= hi)
                continue;
            if (img == NULL && (img = image_of(r, e)) == NULL)
                return -1;
            memcpy((uint8_t *)buf + (lo - addr), img + (lo - start), hi - lo);
        }
        pos = stop;
    }
    /* as for metadata: the file's bytes are the snapshot's only while the
     * writer has not written what replaced them (versioned raw data
     * reaches the file max_lag epochs after it was published) */
    return vfdswmr_rdr_lag_check(r) < 0 ? -1 : 0;
}
