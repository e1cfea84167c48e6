/* Crash recovery from a metadata file; see recover.h. */
#include "recover.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"
#include "errtext.h"
#include "h5err.h"
#include "io.h"
#include "le.h"
#include "mdidx_file.h"
#include "mdreader.h"
#include "plan.h"
#include "stack.h"
#include "superblock.h"
#include "testhook.h"

/* Recovery reads images in pieces of at most this many bytes: its memory
 * does not follow the snapshot's size or an entry's stated length. A power
 * of two of at least 2 x VFDSWMR_SB_SEAL_SPAN, so that the bytes of a
 * superblock (at 0 or 512 x 2^k) that hold its seal never straddle two
 * pieces of a page (restore_entry). */
#define PIECE ((size_t)1 << 20)
_Static_assert((PIECE & (PIECE - 1)) == 0 && PIECE >= 2 * VFDSWMR_SB_SEAL_SPAN && PIECE >= 1024, "piece size");

/* A snapshot as recovery reads it: the header, and the index in place
 * (mdfile/mdidx_file.h) or wrapped in memory (a reader's). */
typedef struct {
    const vfdswmr_mdhdr_t *hdr;
    vfdswmr_mdidx_file_t *idx;
    int md_fd;
} snap_t;

/* Is entry e's image, inside the metadata file's `size` bytes, all hole
 * (lseek SEEK_DATA finds no data in it)? Its bytes then read as zeros.
 * False where the file system cannot tell (it reports all data), past the
 * end of the file (a short image) and on any error. hole[0..1] keeps the
 * last hole found, [hole[0], hole[1]): images inside it need no lseek. */
static bool
image_is_hole(int md_fd, uint64_t size, uint32_t page_size, const vfdswmr_mdentry_t *e, uint64_t hole[2])
{
    uint64_t at = e->md_page * page_size; /* no overflow: the decoder checked the span */
    off_t d;

    if (at > size || size - at < e->length)
        return false;
    if (at >= hole[0] && at + e->length <= hole[1])
        return true;
    d = lseek(md_fd, (off_t)at, SEEK_DATA);
    if (d < 0 && errno != ENXIO)
        return false;
    hole[0] = at;
    hole[1] = d < 0 ? size : (uint64_t)d; /* ENXIO: no data after at */
    return at + e->length <= hole[1];
}

/* Checksums of zeros recovery keeps, by length (zeros_checksum). */
#define ZERO_SUMS 8
typedef struct {
    uint64_t len1[ZERO_SUMS]; /* length + 1; 0: free */
    uint32_t sum[ZERO_SUMS];
    unsigned next; /* the slot the next new length takes */
} zero_sums_t;

/* The checksum of len zero bytes into *sum, hashed from buf (PIECE bytes,
 * zeroed here): 0, or -1 (out of memory). z keeps the last ZERO_SUMS
 * lengths and their sums: hole images of those lengths cost no checksum. */
static int
zeros_checksum(uint32_t len, uint8_t *buf, zero_sums_t *z, uint32_t *sum)
{
    vfdswmr_checksum_stream_t *cs;
    unsigned k;

    for (k = 0; k < ZERO_SUMS; k++)
        if (z->len1[k] == len + 1ull) {
            *sum = z->sum[k];
            return 0;
        }
    if (NULL == (cs = vfdswmr_checksum_begin()))
        return -1;
    memset(buf, 0, PIECE);
    for (uint64_t done = 0; done < len; done += PIECE)
        vfdswmr_checksum_update(cs, buf, len - done < PIECE ? (size_t)(len - done) : PIECE);
    k = z->next;
    z->next = (k + 1) % ZERO_SUMS;
    z->len1[k] = len + 1ull;
    *sum = z->sum[k] = vfdswmr_checksum_end(cs);
    return 0;
}

/* Pass 1: verify every image of the snapshot, in pieces, before anything
 * is written: a damaged metadata file must not leave a half-recovered
 * file. An image that is all hole is zeros (image_is_hole): its checksum is
 * that of zeros, without reading it. Time follows the bytes of the images
 * that hold data, plus one checksum of zeros per hole length not among the
 * last ZERO_SUMS computed. */
