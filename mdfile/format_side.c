/*
 * Encoders and decoders of the metadata file's two side files (byte
 * layouts: docs/FORMAT.md): the read-mark table header ("VRDM",
 * "<metadata file>.readers", used by marks.c) and the raw-data write log
 * ("VRAW", "<metadata file>.raw", used by rawlog.c).
 *
 * Invariants:
 * - integers go through the cursors of format_codec.h only; no struct is
 *   ever copied to or from a buffer;
 * - a decoder reads buf[i] only for i < len, and only after checking len;
 * - the decoders check in the orders format.h gives for each: the read-mark
 *   table header has no checksum (length, signature, version, reserved
 *   bytes, slot count); the raw-data log checks its version and count
 *   before its checksum, whose place the count gives;
 * - on failure a decoder's output is all zero (ranges NULL, nothing left
 *   allocated);
 * - the log's encoder writes exactly vfdswmr_rawlog_size(count) bytes, which
 *   invariant builds assert (common/check.h).
 */
#include "format.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "format_codec.h"

static const uint8_t MAGIC_VRDM[MAGIC_LEN] = {'V', 'R', 'D', 'M'};
static const uint8_t MAGIC_VRAW[MAGIC_LEN] = {'V', 'R', 'A', 'W'};
static const uint8_t MAGIC_VKPT[MAGIC_LEN] = {'V', 'K', 'P', 'T'};

/* ---- read-mark table header ------------------------------------------------ */

void
vfdswmr_markshdr_encode(const vfdswmr_markshdr_t *h, uint8_t out[VFDSWMR_MARKSHDR_SIZE])
{
    uint8_t *p = put_magic(out, MAGIC_VRDM);

    p = put32(p, VFDSWMR_MARKS_FORMAT_VERSION);
    p = put64(p, h->session);
    p = put64(p, h->release_below);
    p = put32(p, h->nslots);
    memset(p, 0, (size_t)(out + VFDSWMR_MARKSHDR_SIZE - p));
}

vfdswmr_mderr_t
vfdswmr_markshdr_decode(const uint8_t *buf, size_t len, vfdswmr_markshdr_t *h)
{
    const uint8_t *p = buf + MAGIC_LEN;

    memset(h, 0, sizeof *h);
    if (len < VFDSWMR_MARKSHDR_SIZE)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, MAGIC_VRDM, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (take32(&p) != VFDSWMR_MARKS_FORMAT_VERSION)
        return VFDSWMR_MD_EVERSION;
    h->session = take64(&p);
    h->release_below = take64(&p);
    h->nslots = take32(&p);
    for (const uint8_t *q = p; q < buf + VFDSWMR_MARKSHDR_SIZE; q++)
        if (*q) {
            memset(h, 0, sizeof *h);
            return VFDSWMR_MD_ERESERVED;
        }
    if (h->nslots == 0 || h->nslots > 65536) {
        memset(h, 0, sizeof *h);
        return VFDSWMR_MD_ECOUNT;
    }
    return VFDSWMR_MD_OK;
}

/* ---- raw-data write log ------------------------------------------------------ */

size_t
vfdswmr_rawlog_size(uint32_t n)
{
    return VFDSWMR_RAWLOG_HDR_SIZE + (size_t)n * VFDSWMR_RAWRANGE_SIZE + CKSUM_LEN;
}

void
vfdswmr_rawlog_encode(const vfdswmr_rawloghdr_t *h, const vfdswmr_rawrange_t *r, uint8_t *out)
{
    uint8_t *p = put_magic(out, MAGIC_VRAW);

    p = put32(p, VFDSWMR_RAWLOG_FORMAT_VERSION);
    p = put64(p, h->session);
    p = put64(p, h->first_tick);
    p = put64(p, h->last_tick);
    p = put32(p, h->count);
    for (uint32_t i = 0; i < h->count; i++) {
        p = put64(p, r[i].tick);
        p = put64(p, r[i].addr);
        p = put64(p, r[i].len);
    }
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + vfdswmr_rawlog_size(h->count));
    seal(out, p);
}

