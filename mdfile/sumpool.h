/*
 * The checksums of a publish's page images, computed by the calling thread
 * and, for a large publish, by helper threads at the same time.
 *
 * Hashing is most of what a publish of many pages costs (SHA-256 runs at
 * about 1.7 GB/s a core: 2.4 us a 4 KiB page, docs/BENCHMARKS.md), and the
 * caller waits for it: an H5Fflush of an append round that changed 640 pages
 * spent a third of the round hashing. The helpers share the work with the
 * caller; the caller never waits for a helper that has not started: the
 * images are taken in runs from a shared counter, so a helper that is
 * slow to wake (or never wakes: a loaded machine) leaves its runs to the
 * caller, which then waits at most for the runs helpers hold.
 *
 * Invariants: every image's checksum is computed exactly once, by
 * vfdswmr_checksum() (checksum.h), whoever computes it; the call returns
 * only when all of them are in place and no helper touches the images any
 * more. Helpers never call HDF5 (no HDF5 inside mdfile/). One job at a time
 * uses the helpers; a second caller meanwhile (another file's publish)
 * hashes alone. The helpers start at the first job large enough, at most
 * VFDSWMR_SUMPOOL_MAX_HELPERS and one fewer than the CPUs the process may
 * run on (none on one CPU); they wait for work between jobs, are joined
 * when the code is unloaded, and a fork child forgets its parent's (it
 * starts its own when it needs them).
 *
 * Error contract: none. A helper that cannot be started leaves the work to
 * the caller.
 */
#ifndef VFDSWMR_MDFILE_SUMPOOL_H
#define VFDSWMR_MDFILE_SUMPOOL_H

#include <stddef.h>

#include "plan.h"

#define VFDSWMR_SUMPOOL_MAX_HELPERS 3
/* Below this many bytes in all a publish hashes alone: waking a helper
 * costs some tens of microseconds, as much as hashing about 64 KiB. */
#define VFDSWMR_SUMPOOL_MIN_BYTES (256u * 1024u)

/* Set images[i].checksum = vfdswmr_checksum(images[i].image, images[i].length)
 * for every i < n. */
void vfdswmr_sumpool_checksums(vfdswmr_mdimage_t *images, size_t n);

/* The same, calling meanwhile(ctx) once, after the helpers got the job and
 * before the caller hashes: the caller's other work (writing the images)
 * overlaps the helpers' hashing. meanwhile must not change the images. */
void vfdswmr_sumpool_checksums_while(vfdswmr_mdimage_t *images, size_t n, void (*meanwhile)(void *ctx), void *ctx);

/* Helpers running now (for tests): 0 until the first large job. */
unsigned vfdswmr_sumpool_helpers(void);

#endif
