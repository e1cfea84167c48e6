/*
 * A tick's plan: everything one publish writes into a metadata file -- the
 * new page images at their allocated places, the index image, the header
 * image -- in the order it must be written. The writer builds a plan and
 * either applies it to its metadata file or packs it into an updater file;
 * vfd_swmr_aux unpacks an updater file into the same plan and applies it to
 * its local copy. One code path for all three.
 *
 * Write order: images, then index, then header. A reader that
 * sees the new header therefore finds everything it names.
 *
 * Error contract: functions return 0, or -1 with errno set; the caller
 * writes the message.
 */
#ifndef VFDSWMR_MDFILE_PLAN_H
#define VFDSWMR_MDFILE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct vfdswmr_mdimage_t {
    uint64_t md_page;   /* where the image goes in the metadata file */
    uint64_t hdf5_page; /* where it lives in the HDF5 file */
    uint32_t length;    /* bytes */
    uint32_t checksum;  /* vfdswmr_checksum(image, length) */
    const void *image;
} vfdswmr_mdimage_t;

typedef struct vfdswmr_mdplan_t {
    uint32_t page_size;
    uint64_t session;
    uint64_t tick;
    size_t nimages;
    const vfdswmr_mdimage_t *images; /* disjoint places, any order */
    const uint8_t *index_image;
    size_t index_len;
    uint64_t index_offset;       /* bytes */
    const uint8_t *header_image; /* VFDSWMR_MDHDR_SIZE bytes */
    bool images_written;         /* apply writes index and header only: the images went first */
} vfdswmr_mdplan_t;

/*
 * Write the plan into the metadata file open on fd: images, index, header,
 * each in writes of its own -- never index and header in one pwrite, so the
 * header (72 bytes at offset 0) is always the last write and a reader or a
 * crash never sees it ahead of what it names. With `durable`, fdatasync
 * after the images and index and again after the header, so that after a
 * crash no header points at unwritten data. The writer puts the index where
 * the current header's index is not (format.h, index slots), so a writer
 * killed before the header leaves the previous snapshot whole. Returns 0,
 * or -1 with errno set.
 */
int vfdswmr_mdplan_apply(int fd, const vfdswmr_mdplan_t *plan, bool durable);

/* The images alone, as apply writes them (the writer writes them while their
 * checksums are computed, then applies the plan with images_written).
 * Returns 0, or -1 with errno set. */
int vfdswmr_mdplan_write_images(int fd, const vfdswmr_mdimage_t *images, size_t n, uint32_t page_size);

#endif
