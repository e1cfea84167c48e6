/*
 * Kept old bytes (mdfile/kept.h): when HDF5 frees space at the end of the
 * file while a reader is registered, keep_old (eoa.c) first republishes the
 * newest snapshot with the space's old bytes as images; a reader may still
 * hold an older snapshot, which reads that space from the HDF5 file. So the
 * writer copies the space's bytes as they are in the HDF5 file (what every
 * such snapshot reads there: pages it names come from its own images, which
 * readers lay over the copy) into the read-mark table's file and lists the
 * copy, before HDF5 may put raw data there. Readers lay the copies over
 * every read from the HDF5 file (vfd-swmr-reader/kept.c). An entry goes
 * once the published epoch reaches its epoch + lag (read marks included):
 * every reader of a snapshot below its tick has fallen behind by then (its
 * lag check fails, or its mark was released), as for a hole or a delayed
 * page write (DESIGN.md 6, "Kept old bytes").
 *
 * Invariants (vfdswmr_writer_kept_check): entries in tick and epoch order
 * (so they expire oldest first), their copies within the data space in
 * that order around a ring, never overlapping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "h5err.h"
#include "mdlock.h"
#include "io.h"
#include "writer.h"

/* Bytes copied per read of the HDF5 file. */
#define KEPT_CHUNK (1u << 20)

#define DATA_START VFDSWMR_KEPT_DATA_OFFSET
#define DATA_END   (VFDSWMR_KEPT_DATA_OFFSET + VFDSWMR_KEPT_DATA_MAX)

void
vfdswmr_writer_kept_check(const vfdswmr_writer_t *w)
{
    uint32_t n = w->kept.n, wraps = 0;

    VFDSWMR_ASSERT(n <= VFDSWMR_KEPT_MAX);
    for (uint32_t i = 0; i < n; i++) {
        const vfdswmr_keptent_t *e = &w->kept.ent[i];
        VFDSWMR_ASSERT(e->len && e->data >= DATA_START && e->data <= DATA_END && e->len <= DATA_END - e->data);
        if (i == 0)
            continue;
        VFDSWMR_ASSERT(e->tick >= e[-1].tick && w->kept.epoch[i] >= w->kept.epoch[i - 1]);
        /* a ring: each copy after the one before, or back at the start once */
        if (e->data < e[-1].data + e[-1].len) {
            VFDSWMR_ASSERT(e->data == DATA_START && ++wraps == 1);
        }
    }
    if (wraps) /* the ring never runs into its oldest copy */
        VFDSWMR_ASSERT(w->kept.ent[n - 1].data + w->kept.ent[n - 1].len <= w->kept.ent[0].data);
}

/* Where a copy of len bytes goes: after the newest copy, or at the start
 * of the space when the oldest lies far enough from it (copies go in the
 * order they expire, so the space is a ring). false: no room. */
static bool
ring_alloc(const vfdswmr_writer_t *w, uint64_t len, uint64_t *at)
{
    uint32_t n = w->kept.n;

    if (len > VFDSWMR_KEPT_DATA_MAX)
        return false;
    if (n == 0) {
        *at = DATA_START;
        return true;
    }
    uint64_t head = w->kept.ent[0].data, tail = w->kept.ent[n - 1].data + w->kept.ent[n - 1].len;
    if (w->kept.ent[n - 1].data >= head) { /* not wrapped: [head, tail) in use */
        if (DATA_END - tail >= len)
            *at = tail;
        else if (head - DATA_START >= len)
            *at = DATA_START;
        else
            return false;
        return true;
    }
    if (head - tail < len) /* wrapped: [head, end) and [start, tail) in use */
        return false;
    *at = tail;
    return true;
}

/* Every registered reader reads the list: each is marked in this writer's
 * table (readers that do not read lists cannot mark: the table's version,
 * format.h), and none holds a slot's byte from before this writer started
 * (a reader of a closed writer's last snapshot: `tainted` until no slot
 * byte is held at all). */
static bool
readers_read_list(vfdswmr_writer_t *w)
{
    if (vfdswmr_mdlock_unmarked_reader(w->hdf5_fd) != 0)
        return false;
    if (w->kept.tainted && vfdswmr_mdlock_any_marked(w->hdf5_fd) == 0)
        w->kept.tainted = false;
    return !w->kept.tainted;
}

/* vfdswmr_writer_kept_room, with where the copy would go in *at. */
static bool
room(vfdswmr_writer_t *w, uint64_t len, uint64_t *at)
{
    VFDSWMR_ASSERT_LOCKED(w);
    /* a marked reader made the table, or found it: it is there to find */
    return w->base.cfg.maintain_metadata_file && !w->base.cfg.generate_updater_files && w->hdf5_fd >= 0 &&
           vfdswmr_writer_find_marks(w, false) == 0 && vfdswmr_marks_fd(w->marks) >= 0 && !w->kept.dirty &&
           w->kept.n < VFDSWMR_KEPT_MAX && ring_alloc(w, len, at) && readers_read_list(w);
}