static int
verify_images(const snap_t *s, const char *md_name, uint8_t *buf, char *err, size_t errlen)
{
    int md_fd = s->md_fd;
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&md_fd);
    vfdswmr_mdentry_t e;
    zero_sums_t zeros = {0};
    uint64_t hole[2] = {0, 0};
    uint32_t sum;
    struct stat st;

    if (fstat(md_fd, &st) < 0)
        return vfdswmr_errtext(err, errlen, "cannot stat metadata file %s: %s", md_name, strerror(errno));
    for (uint32_t i = 0; i < s->idx->head.nentries; i++) {
        vfdswmr_mderr_t rc;
        if (vfdswmr_mdidx_file_entry(s->idx, i, &e) < 0)
            return vfdswmr_errtext(err, errlen,
                                   "cannot read the index of metadata file %s: %s; nothing was written to the HDF5 "
                                   "file",
                                   md_name, strerror(errno));
        if (image_is_hole(md_fd, (uint64_t)st.st_size, s->hdr->page_size, &e, hole) &&
            zeros_checksum(e.length, buf, &zeros, &sum) == 0)
            rc = sum == e.checksum ? VFDSWMR_MD_OK : VFDSWMR_MD_ECHECKSUM;
        else
            rc = vfdswmr_mdr_verify_image(&io, s->hdr->page_size, &e, buf, PIECE);
        if (rc != VFDSWMR_MD_OK)
            return vfdswmr_errtext(err, errlen,
                                   "metadata file %s is damaged: the image of HDF5 page %" PRIu64 " (tick %" PRIu64
                                   "): %s%s%s; nothing was written to the HDF5 file",
                                   md_name, e.hdf5_page, s->hdr->tick, vfdswmr_mderr_str(rc),
                                   rc == VFDSWMR_MD_EIO ? ": " : "", rc == VFDSWMR_MD_EIO ? strerror(errno) : "");
    }
    return 0;
}

/* len bytes of entry e's image from offset off (verified by pass 1; the
 * metadata file is ours, locked, and unchanged since). */
static int
read_image_part(int md_fd, uint32_t page_size, const vfdswmr_mdentry_t *e, uint64_t off, void *buf, size_t len)
{
    ssize_t n = vfdswmr_pread_upto(md_fd, buf, len, e->md_page * page_size + off);

    if (n < 0)
        return -1;
    if ((size_t)n != len) {
        errno = EIO; /* shorter than when pass 1 read it */
        return -1;
    }
    return 0;
}

/* The bytes write_index has made and not yet written: buf[0, used), due at
 * `at` in the metadata file, and the checksum of everything before. */
typedef struct {
    int fd;
    uint8_t *buf; /* PIECE bytes */
    size_t used;
    uint64_t at;
    vfdswmr_checksum_stream_t *cs;
} idx_out_t;

/* Room for `room` more bytes in o->buf: written out first when full. */
static int
idx_out_room(idx_out_t *o, size_t room)
{
    if (o->used + room <= PIECE)
        return 0;
    vfdswmr_checksum_update(o->cs, o->buf, o->used);
    if (vfdswmr_pwrite_all(o->fd, o->buf, o->used, o->at) < 0)
        return -1;
    o->at += o->used;
    o->used = 0;
    return 0;
}

/* The entries, then the ranges, of s's index into o. */
static int
idx_out_arrays(const snap_t *s, idx_out_t *o)
{
    vfdswmr_mdidx_file_t *x = s->idx;
    vfdswmr_mdentry_t e;
    vfdswmr_mdrange_t r;

    for (uint32_t i = 0; i < x->head.nentries; i++) {
        if (vfdswmr_mdidx_file_entry(x, i, &e) < 0 || idx_out_room(o, VFDSWMR_MDIDX_ENTRY) < 0)
            return -1;
        vfdswmr_mdidx_entry_encode(&e, o->buf + o->used);
        o->used += VFDSWMR_MDIDX_ENTRY;
    }
    for (uint32_t i = 0; i < x->head.nentries; i++) {
        if (vfdswmr_mdidx_file_entry(x, i, &e) < 0)
            return -1;
        for (uint32_t k = 0; k < e.nranges; k++) {
            if (vfdswmr_mdidx_file_range(x, &e, k, &r) < 0 || idx_out_room(o, VFDSWMR_MDIDX_RANGE) < 0)
                return -1;
            vfdswmr_mdidx_range_encode(&r, o->buf + o->used);
            o->used += VFDSWMR_MDIDX_RANGE;
        }
    }
    return 0;
}

/* The index image of s with tick `tick`, written at `at` in the metadata
 * file a buffer (PIECE bytes) at a time, through the index codec's pieces
 * (format.h): its entries and ranges as they are, its checksum anew. */
static int
write_index(const snap_t *s, uint64_t tick, uint64_t at, uint8_t *buf)
{
    idx_out_t o = {.fd = s->md_fd, .buf = buf, .used = VFDSWMR_MDIDX_HEAD, .at = at, .cs = vfdswmr_checksum_begin()};
    int saved;

    if (o.cs == NULL) {
        errno = ENOMEM;
        return -1;
    }
    vfdswmr_mdidx_head_encode(s->idx->head.session, tick, s->idx->head.nentries, s->idx->head.nranges, buf);
    if (idx_out_arrays(s, &o) == 0 && idx_out_room(&o, 4) == 0) {
        vfdswmr_checksum_update(o.cs, buf, o.used);
        vfdswmr_le32_encode(buf + o.used, vfdswmr_checksum_end(o.cs));
        return vfdswmr_pwrite_all(o.fd, buf, o.used + 4, o.at);
    }
    saved = errno;
    vfdswmr_checksum_end(o.cs);
    errno = saved;
    return -1;
}

