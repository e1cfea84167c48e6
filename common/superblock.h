/*
 * The HDF5 superblock: its signature and where HDF5 finds it; what a reader
 * may change in a version 2 or 3 superblock before handing it to the
 * library (docs/DESIGN.md, section 7, "Superblock"): the file consistency
 * flags a writer sets, and the stored end-of-file address; and the
 * writer's seal on any version (below).
 *
 * Layout of versions 2 and 3 (the HDF5 File Format Specification, level 0A
 * "Format Signature and Superblock"; all integers little-endian, O = size
 * of offsets: 2, 4 or 8):
 *   signature "\211HDF\r\n\032\n" (8) | version (1) | size of offsets (1) |
 *   size of lengths (1) | consistency flags (1) | base address (O) |
 *   superblock extension address (O) | end-of-file address (O) |
 *   root group object header address (O) | checksum (4): lookup3
 *   hashlittle, initial value 0, over every byte before it.
 *
 * Error contract: no errors, only answers: each function says by its
 * return value whether the bytes were a superblock it knows --
 * vfdswmr_sb_find alone fails, and only when the read it is given fails.
 */
#ifndef VFDSWMR_COMMON_SUPERBLOCK_H
#define VFDSWMR_COMMON_SUPERBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of a version 2/3 superblock with O-byte offsets. */
#define VFDSWMR_SB_V2_SIZE(o) (12u + 4u * (o) + 4u)

/*
 * `buf` holds len bytes of the file from address 0. When they start with a
 * whole version 2 or 3 superblock: clear the consistency flags, raise the
 * stored end-of-file address to at least `eoa` (as far as O bytes can
 * hold it), store a fresh checksum and return 1. Otherwise (another
 * version, bad sizes, too short) change nothing and return 0. Never
 * touches bytes at or past len.
 */
int vfdswmr_sb_patch(uint8_t *buf, size_t len, uint64_t eoa);

/* The "SWMR writer" bit of a version 3 superblock's consistency flags (HDF5
 * sets it, with bit 0x01, at an open with H5F_ACC_SWMR_WRITE and in
 * H5Fstart_swmr_write, and clears all flags in the last superblock write of
 * H5Fclose). */
#define VFDSWMR_SB_SWMR_WRITE_ACCESS 0x04u

/* When buf (len bytes written at the superblock's address) starts with a
 * version 3 superblock: 1 if its flags say a SWMR writer has the file, else
 * 0. Anything else (other versions, too short, not a superblock): -1. */
int vfdswmr_sb_swmr_write(const uint8_t *buf, size_t len);

/*
 * The writer's seal (docs/DESIGN.md, "The seal"): bit 0x80 of the superblock's consistency flags, which no HDF5
 * version defines. HDF5 refuses to decode a superblock with it ("bad flag
 * value for superblock", 1.14 and 2.x, every superblock version, every
 * open mode, h5clear included), so plain HDF5 cannot open a file on whose
 * disk bytes it is set. The writer keeps it on the superblock in the HDF5
 * file from its open until the file is closed or recovered; everything the
 * drivers hand to HDF5 has it cleared.
 *
 * Where the flags are: version 0 and 1: the low byte of a 4-byte field at
 * offset 20, no checksum; version 2 and 3: the byte at offset 11, covered by
 * the checksum at the end of the superblock.
 */
#define VFDSWMR_SB_SEAL 0x80u
/* Bytes from the superblock's address that hold its flags and (for
 * versions 2 and 3) checksum, whatever the version and sizes. */
#define VFDSWMR_SB_SEAL_SPAN VFDSWMR_SB_V2_SIZE(8)

/*
 * `buf` holds len bytes of the file from a superblock's address. When they
 * start with a superblock of version 0 to 3 whose flags (and, for 2 and 3,
 * checksum) lie within len: set (on) or clear the seal, recompute the
 * checksum, return 1. Otherwise change nothing and return 0. Clearing
 * restores exactly the bytes HDF5 wrote before the seal was set.
 */
int vfdswmr_sb_set_seal(uint8_t *buf, size_t len, bool on);

/* 1: buf (as above) starts with a sealed superblock; 0: an unsealed one; -1:
 * not a superblock this knows, or too short. */
int vfdswmr_sb_sealed(const uint8_t *buf, size_t len);

/* Where HDF5 looks for the superblock (H5FD_locate_signature): address 0,
 * then 512, 1024, 2048, ... below `end`. The address after `addr` in that
 * order. */
static inline uint64_t
vfdswmr_sb_next_candidate(uint64_t addr)
{
    return addr ? 2 * addr : 512;
}

/* The signature's length in bytes. */
#define VFDSWMR_SB_SIG_LEN 8

/* Does buf (len bytes) start with HDF5's signature? */
bool vfdswmr_sb_signature(const uint8_t *buf, size_t len);

/* Where HDF5 finds the superblock in the bytes `read` gives (the first
 * candidate below `end` whose VFDSWMR_SB_SIG_LEN bytes hold the signature):
 * 1 with *addr, 0 when there is none, -1 as soon as `read` returns a
 * negative value (its errno kept). */
int vfdswmr_sb_find(int (*read)(void *ctx, uint64_t addr, void *buf, size_t len), void *ctx, uint64_t end,
                    uint64_t *addr);

/* vfdswmr_sb_find over the file open on fd as it is on disk (a read that
 * fails counts as bytes without the signature): 1 with *addr, or 0. */
int vfdswmr_sb_find_fd(int fd, uint64_t *addr);

/* The seal of the superblock of the file open on fd, on disk: 1 sealed, 0
 * not, -2 no superblock there (none found, or of a version not known). */
int vfdswmr_sb_sealed_fd(int fd);

#endif
