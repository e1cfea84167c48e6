/*
 * Patching a version 2/3 superblock for a reader (superblock.h).
 *
 * Invariant: a patched superblock differs from the original only in the
 * flags byte, the end-of-file field and the checksum, and its checksum is
 * the one HDF5 computes, so the library accepts it.
 */
#include "superblock.h"

#include <string.h>

#include "le.h"
#include "lookup3.h"

#define SIG                "\211HDF\r\n\032\n"
#define SIG_LEN            8
#define OFF_VERSION        8
#define OFF_SIZEOF_OFFSETS 9
#define OFF_FLAGS          11
#define OFF_ADDRS          12 /* base, extension, end of file, root group: O bytes each */
#define EOF_FIELD          2  /* index of the end-of-file address among them */

/* The size of a whole v2/v3 superblock at the start of buf, or 0. */
static size_t
sb_size(const uint8_t *buf, size_t len)
{
    unsigned o;

    if (len <= OFF_SIZEOF_OFFSETS || memcmp(buf, SIG, SIG_LEN) != 0)
        return 0;
    if (buf[OFF_VERSION] != 2 && buf[OFF_VERSION] != 3)
        return 0;
    o = buf[OFF_SIZEOF_OFFSETS];
    if (o != 2 && o != 4 && o != 8)
        return 0;
    return len >= VFDSWMR_SB_V2_SIZE(o) ? VFDSWMR_SB_V2_SIZE(o) : 0;
}

int
vfdswmr_sb_patch(uint8_t *buf, size_t len, uint64_t eoa)
{
    size_t size = sb_size(buf, len);
    unsigned o;
    uint8_t *eof_field;
    uint64_t limit;

    if (size == 0)
        return 0;
    o = buf[OFF_SIZEOF_OFFSETS];
    limit = o == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * o)) - 1;
    eof_field = buf + OFF_ADDRS + EOF_FIELD * o;
    buf[OFF_FLAGS] = 0;
    if (eoa > limit)
        eoa = limit;
    if (vfdswmr_le_decode(eof_field, o) < eoa)
        vfdswmr_le_encode(eof_field, eoa, o);
    vfdswmr_le32_encode(buf + size - 4, vfdswmr_hashlittle(buf, size - 4, 0));
    return 1;
}

int
vfdswmr_sb_swmr_write(const uint8_t *buf, size_t len)
{
    if (sb_size(buf, len) == 0 || buf[OFF_VERSION] != 3)
        return -1;
    return (buf[OFF_FLAGS] & VFDSWMR_SB_SWMR_WRITE_ACCESS) != 0;
}
