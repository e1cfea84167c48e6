/*
 * Updater file encoding, decoding and publication. The image layout is
 * computed in one place (layout()) from the plan, so the encoder and the
 * decoder's bounds checks (format_ud.c) agree by construction.
 */
#include "updater.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checksum.h"
#include "io.h"
#include "safefile.h"

int
vfdswmr_updater_name(char *out, size_t outlen, const char *base, uint64_t sequence)
{
    int n = snprintf(out, outlen, "%s.%llu", base, (unsigned long long)sequence);
    return (n < 0 || (size_t)n >= outlen) ? -1 : 0;
}

int
vfdswmr_updater_encode(const vfdswmr_mdplan_t *plan, uint16_t flags, uint64_t sequence, uint32_t page_size,
                       uint64_t session, uint64_t tick, uint8_t **out, size_t *outlen)
{
    vfdswmr_udhdr_t h = {
        .flags = flags, .page_size = page_size, .session = session, .sequence = sequence, .tick = tick};
    vfdswmr_udcl_t cl = {.tick = tick};
    uint8_t *buf;
    uint64_t page, len;

    if (plan == NULL) { /* CREATE_ONLY: a header alone */
        if (NULL == (buf = calloc(1, VFDSWMR_UDHDR_SIZE)))
            return -1;
        vfdswmr_udhdr_encode(&h, buf);
        *out = buf;
        *outlen = VFDSWMR_UDHDR_SIZE;
        return 0;
    }
    cl.nentries = (uint32_t)plan->nimages;
    if (plan->nimages && NULL == (cl.entries = calloc(plan->nimages, sizeof *cl.entries)))
        return -1;
    h.cl_offset = VFDSWMR_UDHDR_SIZE;
    h.cl_length = vfdswmr_udcl_size(cl.nentries);
    /* Layout: images from the first page boundary after the change list. */
    page = vfdswmr_pages(h.cl_offset + h.cl_length, page_size);
    for (size_t i = 0; i < plan->nimages; i++) {
        const vfdswmr_mdimage_t *im = &plan->images[i];
        cl.entries[i] = (vfdswmr_udentry_t){.ud_page = page,
                                            .md_page = im->md_page,
                                            .hdf5_page = im->hdf5_page,
                                            .length = im->length,
                                            .checksum = im->checksum};
        page += vfdswmr_pages(im->length, page_size);
    }
    cl.idx_ud_page = page;
    cl.idx_md_offset = plan->index_offset;
    cl.idx_len = (uint32_t)plan->index_len;
    cl.idx_checksum = vfdswmr_checksum(plan->index_image, plan->index_len);
    page += vfdswmr_pages(plan->index_len, page_size);
    cl.hdr_ud_page = page;
    cl.hdr_len = VFDSWMR_MDHDR_SIZE;
    cl.hdr_checksum = vfdswmr_checksum(plan->header_image, VFDSWMR_MDHDR_SIZE);
    len = page * page_size + VFDSWMR_MDHDR_SIZE;

    if (NULL == (buf = calloc(1, len))) {
        free(cl.entries);
        return -1;
    }
    vfdswmr_udhdr_encode(&h, buf);
    vfdswmr_udcl_encode(&cl, buf + h.cl_offset);
    for (size_t i = 0; i < plan->nimages; i++)
        memcpy(buf + cl.entries[i].ud_page * page_size, plan->images[i].image, plan->images[i].length);
    memcpy(buf + cl.idx_ud_page * page_size, plan->index_image, plan->index_len);
    memcpy(buf + cl.hdr_ud_page * page_size, plan->header_image, VFDSWMR_MDHDR_SIZE);
    free(cl.entries);
    *out = buf;
    *outlen = (size_t)len;
    return 0;
}

/* The embedded metadata file header and index must be what a reader accepts,
 * and agree with the updater that carries them. */
static vfdswmr_mderr_t
check_embedded(const vfdswmr_updater_t *u, const vfdswmr_udcl_t *cl)
{
    vfdswmr_mdhdr_t mh;
    vfdswmr_mdidx_t idx;
    vfdswmr_mderr_t err;

    if ((err = vfdswmr_mdhdr_decode(u->plan.header_image, VFDSWMR_MDHDR_SIZE, &mh)) != VFDSWMR_MD_OK)
        return err;
    if (mh.page_size != u->hdr.page_size)
        return VFDSWMR_MD_EPAGESIZE;
    if (mh.session != u->hdr.session)
        return VFDSWMR_MD_ESESSION;
    if (mh.tick != u->hdr.tick || cl->tick != u->hdr.tick)
        return VFDSWMR_MD_ETICK;
    if (mh.index_offset != cl->idx_md_offset || mh.index_length != cl->idx_len)
        return VFDSWMR_MD_EBOUNDS;
    err = vfdswmr_mdidx_decode(u->plan.index_image, u->plan.index_len, mh.page_size, &idx);
    if (err != VFDSWMR_MD_OK)
        return err;
    vfdswmr_mdidx_free(&idx);
    if (idx.session != mh.session)
        return VFDSWMR_MD_ESESSION;
    if (idx.tick != mh.tick)
        return VFDSWMR_MD_ETICK;
    return VFDSWMR_MD_OK;
}

