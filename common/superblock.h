/*
 * What a reader may change in a version 2 or 3 HDF5 superblock before
 * handing it to the library (see docs/DESIGN.md and the facts note): the
 * file consistency flags a writer sets, and the stored end-of-file address.
 *
 * Layout (all integers little-endian, O = size of offsets: 2, 4 or 8):
 *   signature "\211HDF\r\n\032\n" (8) | version (1) | size of offsets (1) |
 *   size of lengths (1) | consistency flags (1) | base address (O) |
 *   superblock extension address (O) | end-of-file address (O) |
 *   root group object header address (O) | checksum (4): lookup3
 *   hashlittle, initial value 0, over every byte before it.
 *
 * Error contract: no errors, only answers: each function says by its
 * return value whether the bytes were a superblock it knows.
 */
#ifndef VFDSWMR_COMMON_SUPERBLOCK_H
#define VFDSWMR_COMMON_SUPERBLOCK_H

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

#endif