/*
 * Republish the snapshot max_lag - 1 ticks later, with its index at the
 * end of the metadata file (never over anything a reader may be reading).
 * Readers holding this snapshot keep it; readers holding an older one, which
 * may read from the HDF5 file pages recovery is about to change, fail their
 * lag check ("fell behind") and refresh instead of mixing states. A header
 * that named no HDF5 file (hdf5_id 0: tick 0, written before its writer
 * opened the file) names hdf5_id now, so that a recovery killed after this
 * is run again (vfdswmr_hdf5_id_foreign lets 0 pass at tick 0 only). The
 * index is written first and made durable, then the header (plan.h's order),
 * a buffer at a time.
 */
static int
republish(const snap_t *s, const char *md_name, uint64_t hdf5_id, uint8_t *buf, char *err, size_t errlen)
{
    vfdswmr_mdhdr_t h = *s->hdr;
    uint8_t hdr_image[VFDSWMR_MDHDR_SIZE];
    struct stat st;

    if (fstat(s->md_fd, &st) < 0)
        return vfdswmr_errtext(err, errlen, "cannot stat metadata file %s: %s", md_name, strerror(errno));
    h.tick = s->hdr->tick + s->hdr->max_lag - 1;
    if (h.hdf5_id == 0)
        h.hdf5_id = hdf5_id;
    h.index_length = vfdswmr_mdidx_size(s->idx->head.nentries, s->idx->head.nranges);
    h.index_offset = vfdswmr_pages((uint64_t)st.st_size, h.page_size) * h.page_size;
    vfdswmr_mdhdr_encode(&h, hdr_image);
    if (write_index(s, h.tick, h.index_offset, buf) < 0 || fdatasync(s->md_fd) < 0 ||
        vfdswmr_pwrite_all(s->md_fd, hdr_image, VFDSWMR_MDHDR_SIZE, 0) < 0 || fdatasync(s->md_fd) < 0)
        return vfdswmr_errtext(err, errlen, "cannot republish the snapshot in metadata file %s: %s", md_name,
                               strerror(errno));
    return 0;
}

/* What to do with one piece of an entry's image: the file's bytes at HDF5
 * address `pos` in buf, the image's from offset `off` in ibuf, n of each;
 * *k the entry's first range that may meet this piece (ranges_in_piece).
 * 0 to go on, else what each_piece returns. */
typedef int (*piece_fn)(void *ctx, const snap_t *s, const vfdswmr_mdentry_t *e, uint32_t *k, uint64_t pos, uint64_t off,
                        size_t n, uint8_t *buf, uint8_t *ibuf);

/* fn for every piece of entry e's image, at most up to the snapshot's EOA
 * (none for an entry without metadata ranges): its first result that is not
 * 0, or 0; -1 (errno) when a read fails. buf and ibuf hold PIECE bytes. */
static int
each_piece(const vfdswmr_recover_io_t *io, const snap_t *s, const vfdswmr_mdentry_t *e, uint8_t *buf, uint8_t *ibuf,
           piece_fn fn, void *ctx)
{
    uint64_t addr = e->hdf5_page * s->hdr->page_size, len = e->length;
    uint32_t k = 0;
    int rc;

    if (e->nranges == 0 || addr >= s->hdr->eoa)
        return 0;
    if (s->hdr->eoa - addr < len)
        len = s->hdr->eoa - addr;
    for (uint64_t off = 0; off < len; off += PIECE) {
        size_t n = len - off < PIECE ? (size_t)(len - off) : PIECE;
        if (io->read(io->ctx, addr + off, buf, n) < 0 ||
            read_image_part(s->md_fd, s->hdr->page_size, e, off, ibuf, n) < 0)
            return -1;
        if ((rc = fn(ctx, s, e, &k, addr + off, off, n, buf, ibuf)) != 0)
            return rc;
    }
    return 0;
}

/* The bytes of e's metadata ranges within the piece [off, off + n) of its
 * image, from range *k on: copied from ibuf into buf (copy; *out the bytes
 * copied), or compared (*out 1 when one differs, else 0). *k moves past the
 * ranges that end in this piece (pieces come in order, and an entry's
 * ranges are sorted and disjoint), so an entry's ranges are read once
 * however many pieces it has. 0, or -1 when a range cannot be read. */
static int
ranges_in_piece(const snap_t *s, const vfdswmr_mdentry_t *e, uint32_t *k, uint64_t off, size_t n, uint8_t *buf,
                const uint8_t *ibuf, bool copy, uint64_t *out)
{
    vfdswmr_mdrange_t r;

    *out = 0;
    for (uint32_t j = *k; j < e->nranges; j++) {
        if (vfdswmr_mdidx_file_range(s->idx, e, j, &r) < 0)
            return -1;
        if (r.offset >= off + n)
            break; /* this one and the rest lie in later pieces */
        uint64_t lo = r.offset > off ? r.offset : off, hi = (uint64_t)r.offset + r.length;
        if (hi <= off + n)
            *k = j + 1; /* ends here: no later piece meets it */
        else
            hi = off + n;
        if (lo >= hi)
            continue;
        if (!copy && memcmp(buf + (lo - off), ibuf + (lo - off), (size_t)(hi - lo)) != 0) {
            *out = 1;
            return 0;
        }
        if (copy) {
            memcpy(buf + (lo - off), ibuf + (lo - off), (size_t)(hi - lo));
            *out += hi - lo;
        }
    }
    return 0;
}

