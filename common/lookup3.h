/*
 * Bob Jenkins' lookup3 hash, function hashlittle(): the checksum HDF5 puts
 * on its version 2+ superblocks, object headers and other metadata
 * (initial value 0, over every byte before the stored checksum).
 *
 * Error contract: none can occur (a pure function of its input).
 */
#ifndef VFDSWMR_COMMON_LOOKUP3_H
#define VFDSWMR_COMMON_LOOKUP3_H

#include <stddef.h>
#include <stdint.h>

/* hashlittle(key, len, initval), byte by byte: the same value on every host. */
uint32_t vfdswmr_hashlittle(const void *key, size_t len, uint32_t initval);

#endif