bool
vfdswmr_writer_kept_room(vfdswmr_writer_t *w, uint64_t len)
{
    uint64_t at;

    return room(w, len, &at);
}

void
vfdswmr_writer_kept_open(vfdswmr_writer_t *w)
{
    w->kept.tainted = w->hdf5_fd < 0 || vfdswmr_mdlock_any_marked(w->hdf5_fd) != 0;
}

/* Write the list as w->kept has it; a failure leaves it dirty (no new
 * entry until a publish rewrote it: readers may find it torn meanwhile,
 * and fail their reads after retrying). */
static int
write_list(vfdswmr_writer_t *w, const vfdswmr_keptent_t *ent, uint32_t n)
{
    if (vfdswmr_kept_write_list(vfdswmr_marks_fd(w->marks), vfdswmr_mdw_session(w->mdw), ent, n) == 0)
        return 0;
    VFDSWMR_LOG(&w->log, "warning", "cannot write the list of kept old bytes: %s", strerror(errno));
    return -1;
}

/* Copy [lo, hi) of the HDF5 file, as a reader reads it (zeros past its
 * end), to `data` of the table's file. A failure is logged, not pushed:
 * the space is then kept from raw data instead, and HDF5's call goes on. */
static int
copy_out(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi, uint64_t data)
{
    int fd = vfdswmr_marks_fd(w->marks);
    size_t cap = hi - lo < KEPT_CHUNK ? (size_t)(hi - lo) : KEPT_CHUNK;
    haddr_t eof = VFDSWMR_GUARDED(haddr_t, H5FDget_eof(w->base.lower, H5FD_MEM_DEFAULT), false);
    uint8_t *buf = malloc(cap);
    const char *why = NULL;

    if (buf == NULL || eof == HADDR_UNDEF)
        why = buf ? "cannot ask the file's size" : "out of memory";
    for (uint64_t pos = lo; pos < hi && why == NULL; pos += cap) {
        size_t n = hi - pos < cap ? (size_t)(hi - pos) : cap, in = 0;
        if (pos < eof)
            in = eof - pos < n ? (size_t)(eof - pos) : n;
        memset(buf + in, 0, n - in);
        if (in && VFDSWMR_GUARDED(herr_t, H5FDread(w->base.lower, H5FD_MEM_DRAW, H5P_DEFAULT, pos, in, buf), false) < 0)
            why = "cannot read the HDF5 file";
        else if (vfdswmr_pwrite_all(fd, buf, n, data + (pos - lo)) < 0)
            why = strerror(errno);
    }
    free(buf);
    if (why)
        VFDSWMR_LOG(&w->log, "warning", "cannot keep old bytes for readers: %s", why);
    return why ? -1 : 0;
}

int
vfdswmr_writer_kept_add(vfdswmr_writer_t *w, uint64_t lo, uint64_t hi)
{
    uint64_t data;

    VFDSWMR_ASSERT_LOCKED(w);
    VFDSWMR_ASSERT(!w->publishing && lo < hi);
    if (!room(w, hi - lo, &data)) /* again: a reader may have registered since keep_end asked */
        return -1;
    if (copy_out(w, lo, hi, data) < 0)
        return -1;
    w->kept.ent[w->kept.n] = (vfdswmr_keptent_t){.addr = lo, .len = hi - lo, .tick = w->tick, .data = data};
    w->kept.epoch[w->kept.n] = w->pub_epoch;
    if (write_list(w, w->kept.ent, w->kept.n + 1) < 0) {
        /* the list on disk may be torn: write the old one back now, or at
         * the next publish */
        w->kept.dirty = write_list(w, w->kept.ent, w->kept.n) < 0;
        return -1;
    }
    w->kept.n++;
    w->kept_list++;
    VFDSWMR_LOG(&w->log, "kept_list", "addr=%llu size=%llu below_tick=%llu entries=%u", (unsigned long long)lo,
                (unsigned long long)(hi - lo), (unsigned long long)w->tick, w->kept.n);
    vfdswmr_writer_kept_check(w);
    return 0;
}

void
vfdswmr_writer_kept_published(vfdswmr_writer_t *w)
{
    uint32_t j = 0, n = w->kept.n;

    VFDSWMR_ASSERT_LOCKED(w);
    vfdswmr_keptent_t ent[VFDSWMR_KEPT_MAX];
    uint64_t epoch[VFDSWMR_KEPT_MAX];
    for (uint32_t i = 0; i < n; i++)
        if (w->pub_epoch < w->kept.epoch[i] + w->lag) {
            ent[j] = w->kept.ent[i];
            epoch[j++] = w->kept.epoch[i];
        }
    if (j == n && !w->kept.dirty)
        return;
    /* the list first: a copy's space is reused only once no list names it */
    if (write_list(w, ent, j) < 0) {
        w->kept.dirty = true; /* as it was (or torn) until a later publish manages it */
        return;
    }
    w->kept.dirty = false;
    memcpy(w->kept.ent, ent, j * sizeof *ent);
    memcpy(w->kept.epoch, epoch, j * sizeof *epoch);
    w->kept.n = j;
    vfdswmr_writer_kept_check(w);
}