/* Where the superblock sits in a piece at HDF5 address pos of n bytes
 * (its bytes lie within one piece: PIECE), or SIZE_MAX. */
static size_t
sb_in_piece(uint64_t sb_addr, uint64_t pos, size_t n)
{
    return sb_addr != UINT64_MAX && sb_addr >= pos && sb_addr - pos < n ? (size_t)(sb_addr - pos) : SIZE_MAX;
}

typedef struct {
    const vfdswmr_recover_io_t *io;
    uint64_t sb_addr;
    uint64_t *bytes;
    bool dry; /* count, write nothing (vfdswmr_recover_predict) */
} restore_t;

/* Pass 2's piece: overlay the metadata ranges, keep the superblock sealed
 * (recovery's last write clears it), write back. */
static int
restore_piece(void *ctx, const snap_t *s, const vfdswmr_mdentry_t *e, uint32_t *k, uint64_t pos, uint64_t off, size_t n,
              uint8_t *buf, uint8_t *ibuf)
{
    restore_t *r = ctx;
    size_t at = sb_in_piece(r->sb_addr, pos, n);
    uint64_t copied;

    if (ranges_in_piece(s, e, k, off, n, buf, ibuf, true, &copied) < 0)
        return -1;
    *r->bytes += copied;
    if (r->dry)
        return 0;
    if (at != SIZE_MAX)
        vfdswmr_sb_set_seal(buf + at, n - at, true);
    return r->io->write(r->io->ctx, pos, buf, n) < 0 ? -1 : 0;
}

/* Pass 2: copy the metadata ranges of one image into the HDF5 file (at
 * most up to the snapshot's EOA), a piece at a time: read the file's bytes
 * and the image's, overlay, write back. buf and ibuf hold PIECE bytes. */
static int
restore_entry(const vfdswmr_recover_io_t *io, const snap_t *s, const vfdswmr_mdentry_t *e, uint64_t sb_addr,
              uint8_t *buf, uint8_t *ibuf, uint64_t *bytes, bool dry)
{
    restore_t r = {io, sb_addr, bytes, dry};

    if (each_piece(io, s, e, buf, ibuf, restore_piece, &r) < 0)
        return -1;
    if (!dry)
        vfdswmr_test_kill_point("recover");
    return 0;
}

/* check_unsealed's piece: 1 when a metadata byte differs from the file's,
 * the superblock (at *(uint64_t *)ctx) counting as the same also as a
 * finished recovery leaves it -- unsealed and patched (vfdswmr_sb_patch:
 * status flags cleared, end of file at least the EOA): a recovered file
 * whose metadata file outlived the recovery (killed before its removal) is
 * not rewritten. */
static int
differs_piece(void *ctx, const snap_t *s, const vfdswmr_mdentry_t *e, uint32_t *k, uint64_t pos, uint64_t off, size_t n,
              uint8_t *buf, uint8_t *ibuf)
{
    size_t at = sb_in_piece(*(const uint64_t *)ctx, pos, n);
    uint32_t k0 = *k;
    uint64_t d;

    if (ranges_in_piece(s, e, k, off, n, buf, ibuf, false, &d) < 0)
        return -1;
    if (!d)
        return 0;
    if (at == SIZE_MAX)
        return 1;
    vfdswmr_sb_set_seal(ibuf + at, n - at, false);
    vfdswmr_sb_patch(ibuf + at, n - at, s->hdr->eoa);
    *k = k0; /* the same piece again */
    if (ranges_in_piece(s, e, k, off, n, buf, ibuf, false, &d) < 0)
        return -1;
    return d ? 1 : 0;
}

static int
snap_differs(const snap_t *s, const vfdswmr_recover_io_t *io)
{
    uint64_t addr, size;
    uint8_t *buf;
    vfdswmr_mdentry_t e;
    int found, sealed = 0, d = 0;

    if (io->size(io->ctx, &size) < 0 || (found = vfdswmr_sb_find(io->read, io->ctx, size, &addr)) < 0 ||
        (found && (sealed = vfdswmr_recover_sealed(io, addr)) == -1))
        return -1;
    if (!found || sealed != 0 || s->idx->head.nentries == 0)
        return 0; /* sealed: a dead writer's file; no superblock: one before its first publish showed it */
    if (NULL == (buf = malloc(2 * PIECE)))
        return -1;
    for (uint32_t i = 0; i < s->idx->head.nentries && d == 0; i++)
        d = vfdswmr_mdidx_file_entry(s->idx, i, &e) < 0 ? -1
                                                        : each_piece(io, s, &e, buf, buf + PIECE, differs_piece, &addr);
    free(buf);
    return d;
}

