/*
 * lookup3's hashlittle(), written from the algorithm's description.
 * The algorithm is by Bob Jenkins (lookup3.c, May 2006), who placed it in
 * the public domain.
 *
 * Invariant: bytes are consumed one at a time and assembled little-endian
 * (common/le.h), so the result does not depend on the host's byte order or
 * on alignment.
 */
#include "lookup3.h"

#include "le.h"

#define ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

/* Reversibly mix three 32-bit words; one row per step of the published
 * algorithm (kept as rows: clang-format would put each statement on a line). */
/* clang-format off */
#define MIX(a, b, c)                         \
    do {                                     \
        a -= c; a ^= ROT(c, 4);  c += b;     \
        b -= a; b ^= ROT(a, 6);  a += c;     \
        c -= b; c ^= ROT(b, 8);  b += a;     \
        a -= c; a ^= ROT(c, 16); c += b;     \
        b -= a; b ^= ROT(a, 19); a += c;     \
        c -= b; c ^= ROT(b, 4);  b += a;     \
    } while (0)

/* Final mixing of three words into c. */
#define FINAL(a, b, c)                       \
    do {                                     \
        c ^= b; c -= ROT(b, 14);             \
        a ^= c; a -= ROT(c, 11);             \
        b ^= a; b -= ROT(a, 25);             \
        c ^= b; c -= ROT(b, 16);             \
        a ^= c; a -= ROT(c, 4);              \
        b ^= a; b -= ROT(a, 14);             \
        c ^= b; c -= ROT(b, 24);             \
    } while (0)
/* clang-format on */

uint32_t
vfdswmr_hashlittle(const void *key, size_t len, uint32_t initval)
{
    const uint8_t *k = key;
    uint32_t a, b, c;

    a = b = c = 0xdeadbeefu + (uint32_t)len + initval;
    while (len > 12) {
        a += vfdswmr_le32_decode(k);
        b += vfdswmr_le32_decode(k + 4);
        c += vfdswmr_le32_decode(k + 8);
        MIX(a, b, c);
        len -= 12;
        k += 12;
    }
    if (len == 0) /* nothing left (also the empty key): no final mixing */
        return c;
    /* The last 1..12 bytes, zero-padded. */
    a += (uint32_t)vfdswmr_le_decode(k, len < 4 ? (unsigned)len : 4);
    if (len > 4)
        b += (uint32_t)vfdswmr_le_decode(k + 4, len < 8 ? (unsigned)len - 4 : 4);
    if (len > 8)
        c += (uint32_t)vfdswmr_le_decode(k + 8, (unsigned)len - 8);
    FINAL(a, b, c);
    return c;
}