vfdswmr_mderr_t
vfdswmr_updater_decode(const uint8_t *buf, size_t len, vfdswmr_updater_t *u)
{
    vfdswmr_udcl_t cl;
    vfdswmr_mderr_t err;
    uint64_t ps;

    memset(u, 0, sizeof *u);
    if ((err = vfdswmr_udhdr_decode(buf, len, &u->hdr)) != VFDSWMR_MD_OK)
        return err;
    if (u->hdr.flags & VFDSWMR_UD_CREATE_ONLY)
        return len == VFDSWMR_UDHDR_SIZE ? VFDSWMR_MD_OK : VFDSWMR_MD_ELENGTH;
    if (u->hdr.cl_offset > len || u->hdr.cl_length > len - u->hdr.cl_offset)
        return VFDSWMR_MD_ESHORT;
    ps = u->hdr.page_size;
    err = vfdswmr_udcl_decode(buf + u->hdr.cl_offset, (size_t)u->hdr.cl_length, u->hdr.page_size, len, &cl);
    if (err != VFDSWMR_MD_OK)
        return err;
    if (cl.nentries && NULL == (u->images = calloc(cl.nentries, sizeof *u->images))) {
        free(cl.entries);
        return VFDSWMR_MD_ENOMEM;
    }
    for (uint32_t i = 0; i < cl.nentries && err == VFDSWMR_MD_OK; i++) {
        const vfdswmr_udentry_t *e = &cl.entries[i];
        const uint8_t *img = buf + e->ud_page * ps;
        if (vfdswmr_checksum(img, e->length) != e->checksum)
            err = VFDSWMR_MD_ECHECKSUM;
        u->images[i] = (vfdswmr_mdimage_t){.md_page = e->md_page,
                                           .hdf5_page = e->hdf5_page,
                                           .length = e->length,
                                           .checksum = e->checksum,
                                           .image = img};
    }
    u->plan = (vfdswmr_mdplan_t){.page_size = u->hdr.page_size,
                                 .session = u->hdr.session,
                                 .tick = u->hdr.tick,
                                 .nimages = cl.nentries,
                                 .images = u->images,
                                 .index_image = buf + cl.idx_ud_page * ps,
                                 .index_len = cl.idx_len,
                                 .index_offset = cl.idx_md_offset,
                                 .header_image = buf + cl.hdr_ud_page * ps};
    if (err == VFDSWMR_MD_OK && (vfdswmr_checksum(u->plan.index_image, cl.idx_len) != cl.idx_checksum ||
                                 vfdswmr_checksum(u->plan.header_image, cl.hdr_len) != cl.hdr_checksum))
        err = VFDSWMR_MD_ECHECKSUM;
    if (err == VFDSWMR_MD_OK)
        err = check_embedded(u, &cl);
    free(cl.entries);
    if (err != VFDSWMR_MD_OK)
        vfdswmr_updater_free(u);
    return err;
}

uint64_t
vfdswmr_updater_size(const vfdswmr_udhdr_t *h, const vfdswmr_udcl_t *cl)
{
    uint64_t n, cl_end = h->cl_offset + h->cl_length, entry = vfdswmr_udcl_size(1) - vfdswmr_udcl_size(0);

    if (h->flags & VFDSWMR_UD_CREATE_ONLY)
        return VFDSWMR_UDHDR_SIZE;
    if (cl != NULL) /* the decoder placed the header image after every other (format.h) */
        return cl->hdr_ud_page * h->page_size + cl->hdr_len;
    /* Decoded headers bound cl_length by vfdswmr_udcl_size(UINT32_MAX) and the
     * page size by 2^30: no overflow below. */
    n = h->cl_length >= vfdswmr_udcl_size(0) ? (h->cl_length - vfdswmr_udcl_size(0)) / entry : 0;
    return (vfdswmr_pages(cl_end, h->page_size) + n + 1) * h->page_size + VFDSWMR_MDHDR_SIZE;
}

void
vfdswmr_updater_free(vfdswmr_updater_t *u)
{
    free(u->images);
    u->images = NULL;
    u->plan.images = NULL;
    u->plan.nimages = 0;
}

int
vfdswmr_updater_write(const char *base, uint64_t sequence, const uint8_t *buf, size_t len, bool durable)
{
    char name[4096 + 32], tmp[sizeof name + VFDSWMR_TEMP_SUFFIX_LEN];
    int fd, saved;

    if (vfdswmr_updater_name(name, sizeof name, base, sequence) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* A new file under an unpredictable name: nothing planted is followed. */
    if ((fd = vfdswmr_create_temp(name, tmp, sizeof tmp, 0644)) < 0)
        return -1;
    if (vfdswmr_pwrite_all(fd, buf, len, 0) < 0 || (durable && fsync(fd) < 0))
        goto fail;
    if (close(fd) < 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, name) < 0) /* replaces whatever is at name, a link itself rather than its target */
        goto fail;
    if (durable && vfdswmr_fsync_dir_of(name) < 0)
        return -1;
    return 0;
fail:
    saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = saved;
    return -1;
}