int
vfdswmr_recover_differs(int md_fd, const vfdswmr_mdsnap_t *snap, const vfdswmr_recover_io_t *io)
{
    vfdswmr_mdidx_file_t x;
    snap_t s = {&snap->hdr, &x, md_fd};

    vfdswmr_mdidx_file_wrap(&x, &snap->idx, snap->hdr.page_size);
    return snap_differs(&s, io);
}

/* vfdswmr_recover_differs, as recovery's refusal (-1 with err), else 0. */
static int
check_unsealed(const vfdswmr_recover_io_t *io, const snap_t *s, const char *md_name, const char *h5_name, char *err,
               size_t errlen)
{
    int d = snap_differs(s, io);

    if (d < 0)
        return vfdswmr_errtext(err, errlen, "cannot read %s or metadata file %s: %s", h5_name, md_name,
                               strerror(errno));
    if (d > 0)
        return vfdswmr_errtext(
            err, errlen,
            "%s is not sealed by a writer, but metadata file %s holds the last snapshot (tick %" PRIu64 ") of a "
            "writer of it that died, and the file's metadata differs from it: the file was written since "
            "without vfd_swmr_writer (re-created by plain HDF5, or written on after vfd_swmr_recover --force), "
            "and the metadata file does not describe it; nothing was written (remove the metadata file if it is "
            "stale; vfd_swmr_recover --force writes the snapshot anyway)",
            h5_name, md_name, s->hdr->tick);
    return 0;
}

/* The bytes of the superblock at addr that hold its flags and checksum, as
 * far as the file goes (never written back past its end): *len of them. */
static int
read_sb(const vfdswmr_recover_io_t *io, uint64_t addr, uint8_t sb[VFDSWMR_SB_SEAL_SPAN], size_t *len)
{
    uint64_t size;

    if (io->size(io->ctx, &size) < 0 || io->read(io->ctx, addr, sb, VFDSWMR_SB_SEAL_SPAN) < 0)
        return -1;
    *len = size <= addr ? 0 : size - addr < VFDSWMR_SB_SEAL_SPAN ? (size_t)(size - addr) : VFDSWMR_SB_SEAL_SPAN;
    return 0;
}

int
vfdswmr_recover_sealed(const vfdswmr_recover_io_t *io, uint64_t addr)
{
    uint8_t sb[VFDSWMR_SB_SEAL_SPAN];
    size_t len;
    int m;

    if (read_sb(io, addr, sb, &len) < 0)
        return -1;
    return (m = vfdswmr_sb_sealed(sb, len)) < 0 ? -2 : m;
}

int
vfdswmr_recover_set_seal(const vfdswmr_recover_io_t *io, uint64_t addr, bool on)
{
    uint8_t sb[VFDSWMR_SB_SEAL_SPAN];
    size_t len;
    int m;

    if (read_sb(io, addr, sb, &len) < 0)
        return -1;
    if ((m = vfdswmr_sb_sealed(sb, len)) < 0)
        return 0;
    if ((m == 1) != on && (vfdswmr_sb_set_seal(sb, len, on), io->write(io->ctx, addr, sb, len) < 0))
        return -1;
    return 1;
}

/* Is the HDF5 file's superblock sealed? 1, 0 (not, or none), -1 errno. */
static int
file_sealed(const vfdswmr_recover_io_t *io)
{
    uint64_t size, addr;
    int found, sealed;

    if (io->size(io->ctx, &size) < 0 || (found = vfdswmr_sb_find(io->read, io->ctx, size, &addr)) < 0)
        return -1;
    if (!found)
        return 0;
    sealed = vfdswmr_recover_sealed(io, addr);
    return sealed == -1 ? -1 : sealed == 1;
}

/*
 * A FINAL metadata file: its writer closed the file, and the close clears
 * the seal before it publishes FINAL (vfd-swmr-writer/close.c). An HDF5
 * file still sealed contradicts that -- a machine crash before the close
 * reached the disk (without durable=1), or a damaged or foreign metadata
 * file -- and FINAL's empty index holds nothing to restore: refused, unless
 * `force`, which clears the seal and takes the file as it is on disk
 * (rep->needed: the metadata file has done its work). 0 or -1 with err.
 */
static int
final_sealed(const vfdswmr_recover_io_t *io, const char *md_name, const char *h5_name, bool force,
             vfdswmr_recover_report_t *rep, char *err, size_t errlen)
{
    uint64_t size, addr;
    int found, sealed = 0;

    if (io->size(io->ctx, &size) < 0 || (found = vfdswmr_sb_find(io->read, io->ctx, size, &addr)) < 0 ||
        (found && (sealed = vfdswmr_recover_sealed(io, addr)) == -1))
        return vfdswmr_errtext(err, errlen, "cannot read %s: %s", h5_name, strerror(errno));
    if (!found || sealed != 1)
        return 0;
    if (!force)
        return vfdswmr_errtext(
            err, errlen,
            "metadata file %s says its writer closed %s cleanly (FINAL), but the file's superblock is still "
            "sealed by a writer: the two disagree (the machine crashed before the close reached the disk, or "
            "the metadata file is damaged or another file's), and the metadata file holds nothing to restore; "
            "nothing was written (vfd_swmr_recover --force clears the seal and takes the file as it is on disk)",
            md_name, h5_name);
    if (vfdswmr_recover_set_seal(io, addr, false) < 0 || io->sync(io->ctx) < 0)
        return vfdswmr_errtext(err, errlen, "cannot clear the seal of %s: %s", h5_name, strerror(errno));
    rep->needed = true;
    return 0;
}

