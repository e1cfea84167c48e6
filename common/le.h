/*
 * Little-endian integers in byte buffers: the one codec of every on-disk
 * integer the project reads or writes -- the metadata file, updater files,
 * the read-mark table and the raw-data log (mdfile/format_*.c), HDF5's
 * superblock (common/superblock.c), lookup3's input words and the checksum's
 * digest -- and of the tests that build or damage such bytes.
 *
 * Invariants:
 *  - bytes are read and written one at a time, least significant first, so
 *    host byte order and alignment never matter;
 *  - a function given n bytes touches p[0 .. n) and nothing else; n is
 *    from 0 to 8 (0: no byte, the value 0);
 *  - vfdswmr_le_decode(p, n) after vfdswmr_le_encode(p, v, n) gives v
 *    reduced to its low 8n bits.
 *
 * Header-only (static inline), so every library and program may use it
 * without linking anything.
 *
 * Error contract: nothing here can fail; the caller sees to it that the n
 * bytes at p exist.
 */
#ifndef VFDSWMR_COMMON_LE_H
#define VFDSWMR_COMMON_LE_H

#include <stdint.h>

/* The low n bytes of v at p, least significant first. */
static inline void
vfdswmr_le_encode(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The n bytes at p as an unsigned integer, least significant first. */
static inline uint64_t
vfdswmr_le_decode(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void
vfdswmr_le16_encode(uint8_t *p, uint16_t v)
{
    vfdswmr_le_encode(p, v, 2);
}
static inline void
vfdswmr_le32_encode(uint8_t *p, uint32_t v)
{
    vfdswmr_le_encode(p, v, 4);
}
static inline void
vfdswmr_le64_encode(uint8_t *p, uint64_t v)
{
    vfdswmr_le_encode(p, v, 8);
}
static inline uint16_t
vfdswmr_le16_decode(const uint8_t *p)
{
    return (uint16_t)vfdswmr_le_decode(p, 2);
}
static inline uint32_t
vfdswmr_le32_decode(const uint8_t *p)
{
    return (uint32_t)vfdswmr_le_decode(p, 4);
}
static inline uint64_t
vfdswmr_le64_decode(const uint8_t *p)
{
    return vfdswmr_le_decode(p, 8);
}

#endif
