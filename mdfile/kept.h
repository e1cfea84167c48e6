/*
 * Kept old bytes: space HDF5 freed at the end of the file that a registered
 * reader may still read, copied before HDF5 puts new raw data there, so the
 * space goes back to HDF5 at once, as on sec2 (DESIGN.md 6, "Kept old
 * bytes"). The list ("VKPT", docs/FORMAT.md) and the copies live in the
 * read-mark table's file, "<metadata file>.readers", past the table:
 *
 *   VFDSWMR_KEPT_LIST_OFFSET   the list, rewritten in place (one pwrite)
 *   VFDSWMR_KEPT_DATA_OFFSET   the copies, written once each before the list
 *                              names them, never changed while it does
 *
 * An entry (addr, len, tick, data) says: a snapshot of a tick below `tick`
 * reads [addr, addr + len) of the HDF5 file as the bytes at `data`. The
 * writer adds an entry before HDF5 may write there and removes it once no
 * reader can hold such a snapshot (lag epochs, read marks included: the
 * delayed-write rule); a copy's space is reused only after the list no
 * longer names it. A reader applies the entries after each read from the
 * HDF5 file, newest first so that the oldest entry above its tick wins,
 * then does its lag check, which fails if an entry it needed was gone.
 *
 * Error contract: 0 or -1 with errno; the caller writes the messages.
 */
#ifndef VFDSWMR_MDFILE_KEPT_H
#define VFDSWMR_MDFILE_KEPT_H

#include <stdint.h>

#include "format.h"

/* Past any read-mark table (at most 64 + 65536 x 16 bytes). */
#define VFDSWMR_KEPT_LIST_OFFSET (UINT64_C(2) << 20)
/* Room for the longest list. */
#define VFDSWMR_KEPT_LIST_SPACE  4096u
#define VFDSWMR_KEPT_DATA_OFFSET (VFDSWMR_KEPT_LIST_OFFSET + VFDSWMR_KEPT_LIST_SPACE)
/* The most bytes of copies the writer keeps at once. */
#define VFDSWMR_KEPT_DATA_MAX (UINT64_C(64) << 20)

_Static_assert(VFDSWMR_KEPT_HDR_SIZE + VFDSWMR_KEPT_MAX * VFDSWMR_KEPT_ENTRY_SIZE + 4 <= VFDSWMR_KEPT_LIST_SPACE,
               "the longest kept list does not fit its space");

/* Write the list (n <= VFDSWMR_KEPT_MAX) into the file fd. */
int vfdswmr_kept_write_list(int fd, uint64_t session, const vfdswmr_keptent_t *e, uint32_t n);
/*
 * Read the list of file fd into h and e (VFDSWMR_KEPT_MAX entries): a file
 * that ends before the list's signature, or zeros there (never written), is
 * an empty list (h->session 0). A list that does not decode is read again (the
 * writer may be rewriting it: one pwrite), at once 16 times, then once a
 * millisecond, VFDSWMR_KEPT_TRIES tries in all (about a second); then -1
 * with errno EIO.
 */
#define VFDSWMR_KEPT_TRIES 1000
int vfdswmr_kept_read_list(int fd, vfdswmr_kepthdr_t *h, vfdswmr_keptent_t *e);
/* The same with `tries` tries (>= 1): a list nobody rewrites any more (its
 * writer is gone) needs no more than two (vfd_swmr_inspect). */
int vfdswmr_kept_read_list_tries(int fd, vfdswmr_kepthdr_t *h, vfdswmr_keptent_t *e, unsigned tries);

#endif