vfdswmr_mderr_t
vfdswmr_rawlog_decode(const uint8_t *buf, size_t len, vfdswmr_rawloghdr_t *h, vfdswmr_rawrange_t **r)
{
    const uint8_t *p = buf + MAGIC_LEN;
    vfdswmr_mderr_t err;

    memset(h, 0, sizeof *h);
    *r = NULL;
    if (len < VFDSWMR_RAWLOG_HDR_SIZE)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, MAGIC_VRAW, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (take32(&p) != VFDSWMR_RAWLOG_FORMAT_VERSION)
        return VFDSWMR_MD_EVERSION;
    vfdswmr_rawloghdr_t d = {.session = take64(&p), .first_tick = take64(&p), .last_tick = take64(&p)};
    d.count = take32(&p);
    if (d.count > VFDSWMR_RAWLOG_MAX)
        return VFDSWMR_MD_ECOUNT;
    if (len < vfdswmr_rawlog_size(d.count))
        return d.count > (len - VFDSWMR_RAWLOG_HDR_SIZE) / VFDSWMR_RAWRANGE_SIZE ? VFDSWMR_MD_ECOUNT
                                                                                 : VFDSWMR_MD_ESHORT;
    if ((err = check_frame(buf, len, vfdswmr_rawlog_size(d.count), MAGIC_VRAW)) != VFDSWMR_MD_OK)
        return err;
    if (d.last_tick != UINT64_MAX && d.first_tick > d.last_tick + 1)
        return VFDSWMR_MD_ETICK;
    vfdswmr_rawrange_t *v = d.count ? malloc((size_t)d.count * sizeof *v) : NULL;
    if (d.count && v == NULL)
        return VFDSWMR_MD_ENOMEM;
    for (uint32_t i = 0; i < d.count; i++) {
        v[i].tick = take64(&p);
        v[i].addr = take64(&p);
        v[i].len = take64(&p);
        err = v[i].tick < d.first_tick || v[i].tick > d.last_tick ? VFDSWMR_MD_ETICK
              : v[i].len == 0 || v[i].addr + v[i].len < v[i].addr ? VFDSWMR_MD_ERANGE
                                                                  : VFDSWMR_MD_OK;
        if (err != VFDSWMR_MD_OK) {
            free(v);
            return err;
        }
    }
    *h = d;
    *r = v;
    return VFDSWMR_MD_OK;
}

/* ---- kept old bytes ---------------------------------------------------------- */

size_t
vfdswmr_kept_size(uint32_t n)
{
    return VFDSWMR_KEPT_HDR_SIZE + (size_t)n * VFDSWMR_KEPT_ENTRY_SIZE + CKSUM_LEN;
}

void
vfdswmr_kept_encode(const vfdswmr_kepthdr_t *h, const vfdswmr_keptent_t *e, uint8_t *out)
{
    uint8_t *p = put_magic(out, MAGIC_VKPT);

    VFDSWMR_ASSERT(h->count <= VFDSWMR_KEPT_MAX);
    p = put32(p, VFDSWMR_KEPT_FORMAT_VERSION);
    p = put64(p, h->session);
    p = put32(p, h->count);
    for (uint32_t i = 0; i < h->count; i++) {
        p = put64(p, e[i].addr);
        p = put64(p, e[i].len);
        p = put64(p, e[i].tick);
        p = put64(p, e[i].data);
    }
    VFDSWMR_ASSERT(p + CKSUM_LEN == out + vfdswmr_kept_size(h->count));
    seal(out, p);
}

vfdswmr_mderr_t
vfdswmr_kept_decode(const uint8_t *buf, size_t len, uint64_t data_min, vfdswmr_kepthdr_t *h, vfdswmr_keptent_t *e)
{
    const uint8_t *p = buf + MAGIC_LEN;
    const uint64_t top = UINT64_C(1) << 63;
    vfdswmr_mderr_t err;

    memset(h, 0, sizeof *h);
    if (len < VFDSWMR_KEPT_HDR_SIZE)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, MAGIC_VKPT, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (take32(&p) != VFDSWMR_KEPT_FORMAT_VERSION)
        return VFDSWMR_MD_EVERSION;
    vfdswmr_kepthdr_t d = {.session = take64(&p)};
    d.count = take32(&p);
    if (d.count > VFDSWMR_KEPT_MAX)
        return VFDSWMR_MD_ECOUNT;
    if (len < vfdswmr_kept_size(d.count))
        return d.count > (len - VFDSWMR_KEPT_HDR_SIZE) / VFDSWMR_KEPT_ENTRY_SIZE ? VFDSWMR_MD_ECOUNT
                                                                                 : VFDSWMR_MD_ESHORT;
    if ((err = check_frame(buf, len, vfdswmr_kept_size(d.count), MAGIC_VKPT)) != VFDSWMR_MD_OK)
        return err;
    for (uint32_t i = 0; i < d.count; i++) {
        e[i].addr = take64(&p);
        e[i].len = take64(&p);
        e[i].tick = take64(&p);
        e[i].data = take64(&p);
        err = e[i].tick > VFDSWMR_TICK_MAX || (i && e[i].tick < e[i - 1].tick) ? VFDSWMR_MD_ETICK
              : e[i].len == 0 || e[i].addr >= top || e[i].len > top - e[i].addr || e[i].data < data_min ||
                      e[i].data >= top || e[i].len > top - e[i].data
                  ? VFDSWMR_MD_ERANGE
                  : VFDSWMR_MD_OK;
        if (err != VFDSWMR_MD_OK) {
            memset(e, 0, (size_t)(i + 1) * sizeof *e); /* a failed decode leaves nothing */
            return err;
        }
    }
    *h = d;
    return VFDSWMR_MD_OK;
}