/* The bytes of the HDF5 file as snapshot s has them, for finding the
 * superblock: the image where the index names the page, else the file. */
typedef struct {
    const vfdswmr_recover_io_t *io;
    const snap_t *s;
} snap_view_t;

static int
snap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    const snap_view_t *v = ctx;
    uint32_t ps = v->s->hdr->page_size;
    vfdswmr_mdentry_t e;
    int found = vfdswmr_mdidx_file_find(v->s->idx, addr / ps, &e);

    if (found < 0)
        return -1;
    if (found && addr + len <= e.hdf5_page * ps + e.length)
        return read_image_part(v->s->md_fd, ps, &e, addr - e.hdf5_page * ps, buf, len);
    return v->io->read(v->io->ctx, addr, buf, len);
}

/* The header of the metadata file on md_fd and its index, checked in place
 * (the index of the header's session and tick, as vfdswmr_mdr_load
 * accepts one). 0, or -1 with the reason in why. */
static int
load_snapshot(int md_fd, vfdswmr_mdhdr_t *h, vfdswmr_mdidx_file_t *x, char *why, size_t whylen)
{
    vfdswmr_mderr_t rc = vfdswmr_mdr_read_header(md_fd, h);
    const char *what = "header";

    if (rc == VFDSWMR_MD_OK) {
        what = "index";
        if ((rc = vfdswmr_mdidx_file_open(x, md_fd, h)) == VFDSWMR_MD_OK) {
            what = "header and index";
            if (x->head.session != h->session)
                rc = VFDSWMR_MD_ESESSION;
            else if (x->head.tick > h->tick || x->head.tick + 1 == h->tick)
                rc = VFDSWMR_MD_ETICK_AHEAD;
            else if (x->head.tick != h->tick)
                rc = VFDSWMR_MD_ETICK;
        }
    }
    if (rc == VFDSWMR_MD_OK)
        return 0;
    return vfdswmr_errtext(why, whylen, "%s: %s%s%s", what, vfdswmr_mderr_str(rc), rc == VFDSWMR_MD_EIO ? ": " : "",
                           rc == VFDSWMR_MD_EIO ? strerror(errno) : "");
}

/* vfdswmr_recover_run, or with `dry` vfdswmr_recover_predict: the same
 * checks and passes, with every write (republish, extend, restore, sync,
 * superblock) left out. */
