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

#endif
