/*
 * A driver's shared chunk cache (cache.h) for one open file: what the
 * writer, the reader and vfd_chunk_cache call from their callbacks.
 *
 *   read:   raw-data reads (H5FD_MEM_DRAW) go through vfdswmr_ccf_read,
 *           which serves hits and reads misses from the lower file; other
 *           types are not cached.
 *   write:  after every write the driver makes (or takes into its page
 *           buffer, for the writer), whatever its type, vfdswmr_ccf_written
 *           updates the cached bytes it overlaps -- or drops them when the
 *           write failed -- so cached bytes always equal what the file holds
 *           for this process (write-through; the cache never holds a byte
 *           the file does not).
 *   truncate: vfdswmr_ccf_truncated drops what lies past the new end.
 *   reader: at every new snapshot, vfdswmr_ccf_invalidate for what the
 *           writer wrote since the previous one (mdfile/rawlog.h), or
 *           vfdswmr_ccf_invalidate_all when that cannot be told.
 *   ctl:    vfdswmr_ccf_ctl answers VFDSWMR_CTL_CC_* (include/vfdswmr.h).
 *
 * Datasets: a read is attributed to the dataset whose object header address
 * HDF5's API context holds as its tag during the dataset's raw I/O
 * (H5CX_get_tag, exported by libhdf5 but declared in a private header;
 * looked up at run time and used only on HDF5 versions where that was
 * checked), else to the dataset that registered the chunk containing it,
 * else to none (VFDSWMR_CC_ANON). A read inside a registered chunk loads the
 * whole chunk.
 *
 * Thread safety: one mutex per file; the writer's tick thread may write
 * while the application reads. A miss is read from the lower file and
 * inserted under the mutex, and vfdswmr_ccf_written runs after the lower
 * write under it, so an insert never brings back bytes a write replaced.
 *
 * Error contract: driver-callback style -- negative with the reason pushed
 * on HDF5's error stack (h5err.h).
 */
#ifndef VFDSWMR_CHUNK_CACHE_CCFILE_H
#define VFDSWMR_CHUNK_CACHE_CCFILE_H

#include <hdf5.h>
#include <H5FDdevelop.h>
#include <pthread.h>
#include <stdbool.h>

#include "cache.h"
#include "drvconfig.h"
#include "stack.h"

/* A miss outside every registered chunk is cached only from this size on:
 * HDF5 reads a chunk larger than its own cache one element run at a time
 * (4-byte reads for a column), and caching those costs more than a read
 * from the page cache (bench_chunk_cache, control (d)); whole chunks that
 * HDF5's cache misses are larger. */
#define VFDSWMR_CCF_MIN_ENTRY 1024

/*
 * Read-ahead (chunk_cache_readahead): misses too small to be cached that
 * follow one another at a steady stride (the next one lies where the
 * stride says, after what an earlier window already holds) form a stream,
 * one per dataset (the API context's tag; VFDSWMR_CC_ANON shares one).
 * From the VFDSWMR_CCF_RA_RUN-th such miss on, the miss loads a window
 * [addr, addr + w) instead -- clamped to the end of allocation and to
 * max_entry, inserted as a partial entry -- and w doubles for the stream's
 * next window, from VFDSWMR_CCF_RA_FIRST. A miss that does not follow
 * resets its stream. So a column of a chunk larger than HDF5's own cache
 * (one 4-byte read per row) costs a few growing reads per chunk instead
 * of one a row, with no registration; random small reads never form a
 * stream and cost what they did. What it can waste is bounded: a window
 * is loaded only after RA_RUN misses at its stride, only when the cache
 * would keep it (its dataset not set to no-cache, within max_entry), and
 * each window at most doubles the span the stream covered so far (plus
 * RA_FIRST); a stride over VFDSWMR_CCF_RA_MAX_STRIDE (wider than the rows
 * of any chunk a window of RA_FIRST can hold four of) is no stream, so a
 * window never costs more than that many bytes per element it may serve.
 */
#define VFDSWMR_CCF_RA_STREAMS    8
#define VFDSWMR_CCF_RA_RUN        3
#define VFDSWMR_CCF_RA_FIRST      (64u << 10)
#define VFDSWMR_CCF_RA_MAX_STRIDE (16u << 10) /* a larger gap is not a stride */

typedef struct vfdswmr_ccf_stream {
    uint64_t dset;   /* whose stream (VFDSWMR_CC_ANON: unattributed reads) */
    uint64_t last;   /* address of its last miss */
    uint64_t stride; /* between its last two misses; 0: none yet */
    uint64_t wend;   /* end of its last window; 0: none */
    uint64_t window; /* size of its next window */
    unsigned run;    /* misses in a row at the stride, the first included */
    uint64_t used;   /* when it was last used (f->ra_clock), 0: slot free */
} vfdswmr_ccf_stream_t;

typedef struct vfdswmr_ccfile {
    bool ready; /* the mutex exists (vfdswmr_ccf_fini may always be called after init) */
    pthread_mutex_t mu;
    vfdswmr_cc_t *cc; /* NULL: the cache is off */
    bool use_tag;     /* chunk_cache_tag, and the tag is usable here */
    const char *drv_name;
    const char *forbidden; /* why this file may not be cached (vfdswmr_ccf_forbid), or NULL */
    bool readahead;        /* chunk_cache_readahead */
    vfdswmr_ccf_stream_t ra[VFDSWMR_CCF_RA_STREAMS];
    uint64_t ra_clock;
} vfdswmr_ccfile_t;

/* Set up from the configuration (chunk_cache_*); the cache is off with
 * chunk_cache_size=0 but still answers its ctl operations. 0 or -1; either
 * way vfdswmr_ccf_fini may follow (f zeroed before: fini does nothing). */
int vfdswmr_ccf_init(vfdswmr_ccfile_t *f, const vfdswmr_config_t *cfg, const char *drv_name);
void vfdswmr_ccf_fini(vfdswmr_ccfile_t *f);
/* This file may change without the driver seeing it (`why`, a static
 * string): the cache goes off, and configuring it on again fails with why. */
void vfdswmr_ccf_forbid(vfdswmr_ccfile_t *f, const char *why);

/* Read [addr, addr + size) of `type` through the cache from base's lower
 * file (vfdswmr_stack_read). */
herr_t vfdswmr_ccf_read(vfdswmr_ccfile_t *f, const vfdswmr_file_t *base, H5FD_mem_t type, hid_t dxpl, haddr_t addr,
                        size_t size, void *buf);
/* The file's bytes [addr, addr + size) are now buf (ok), or unknown (!ok). */
void vfdswmr_ccf_written(vfdswmr_ccfile_t *f, haddr_t addr, size_t size, const void *buf, bool ok);
void vfdswmr_ccf_truncated(vfdswmr_ccfile_t *f, haddr_t eof);
void vfdswmr_ccf_invalidate_all(vfdswmr_ccfile_t *f);
/* The file's bytes [addr, addr + len) may have changed: drop what overlaps. */
void vfdswmr_ccf_invalidate(vfdswmr_ccfile_t *f, uint64_t addr, uint64_t len);
/* Whether the cache holds anything (false: nothing to invalidate). */
bool vfdswmr_ccf_holds_data(vfdswmr_ccfile_t *f);

/* Answer a VFDSWMR_CTL_CC_* operation: 0 done, -1 failed (reason on the
 * stack), 1 not a cache operation. */
int vfdswmr_ccf_ctl(vfdswmr_ccfile_t *f, uint64_t op, const void *in, void **out);

#endif
