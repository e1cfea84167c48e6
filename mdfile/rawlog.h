/*
 * The raw-data write log: which bytes of the HDF5 file the writer wrote in
 * each recent tick, so that a reader whose chunk cache holds raw data from
 * snapshot s can, on adopting snapshot t, drop only what ticks s+1 .. t
 * wrote instead of everything (DESIGN.md 8a). The file is
 * "<metadata file>.raw"; its layout ("VRAW") is in docs/FORMAT.md.
 *
 * Writer: every write to the HDF5 file (raw data, delayed metadata pages,
 * truncation) is added with the tick that will publish it (the published
 * tick + 1, or + 2 while the publish of tick + 1 is being written). Before
 * the header of tick T is written, the log is rewritten in place for T: it
 * lists every write of ticks first_tick .. T, first_tick as old as the
 * window and the size cap allow. Readers trust it only when it is complete
 * for what they ask -- right session, checksum, first_tick <= s + 1 and
 * last_tick >= t -- and drop everything otherwise (a torn rewrite, an old
 * reader, a lost file, NFS readers without it).
 *
 * Error contract: functions return 0 / 1 as documented, or -1 with errno.
 */
#ifndef VFDSWMR_MDFILE_RAWLOG_H
#define VFDSWMR_MDFILE_RAWLOG_H

#include <stdint.h>

#include "format.h"

/* Ranges kept: beyond this the oldest ticks go (first_tick rises), and a
 * single tick with more is collapsed into one range covering them all. */
#define VFDSWMR_RAWLOG_CAP 4096

typedef struct vfdswmr_rawlog vfdswmr_rawlog_t;

/* "<md_path>.raw"; -1 when it does not fit. */
int vfdswmr_rawlog_name(char *out, size_t len, const char *md_path);

/* ---- writer ---- */
/* Create an empty log for `session` (under a temporary name, then renamed)
 * that lists the writes of ticks first_tick (>= 1) on: every later write is
 * added, none of an earlier tick is (a writer that creates it mid-session
 * passes the tick after the last one it wrote in unlogged). */
int vfdswmr_rawlog_create(const char *md_path, uint64_t session, uint64_t first_tick, vfdswmr_rawlog_t **out);
/* The writer wrote [addr, addr + len) (len 0: nothing), to be published at
 * `tick`. Never fails: when memory runs out, the log says so at the next
 * publish by starting after this tick. l may be NULL. */
void vfdswmr_rawlog_add(vfdswmr_rawlog_t *l, uint64_t tick, uint64_t addr, uint64_t len);
/* Rewrite the file for tick `tick`, keeping at most `window` ticks: prepare
 * (encode the log for `tick` into a buffer of l's) then write (that buffer to
 * the file). Adds may come between the two, even from another thread while
 * write runs (it reads only the buffer), but prepare and add must not run
 * at the same time. */
void vfdswmr_rawlog_prepare(vfdswmr_rawlog_t *l, uint64_t tick, uint64_t window);
int vfdswmr_rawlog_write(vfdswmr_rawlog_t *l);
/* Remove the file (if its name is still ours) and free l. */
void vfdswmr_rawlog_close(vfdswmr_rawlog_t *l);
/* A fork child's copy (common/forked.h): close the child's descriptor and
 * nothing else; vfdswmr_rawlog_close then only frees. Async-signal-safe. */
void vfdswmr_rawlog_forget(vfdswmr_rawlog_t *l);

/* ---- reader ---- */
/* Call fn for every range written in ticks from+1 .. to by `session`:
 * 1 when the log lists them all, 0 when it cannot tell (the caller drops
 * everything; fn may have been called for some). */
int vfdswmr_rawlog_read(const char *md_path, uint64_t session, uint64_t from, uint64_t to,
                        void (*fn)(void *ctx, uint64_t addr, uint64_t len), void *ctx);

#endif