static int
run(int md_fd, const char *md_name, const vfdswmr_recover_io_t *io, const char *h5_name, uint64_t hdf5_id,
    const vfdswmr_sessname_t *recorded, bool force, bool dry, vfdswmr_recover_report_t *rep, char *err, size_t errlen)
{
    vfdswmr_mdhdr_t hdr;
    vfdswmr_mdidx_file_t idx;
    snap_t s = {&hdr, &idx, md_fd};
    vfdswmr_mdentry_t e;
    uint8_t *buf = NULL, sb[VFDSWMR_SB_SEAL_SPAN];
    size_t sb_len;
    char why[256];
    int rc = -1, found;
    uint64_t size, sb_addr = UINT64_MAX;

    memset(rep, 0, sizeof *rep);
    memset(&idx, 0, sizeof idx);
    if (load_snapshot(md_fd, &hdr, &idx, why, sizeof why) < 0) {
        vfdswmr_errtext(err, errlen,
                        "cannot load the last snapshot from metadata file %s: %s; nothing was written to %s", md_name,
                        why, h5_name);
        goto done;
    }
    rep->session = hdr.session;
    rep->tick = hdr.tick;
    rep->eoa = hdr.eoa;
    if (!force && vfdswmr_hdf5_id_foreign(&hdr, hdf5_id)) {
        vfdswmr_errtext(err, errlen,
                        "metadata file %s belongs to another HDF5 file (inode %" PRIu64 ", but %s is inode %" PRIu64
                        "): a stale or foreign metadata file; nothing was written (if you copied both files together, "
                        "vfd_swmr_recover --force accepts it)",
                        md_name, hdr.hdf5_id, h5_name, hdf5_id);
        goto done;
    }
    /* Another session recorded elsewhere: this one is stale -- a closed
     * (FINAL) one only when the file is sealed (by that later writer);
     * over an unsealed file it still means "whole, nothing to do". */
    if (!force && recorded && recorded->session != hdr.session &&
        (!(hdr.flags & VFDSWMR_MDHDR_FINAL) || file_sealed(io) != 0)) {
        bool none = strcmp(recorded->path, VFDSWMR_SESSNAME_NONE) == 0;
        vfdswmr_errtext(err, errlen,
                        "metadata file %s holds session %016" PRIx64 " of %s, but the file records session %016" PRIx64
                        " as its own, %s%s%s: this one is stale; nothing was written (%s)",
                        md_name, hdr.session, h5_name, recorded->session,
                        none ? "whose writer kept no metadata file (updater files only)" : "with its metadata file at ",
                        none ? "" : recorded->path,
                        none ? "" : " (a later writer of it, by another name or configuration)",
                        none ? "recover it from vfd_swmr_aux's copy of that writer's metadata file, with --config; "
                               "remove this one"
                             : "recover from the recorded one: vfd_swmr_recover without --config, or a writer by "
                               "any name; remove this one");
        goto done;
    }
    if (hdr.flags & VFDSWMR_MDHDR_FINAL) { /* closed cleanly: the HDF5 file is complete -- if it says so too */
        rc = final_sealed(io, md_name, h5_name, force, rep, err, errlen);
        goto done;
    }
    if (io->size(io->ctx, &size) < 0) {
        vfdswmr_errtext(err, errlen, "cannot find the size of %s: %s", h5_name, strerror(errno));
        goto done;
    }
    if (!force && size < hdr.eoa) {
        vfdswmr_errtext(
            err, errlen,
            "%s is %" PRIu64 " bytes, shorter than the %" PRIu64 " bytes of the snapshot in metadata file %s "
            "(the writer kept it at least that long): it was truncated or replaced after its writer died, and "
            "the metadata file does not describe it; nothing was written (vfd_swmr_recover --force writes the "
            "snapshot anyway)",
            h5_name, size, hdr.eoa, md_name);
        goto done;
    }
    if (hdr.tick > VFDSWMR_TICK_MAX - hdr.max_lag) { /* its republish would pass the format's last tick */
        vfdswmr_errtext(err, errlen,
                        "metadata file %s is damaged: its tick %" PRIu64 " leaves no room below the format's largest "
                        "tick (2^62) for recovery's republish; nothing was written",
                        md_name, hdr.tick);
        goto done;
    }
    rep->needed = true;
    /* two pieces: the HDF5 file's bytes and the image's (restore_entry) */
    if (NULL == (buf = malloc(2 * PIECE))) {
        vfdswmr_errtext(err, errlen, "out of memory");
        goto done;
    }
    if (verify_images(&s, md_name, buf, err, errlen) < 0 ||
        (!force && check_unsealed(io, &s, md_name, h5_name, err, errlen) < 0) ||
        (!dry && republish(&s, md_name, hdf5_id, buf, err, errlen) < 0))
        goto done;
    if (!dry && io->extend(io->ctx, hdr.eoa) < 0)
        goto io_failed;
    snap_view_t view = {.io = io, .s = &s};
    if ((found = vfdswmr_sb_find(snap_read, &view, hdr.eoa > size ? hdr.eoa : size, &sb_addr)) < 0)
        goto io_failed;
    if (found == 0)
        sb_addr = UINT64_MAX;
    for (uint32_t i = 0; i < idx.head.nentries; i++) {
        if (vfdswmr_mdidx_file_entry(&idx, i, &e) < 0 ||
            restore_entry(io, &s, &e, sb_addr, buf, buf + PIECE, &rep->bytes, dry) < 0)
            goto io_failed;
        rep->pages += e.nranges > 0;
    }
    if (dry) {
        rc = 0;
        goto done;
    }
    /* Everything restored and durable; only then the superblock: HDF5's
     * "open for writing" flags and the seal cleared, its end of file at
     * least the EOA -- the last write, so an interrupted recovery leaves a
     * file plain HDF5 refuses. */
    if (io->sync(io->ctx) < 0)
        goto io_failed;
    if (sb_addr != UINT64_MAX) {
        if (read_sb(io, sb_addr, sb, &sb_len) < 0)
            goto io_failed;
        if ((vfdswmr_sb_set_seal(sb, sb_len, false) | vfdswmr_sb_patch(sb, sb_len, hdr.eoa)) &&
            (io->write(io->ctx, sb_addr, sb, sb_len) < 0 || io->sync(io->ctx) < 0))
            goto io_failed;
    }
    rc = 0;
    goto done;
io_failed:
    vfdswmr_errtext(err, errlen,
                    "cannot write the HDF5 file %s (or read the images the metadata file %s holds for it): %s; the "
                    "metadata file still holds the snapshot: run the recovery again once the cause is fixed",
                    h5_name, md_name, strerror(errno));
done:
    free(buf);
    vfdswmr_mdidx_file_close(&idx);
    return rc;
}

int
vfdswmr_recover_run(int md_fd, const char *md_name, const vfdswmr_recover_io_t *io, const char *h5_name,
                    uint64_t hdf5_id, const vfdswmr_sessname_t *recorded, bool force, vfdswmr_recover_report_t *rep,
                    char *err, size_t errlen)
{
    return run(md_fd, md_name, io, h5_name, hdf5_id, recorded, force, false, rep, err, errlen);
}

