/*
 * Patching a version 2/3 superblock for a reader, and the writer's seal on
 * any version (superblock.h).
 *
 * Invariants: a patched superblock differs from the original only in the
 * flags byte, the end-of-file field and the checksum, and its checksum is
 * the one HDF5 computes, so the library accepts it; setting and then
 * clearing the seal gives back the original bytes (asserted below).
 */
#include "superblock.h"

#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "io.h"
#include "le.h"
#include "lookup3.h"

#define SIG                "\211HDF\r\n\032\n"
#define OFF_VERSION        8
#define OFF_SIZEOF_OFFSETS 9
#define OFF_FLAGS          11
#define OFF_ADDRS          12 /* base, extension, end of file, root group: O bytes each */
#define EOF_FIELD          2  /* index of the end-of-file address among them */
#define OFF_FLAGS_V0       20 /* versions 0 and 1: 4-byte flags, no checksum */

/* The size of a whole v2/v3 superblock at the start of buf, or 0. */
static size_t
sb_size(const uint8_t *buf, size_t len)
{
    unsigned o;

    if (len <= OFF_SIZEOF_OFFSETS || !vfdswmr_sb_signature(buf, len))
        return 0;
    if (buf[OFF_VERSION] != 2 && buf[OFF_VERSION] != 3)
        return 0;
    o = buf[OFF_SIZEOF_OFFSETS];
    if (o != 2 && o != 4 && o != 8)
        return 0;
    return len >= VFDSWMR_SB_V2_SIZE(o) ? VFDSWMR_SB_V2_SIZE(o) : 0;
}

bool
vfdswmr_sb_signature(const uint8_t *buf, size_t len)
{
    return len >= VFDSWMR_SB_SIG_LEN && memcmp(buf, SIG, VFDSWMR_SB_SIG_LEN) == 0;
}

int
vfdswmr_sb_find(int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx, uint64_t end, uint64_t *addr)
{
    uint8_t sig[VFDSWMR_SB_SIG_LEN];

    for (uint64_t a = 0; a < end; a = vfdswmr_sb_next_candidate(a)) {
        if (read(ctx, a, sig, sizeof sig) < 0)
            return -1;
        if (vfdswmr_sb_signature(sig, sizeof sig)) {
            *addr = a;
            return 1;
        }
    }
    return 0;
}

/* The offset of the flags byte of the superblock at buf, and the bytes its
 * checksum covers (0: none); -1 when buf does not hold them. */
static long
flags_offset(const uint8_t *buf, size_t len, size_t *sum_len)
{
    size_t size;

    *sum_len = 0;
    if (len <= OFF_VERSION || !vfdswmr_sb_signature(buf, len))
        return -1;
    if (buf[OFF_VERSION] <= 1)
        return len > OFF_FLAGS_V0 + 3 ? OFF_FLAGS_V0 : -1;
    if ((size = sb_size(buf, len)) == 0)
        return -1;
    *sum_len = size - 4;
    return OFF_FLAGS;
}

int
vfdswmr_sb_sealed(const uint8_t *buf, size_t len)
{
    size_t sum_len;
    long off = flags_offset(buf, len, &sum_len);

    return off < 0 ? -1 : (buf[off] & VFDSWMR_SB_SEAL) != 0;
}

int
vfdswmr_sb_set_seal(uint8_t *buf, size_t len, bool on)
{
    size_t sum_len;
    long off = flags_offset(buf, len, &sum_len);

    if (off < 0)
        return 0;
    buf[off] = (uint8_t)(on ? buf[off] | VFDSWMR_SB_SEAL : buf[off] & ~VFDSWMR_SB_SEAL);
    if (sum_len)
        vfdswmr_le32_encode(buf + sum_len, vfdswmr_hashlittle(buf, sum_len, 0));
    VFDSWMR_ASSERT(vfdswmr_sb_sealed(buf, len) == (int)on);
    return 1;
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

/* The bytes at addr of the file open on *(int *)ctx, for vfdswmr_sb_find:
 * a read that fails gives bytes without the signature, and the search goes
 * on. */
static int
read_or_nothing(void *ctx, uint64_t addr, void *buf, size_t len)
{
    if (vfdswmr_pread_all(*(const int *)ctx, buf, len, addr) < 0)
        memset(buf, 0, len);
    return 0;
}

int
vfdswmr_sb_find_fd(int fd, uint64_t *addr)
{
    struct stat st;

    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < VFDSWMR_SB_SIG_LEN)
        return 0;
    return vfdswmr_sb_find(read_or_nothing, &fd, (uint64_t)st.st_size - (VFDSWMR_SB_SIG_LEN - 1), addr) == 1;
}

int
vfdswmr_sb_sealed_fd(int fd)
{
    uint8_t sb[VFDSWMR_SB_SEAL_SPAN] = {0};
    struct stat st;
    uint64_t addr;
    int m;

    if (!vfdswmr_sb_find_fd(fd, &addr) || fstat(fd, &st) < 0)
        return -2;
    read_or_nothing(&fd, addr, sb, (uint64_t)st.st_size - addr < sizeof sb ? (size_t)(st.st_size - addr) : sizeof sb);
    return (m = vfdswmr_sb_sealed(sb, sizeof sb)) < 0 ? -2 : m;
}
