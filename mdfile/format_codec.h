/*
 * What the codecs of format.h share, and nothing else includes: byte cursors,
 * the frame and version checks, page spans and runs (static inline), and
 * where an index image may go, which the metadata file header and the
 * updater change list both check (format_md.c). Byte layouts are in
 * docs/FORMAT.md.
 *
 * Invariants:
 * - integers are read and written one byte at a time, little-endian, by the
 *   codec of common/le.h (through the put/take cursors below); no struct is
 *   ever copied to or from a buffer, so alignment, padding and host byte
 *   order never matter;
 * - check_frame() reads buf[i] only for i < len, and only after checking len.
 *
 * Error contract: the checks return VFDSWMR_MD_OK or the vfdswmr_mderr_t
 * format.h names for what they find; nothing else can fail.
 */
#ifndef VFDSWMR_MDFILE_FORMAT_CODEC_H
#define VFDSWMR_MDFILE_FORMAT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "le.h"

#define MAGIC_LEN 4
#define CKSUM_LEN 4

/* ---- byte cursors over the little-endian codec (common/le.h) ------------- */

static inline uint8_t *
put_le(uint8_t *p, uint64_t v, unsigned nbytes)
{
    vfdswmr_le_encode(p, v, nbytes);
    return p + nbytes;
}

static inline uint8_t *
put16(uint8_t *p, uint16_t v)
{
    return put_le(p, v, 2);
}
static inline uint8_t *
put32(uint8_t *p, uint32_t v)
{
    return put_le(p, v, 4);
}
static inline uint8_t *
put64(uint8_t *p, uint64_t v)
{
    return put_le(p, v, 8);
}

static inline uint8_t *
put_magic(uint8_t *p, const uint8_t magic[MAGIC_LEN])
{
    for (unsigned i = 0; i < MAGIC_LEN; i++)
        p[i] = magic[i];
    return p + MAGIC_LEN;
}

/* Reads nbytes at *p and advances *p past them. */
static inline uint64_t
take_le(const uint8_t **p, unsigned nbytes)
{
    uint64_t v = vfdswmr_le_decode(*p, nbytes);
    *p += nbytes;
    return v;
}

static inline uint16_t
take16(const uint8_t **p)
{
    return (uint16_t)take_le(p, 2);
}
static inline uint32_t
take32(const uint8_t **p)
{
    return (uint32_t)take_le(p, 4);
}
static inline uint64_t
take64(const uint8_t **p)
{
    return take_le(p, 8);
}

/* Appends the checksum of [start, end) at end. */
static inline void
seal(uint8_t *start, uint8_t *end)
{
    put32(end, vfdswmr_checksum(start, (size_t)(end - start)));
}

/* ---- checks shared by the decoders ------------------------------------- */

/* The structure occupies buf[0, frame) and ends with its checksum; the caller
 * has len bytes. Checks length, signature and checksum, in this order. */
static inline vfdswmr_mderr_t
check_frame(const uint8_t *buf, size_t len, size_t frame, const uint8_t magic[MAGIC_LEN])
{
    if (len < frame)
        return VFDSWMR_MD_ESHORT;
    if (memcmp(buf, magic, MAGIC_LEN) != 0)
        return VFDSWMR_MD_EMAGIC;
    if (vfdswmr_le32_decode(buf + frame - CKSUM_LEN) != vfdswmr_checksum(buf, frame - CKSUM_LEN))
        return VFDSWMR_MD_ECHECKSUM;
    return VFDSWMR_MD_OK;
}

/* Frame of a variable-length structure: all of buf, but at least `min`
 * bytes (so that a shorter buffer fails the length check). */
static inline size_t
var_frame(size_t len, size_t min)
{
    return len < min ? min : len;
}

static inline vfdswmr_mderr_t
check_version(uint16_t version)
{
    return version == VFDSWMR_FORMAT_VERSION ? VFDSWMR_MD_OK : VFDSWMR_MD_EVERSION;
}

/* Pages [page, *end) hold len bytes, and *end * page_size fits in 64 bits
 * (so every byte offset inside does too). page_size is valid. */
static inline bool
span_ok(uint64_t page, uint64_t len, uint32_t page_size, uint64_t *end)
{
    uint64_t npages = vfdswmr_pages(len, page_size);
    if (page > UINT64_MAX - npages || page + npages > UINT64_MAX / page_size)
        return false;
    *end = page + npages;
    return true;
}

/* Images that must follow one another in increasing page order. */
typedef struct page_run_t {
    uint64_t next;          /* first page the next image may start at */
    vfdswmr_mderr_t before; /* error for an image starting before `next` */
} page_run_t;

static inline vfdswmr_mderr_t
run_add(page_run_t *r, uint64_t page, uint64_t end)
{
    if (page < r->next)
        return r->before;
    r->next = end;
    r->before = VFDSWMR_MD_EOVERLAP;
    return VFDSWMR_MD_OK;
}

/* Where an index image may go in the metadata file: at or after the end of
 * the header, 8-byte aligned (EBOUNDS), with a length an index can have
 * (ELENGTH), and offset + length must not overflow (EBOUNDS). */
vfdswmr_mderr_t vfdswmr_mdidx_check_place(uint64_t offset, uint64_t length);

#endif