int
vfdswmr_recover_predict(int md_fd, const char *md_name, const vfdswmr_recover_io_t *io, const char *h5_name,
                        uint64_t hdf5_id, const vfdswmr_sessname_t *recorded, vfdswmr_recover_report_t *rep, char *err,
                        size_t errlen)
{
    return run(md_fd, md_name, io, h5_name, hdf5_id, recorded, false, true, rep, err, errlen);
}

/* ---- the HDF5 file through a lower driver ---------------------------------- */

static int
lower_ensure_eoa(H5FD_t *lower, uint64_t end)
{
    haddr_t eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(lower, H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);

    if (eoa == HADDR_UNDEF) {
        errno = EIO;
        return -1;
    }
    if (eoa < end && VFDSWMR_GUARDED(herr_t, H5FDset_eoa(lower, H5FD_MEM_DEFAULT, end), _r < 0) < 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static int
lower_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    H5FD_t *lower = ctx;
    haddr_t eof = VFDSWMR_GUARDED(haddr_t, H5FDget_eof(lower, H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);

    memset(buf, 0, len);
    if (eof == HADDR_UNDEF || lower_ensure_eoa(lower, addr + len) < 0) {
        errno = EIO;
        return -1;
    }
    if (addr >= eof)
        return 0;
    if (eof - addr < len)
        len = (size_t)(eof - addr);
    if (VFDSWMR_GUARDED(herr_t, H5FDread(lower, H5FD_MEM_DEFAULT, H5P_DEFAULT, addr, len, buf), _r < 0) < 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static int
lower_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
    H5FD_t *lower = ctx;

    if (lower_ensure_eoa(lower, addr + len) < 0)
        return -1;
    errno = 0;
    if (VFDSWMR_GUARDED(herr_t, H5FDwrite(lower, H5FD_MEM_DEFAULT, H5P_DEFAULT, addr, len, buf), _r < 0) < 0) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

static int
lower_extend(void *ctx, uint64_t size)
{
    H5FD_t *lower = ctx;
    haddr_t eof = VFDSWMR_GUARDED(haddr_t, H5FDget_eof(lower, H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);

    if (eof == HADDR_UNDEF) {
        errno = EIO;
        return -1;
    }
    if (eof >= size)
        return 0;
    /* the lower driver's truncate sets the file's size to its EOA */
    if (lower_ensure_eoa(lower, size) < 0 ||
        VFDSWMR_GUARDED(herr_t, H5FDtruncate(lower, H5P_DEFAULT, false), _r < 0) < 0) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static int
lower_size(void *ctx, uint64_t *size)
{
    haddr_t eof = VFDSWMR_GUARDED(haddr_t, H5FDget_eof((H5FD_t *)ctx, H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);

    if (eof == HADDR_UNDEF) {
        errno = EIO;
        return -1;
    }
    *size = eof;
    return 0;
}

static int
lower_sync(void *ctx)
{
    H5FD_t *lower = ctx;
    int fd;

    if (VFDSWMR_GUARDED(herr_t, H5FDflush(lower, H5P_DEFAULT, false), _r < 0) < 0) {
        errno = EIO;
        return -1;
    }
    /* sec2's flush does not reach the disk: fsync where there is a descriptor */
    if ((fd = vfdswmr_lower_fd(lower)) >= 0 && fsync(fd) < 0)
        return -1;
    return 0;
}

void
vfdswmr_recover_io_lower(H5FD_t *lower, vfdswmr_recover_io_t *io)
{
    *io = (vfdswmr_recover_io_t){.read = lower_read,
                                 .write = lower_write,
                                 .extend = lower_extend,
                                 .size = lower_size,
                                 .sync = lower_sync,
                                 .ctx = lower};
}

/* ---- the HDF5 file on a descriptor, read-only ------------------------------ */

static int
ro_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    ssize_t n = vfdswmr_pread_upto(*(int *)ctx, buf, len, addr);

    if (n < 0)
        return -1;
    memset((uint8_t *)buf + n, 0, len - (size_t)n); /* zeros past the end, as the io promises */
    return 0;
}

static int
ro_size(void *ctx, uint64_t *size)
{
    struct stat st;

    if (fstat(*(int *)ctx, &st) < 0)
        return -1;
    *size = (uint64_t)st.st_size;
    return 0;
}

static int
ro_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
    (void)ctx, (void)addr, (void)buf, (void)len;
    errno = EROFS;
    return -1;
}

static int
ro_extend(void *ctx, uint64_t size)
{
    (void)ctx, (void)size;
    errno = EROFS;
    return -1;
}

static int
ro_sync(void *ctx)
{
    (void)ctx;
    errno = EROFS;
    return -1;
}

void
vfdswmr_recover_io_readonly(int *fd, vfdswmr_recover_io_t *io)
{
    *io = (vfdswmr_recover_io_t){ro_read, ro_write, ro_extend, ro_size, ro_sync, fd};
}
