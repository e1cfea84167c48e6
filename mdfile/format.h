/*
 * On-disk structures of the metadata file, of updater files and of the
 * metadata file's side files: exactly one encoder and one decoder per
 * structure, in format_md.c (VHDR, VIDX), format_ud.c (VUDH, VUCL) and
 * format_side.c (VRDM, VRAW); format.c has what they all share (errors,
 * page sizes). Byte layouts are in docs/FORMAT.md; all integers are
 * little-endian.
 *
 * Decoders never read outside [buf, buf + len) and validate every field; they
 * return VFDSWMR_MD_OK or the first problem found, checked in this order:
 * length, signature, checksum, version, then the fields (the metadata file
 * header also refuses a whole version-1 header right after the signature). Errors found before
 * the checksum was verified may come from a torn write and are worth a retry;
 * see vfdswmr_mderr_retryable(). On failure a decoder's output is all zero
 * (entries NULL, nothing left allocated). The header decoders look at the
 * first VFDSWMR_*HDR_SIZE bytes of a longer buffer; the index and change list
 * decoders need the exact length.
 *
 * vfdswmr_mdidx_search() and vfdswmr_mdidx_find() are the one lookup in a
 * decoded index.
 *
 * Error contract: encoders cannot fail; decoders return VFDSWMR_MD_OK or the
 * first vfdswmr_mderr_t found (vfdswmr_mderr_str() gives its text) and leave
 * their output zeroed. Nothing is printed, and no text is kept anywhere.
 */
#ifndef VFDSWMR_MDFILE_FORMAT_H
#define VFDSWMR_MDFILE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VFDSWMR_FORMAT_VERSION 3

/* Page sizes accepted by the formats: powers of two in this range. */
#define VFDSWMR_MIN_PAGE_SIZE 512u
#define VFDSWMR_MAX_PAGE_SIZE (1u << 30)

typedef enum vfdswmr_mderr_t {
    VFDSWMR_MD_OK = 0,
    VFDSWMR_MD_ESHORT,      /* buffer shorter than the structure (truncated file) */
    VFDSWMR_MD_EMAGIC,      /* wrong signature */
    VFDSWMR_MD_ECHECKSUM,   /* checksum mismatch (torn write or damage) */
    VFDSWMR_MD_EVERSION,    /* unsupported format version */
    VFDSWMR_MD_EPAGESIZE,   /* page size 0, not a power of two, or out of range */
    VFDSWMR_MD_ERESERVED,   /* a reserved field or flag bit is not zero */
    VFDSWMR_MD_ELENGTH,     /* a stated length disagrees with the entry count */
    VFDSWMR_MD_ECOUNT,      /* entry count larger than the buffer can hold */
    VFDSWMR_MD_EUNSORTED,   /* entries not in strictly increasing order */
    VFDSWMR_MD_EOVERLAP,    /* two entries cover the same pages */
    VFDSWMR_MD_EENTRY,      /* an entry is invalid: zero length, in page 0, offset x page size overflows */
    VFDSWMR_MD_EBOUNDS,     /* an offset/length lies outside the file, or is absurd */
    VFDSWMR_MD_ETICK_AHEAD, /* header and index ticks differ by one, or the index is newer: a write in flight */
    VFDSWMR_MD_ETICK,       /* any other tick mismatch */
    VFDSWMR_MD_ESESSION,    /* structures of two writer sessions mixed */
    VFDSWMR_MD_EFLAGS,      /* invalid combination of flags */
    VFDSWMR_MD_ESEQUENCE,   /* updater sequence number not the one expected */
    VFDSWMR_MD_EIO,         /* a read or write failed (errno says why) */
    VFDSWMR_MD_ENOMEM,      /* out of memory */
    VFDSWMR_MD_ERANGE,      /* a metadata range is invalid (empty, outside its image, unsorted, miscounted) */
    VFDSWMR_MD_EFIELD,      /* a header field has a value the format forbids (max_lag below 3, epoch > tick) */
    VFDSWMR_MD_NERRORS
} vfdswmr_mderr_t;

/* A short English description, e.g. "checksum mismatch (torn write or damage)". */
const char *vfdswmr_mderr_str(vfdswmr_mderr_t err);
/* True for errors a later read may not show (torn or in-flight writes). */
bool vfdswmr_mderr_retryable(vfdswmr_mderr_t err);

/* Number of pages `len` bytes occupy (0 for 0). */
static inline uint64_t
vfdswmr_pages(uint64_t len, uint32_t page_size)
{
    return len / page_size + (len % page_size != 0);
}
bool vfdswmr_page_size_valid(uint32_t page_size);

/* ---- metadata file header ("VHDR"), at offset 0 of the metadata file ---- */
#define VFDSWMR_MDHDR_SIZE        80
#define VFDSWMR_MDHDR_FINAL       0x0001u /* the writer closed cleanly: index empty, HDF5 file complete */
#define VFDSWMR_MDHDR_FAILED      0x0002u /* the writer can no longer publish: this is its last snapshot */
#define VFDSWMR_MDHDR_MIN_MAX_LAG 3u      /* smallest max_lag a header may state */
/* Largest tick (and epoch, updater sequence) a header may state: 2^62, a
 * million ticks a second for 146,000 years, so that tick arithmetic
 * (tick + max_lag, differences, a factor of a few) never wraps. */
#define VFDSWMR_TICK_MAX (UINT64_C(1) << 62)
typedef struct vfdswmr_mdhdr_t {
    uint16_t flags;     /* VFDSWMR_MDHDR_FINAL, VFDSWMR_MDHDR_FAILED, not both */
    uint32_t page_size; /* of the HDF5 file and the metadata file */
    uint64_t session;   /* random identifier of the writer session */
    uint64_t tick;
    uint64_t index_offset; /* bytes; >= VFDSWMR_MDHDR_SIZE, a multiple of 8 */
    uint64_t index_length; /* bytes */
    uint64_t eoa;          /* the writer's end of allocated space in the HDF5 file */
    uint32_t tick_len;     /* the writer's tick length, tenths of a second */
    uint32_t max_lag;      /* the writer's max_lag, ticks, >= VFDSWMR_MDHDR_MIN_MAX_LAG */
    uint64_t hdf5_id;      /* st_ino of the HDF5 file, 0 = unknown */
    /* The writer's tick count when it published this snapshot: ends of tick
     * (the ticker's, explicit ones, close's) advance it, publishes at a flush
     * do not. max_lag is counted in it (DESIGN.md "The lag is a time");
     * never decreases, <= tick. */
    uint64_t epoch;
} vfdswmr_mdhdr_t;

void vfdswmr_mdhdr_encode(const vfdswmr_mdhdr_t *h, uint8_t out[VFDSWMR_MDHDR_SIZE]);

/*
 * A whole header of an earlier version (version 1: 56 bytes, version 2: 72,
 * its own checksum valid) is EVERSION. Also checks: flags (unknown bits:
 * ERESERVED; FINAL with FAILED: EFLAGS), max_lag >=
 * VFDSWMR_MDHDR_MIN_MAX_LAG, epoch <= tick <= VFDSWMR_TICK_MAX (EFIELD), index_offset >=
 * VFDSWMR_MDHDR_SIZE and a multiple of 8 (EBOUNDS), index_length ==
 * vfdswmr_mdidx_size(n, m) for some n, m (ELENGTH), offset + length does not
 * overflow (EBOUNDS).
 */
vfdswmr_mderr_t vfdswmr_mdhdr_decode(const uint8_t *buf, size_t len, vfdswmr_mdhdr_t *h);

/* ---- metadata file index ("VIDX") ---------------------------------------- */

/* A run of metadata bytes inside an entry's image: bytes HDF5 last wrote as
 * metadata. The rest of the image is raw data or never-written bytes. */
typedef struct vfdswmr_mdrange_t {
    uint32_t offset; /* from the start of the image */
    uint32_t length; /* >= 1; offset + length <= the entry's length */
} vfdswmr_mdrange_t;

typedef struct vfdswmr_mdentry_t {
    uint64_t hdf5_page;   /* where the entry lives in the HDF5 file, in pages */
    uint64_t md_page;     /* where its image lives in the metadata file, in pages (>= 1) */
    uint32_t length;      /* bytes, >= 1 */
    uint32_t checksum;    /* vfdswmr_checksum() of the image */
    uint32_t range_first; /* its ranges: idx->ranges[range_first .. range_first + nranges) */
    uint32_t nranges;
} vfdswmr_mdentry_t;

typedef struct vfdswmr_mdidx_t {
    uint64_t session;
    uint64_t tick;
    uint32_t nentries;
    vfdswmr_mdentry_t *entries; /* sorted by hdf5_page, no two covering the same HDF5 page */
    uint32_t nranges;
    vfdswmr_mdrange_t *ranges; /* entry by entry, each entry's sorted and disjoint */
} vfdswmr_mdidx_t;

/* Encoded size of an index of n entries and m ranges: 32 + 32 n + 8 m. */
size_t vfdswmr_mdidx_size(uint32_t n, uint32_t m);

/*
 * Is the metadata file whose header is h another HDF5 file's, for one whose
 * inode is `actual` (0: this opener cannot tell)? h->hdf5_id 0 says its
 * writer could not stat the file (family member names), or is tick 0,
 * written before the writer opened the HDF5 file: it matches only an
 * opener that cannot tell either, or as tick 0 with an empty index (nothing
 * to read from or to restore). A header that names no file is never
 * permission to use it on one.
 */
bool vfdswmr_hdf5_id_foreign(const vfdswmr_mdhdr_t *h, uint64_t actual);
/* Writes vfdswmr_mdidx_size(idx->nentries, idx->nranges) bytes to out. */
void vfdswmr_mdidx_encode(const vfdswmr_mdidx_t *idx, uint8_t *out);
/*
 * Decodes an index of exactly `len` bytes (len must equal the encoded size of
 * the counts it states: else ELENGTH, or ECOUNT when a count cannot fit).
 * Entry checks need the page size: md_page >= 1, length >= 1,
 * (page + pages(length)) * page_size must not overflow 64 bits (EENTRY),
 * entries strictly increasing by hdf5_page (EUNSORTED) and not overlapping
 * in the HDF5 file (EOVERLAP). Range checks (ERANGE): range_first equals the
 * previous entries' nranges summed, the entries' nranges add up to the
 * index's, and each entry's ranges have length >= 1, end inside the image and
 * strictly increase without overlapping. On success entries and ranges are
 * malloc'd (NULL when there are none); free them with vfdswmr_mdidx_free().
 * On failure both are NULL. Allocates no more than len bytes in all.
 */
vfdswmr_mderr_t vfdswmr_mdidx_decode(const uint8_t *buf, size_t len, uint32_t page_size, vfdswmr_mdidx_t *idx);
/* Free entries and ranges and zero the counts. */
void vfdswmr_mdidx_free(vfdswmr_mdidx_t *idx);

/*
 * The same codec piece by piece, for an index read in place from the
 * metadata file a window at a time (mdfile/mdidx_file.c: crash recovery,
 * whose memory must not follow the index's size). vfdswmr_mdidx_encode and
 * vfdswmr_mdidx_decode are these pieces applied to a whole image, so both
 * ways of reading make the same checks in the same order:
 *  - vfdswmr_mdidx_head_check: the image's length (ESHORT) and signature
 *    (EMAGIC), from its first VFDSWMR_MDIDX_HEAD bytes and its length;
 *  - then the caller checks the checksum over the whole image (ECHECKSUM);
 *  - vfdswmr_mdidx_head_decode: page size and counts, session and tick (v's
 *    entries and ranges NULL);
 *  - vfdswmr_mdidx_walk_entry for every entry in order, then
 *    vfdswmr_mdidx_walk_end (the ranges accounted for);
 *  - vfdswmr_mdidx_range_decode for every range of every entry in order,
 *    *next 0 at each entry's first.
 * vfdswmr_mdidx_entry_decode is an entry's own field checks alone (EENTRY);
 * *hdf5_end gets the page after its last.
 */
#define VFDSWMR_MDIDX_HEAD  28u /* signature, session, tick, nentries, nranges */
#define VFDSWMR_MDIDX_ENTRY 32u
#define VFDSWMR_MDIDX_RANGE 8u
typedef struct vfdswmr_mdidx_walk_t {
    uint32_t page_size, nranges;
    uint32_t seen;       /* entries walked */
    uint32_t next_range; /* their nranges summed */
    uint64_t prev_page;  /* hdf5_page of the last one */
    uint64_t run_next;   /* first HDF5 page the next may start at */
} vfdswmr_mdidx_walk_t;
void vfdswmr_mdidx_head_encode(uint64_t session, uint64_t tick, uint32_t n, uint32_t m,
                               uint8_t out[VFDSWMR_MDIDX_HEAD]);
void vfdswmr_mdidx_entry_encode(const vfdswmr_mdentry_t *e, uint8_t out[VFDSWMR_MDIDX_ENTRY]);
void vfdswmr_mdidx_range_encode(const vfdswmr_mdrange_t *r, uint8_t out[VFDSWMR_MDIDX_RANGE]);
vfdswmr_mderr_t vfdswmr_mdidx_head_check(const uint8_t *buf, uint64_t len);
vfdswmr_mderr_t vfdswmr_mdidx_head_decode(const uint8_t *buf, uint64_t len, uint32_t page_size, vfdswmr_mdidx_t *v);
void vfdswmr_mdidx_walk_begin(vfdswmr_mdidx_walk_t *w, uint32_t page_size, uint32_t nranges);
vfdswmr_mderr_t vfdswmr_mdidx_walk_entry(vfdswmr_mdidx_walk_t *w, const uint8_t *p, vfdswmr_mdentry_t *e);
vfdswmr_mderr_t vfdswmr_mdidx_walk_end(const vfdswmr_mdidx_walk_t *w);
vfdswmr_mderr_t vfdswmr_mdidx_entry_decode(const uint8_t *p, uint32_t page_size, vfdswmr_mdentry_t *e,
                                           uint64_t *hdf5_end);
vfdswmr_mderr_t vfdswmr_mdidx_range_decode(const uint8_t *p, const vfdswmr_mdentry_t *e, uint64_t *next,
                                           vfdswmr_mdrange_t *r);

/*
 * The one search of an index: among n entries sorted by hdf5_page and not
 * overlapping in the HDF5 file (as a decoded index, or the writer's, holds
 * them), the first whose HDF5 range ends after `page`; n when there is none.
 * O(log n). The writer uses it to find what a change replaces, the reader
 * (vfdswmr_mdidx_find) to resolve a page.
 */
uint32_t vfdswmr_mdidx_search(const vfdswmr_mdentry_t *entries, uint32_t n, uint32_t page_size, uint64_t page);
/* The entry of idx whose HDF5 range covers `page`, or NULL. O(log n). */
const vfdswmr_mdentry_t *vfdswmr_mdidx_find(const vfdswmr_mdidx_t *idx, uint32_t page_size, uint64_t page);

/*
 * The two index slots in the reserved pages (ping-pong): slot size
 * ((reserved_pages x page_size - VFDSWMR_MDHDR_SIZE) / 2) rounded down to a
 * multiple of 8; slot 0 at VFDSWMR_MDHDR_SIZE, slot 1 right after slot 0.
 */
uint64_t vfdswmr_mdidx_slot_size(uint32_t reserved_pages, uint32_t page_size);
uint64_t vfdswmr_mdidx_slot_offset(unsigned slot, uint32_t reserved_pages, uint32_t page_size);

/* ---- updater file header ("VUDH"), at offset 0 of an updater file ------- */
#define VFDSWMR_UDHDR_SIZE     56
#define VFDSWMR_UD_CREATE_ONLY 0x0001u /* create an empty metadata file; only with sequence 0, no change list */
#define VFDSWMR_UD_FINAL       0x0002u /* last updater: apply, then remove the metadata file */
typedef struct vfdswmr_udhdr_t {
    uint16_t flags;
    uint32_t page_size;
    uint64_t session;
    uint64_t sequence; /* 0, 1, 2, ... as in the file name <base>.<sequence> */
    uint64_t tick;
    uint64_t cl_offset; /* bytes; 0 with CREATE_ONLY, else VFDSWMR_UDHDR_SIZE */
    uint64_t cl_length; /* bytes; 0 with CREATE_ONLY, else vfdswmr_udcl_size(n) */
} vfdswmr_udhdr_t;

void vfdswmr_udhdr_encode(const vfdswmr_udhdr_t *h, uint8_t out[VFDSWMR_UDHDR_SIZE]);
/* Also checks flags (unknown bits: ERESERVED; CREATE_ONLY with a sequence
 * other than 0, or with a change list, or together with FINAL: EFLAGS),
 * tick and sequence <= VFDSWMR_TICK_MAX (EFIELD) and cl_offset/cl_length
 * (EBOUNDS unless as documented above). */
vfdswmr_mderr_t vfdswmr_udhdr_decode(const uint8_t *buf, size_t len, vfdswmr_udhdr_t *h);

/* ---- updater change list ("VUCL") --------------------------------------- */
typedef struct vfdswmr_udentry_t {
    uint64_t ud_page;   /* where the image lives in the updater file, in pages */
    uint64_t md_page;   /* where it goes in the metadata file, in pages (>= 1) */
    uint64_t hdf5_page; /* where it lives in the HDF5 file, in pages */
    uint32_t length;    /* bytes, >= 1 */
    uint32_t checksum;  /* of the image */
} vfdswmr_udentry_t;

typedef struct vfdswmr_udcl_t {
    uint64_t tick;
    uint64_t hdr_ud_page;   /* the metadata file header image, in the updater file */
    uint32_t hdr_len;       /* == VFDSWMR_MDHDR_SIZE */
    uint32_t hdr_checksum;  /* of that image */
    uint64_t idx_ud_page;   /* the metadata file index image, in the updater file */
    uint64_t idx_md_offset; /* where it goes in the metadata file, bytes */
    uint32_t idx_len;
    uint32_t idx_checksum;
    uint32_t nentries;
    vfdswmr_udentry_t *entries; /* strictly increasing ud_page, not overlapping */
} vfdswmr_udcl_t;

size_t vfdswmr_udcl_size(uint32_t n);
void vfdswmr_udcl_encode(const vfdswmr_udcl_t *cl, uint8_t *out);
/*
 * Decodes a change list of exactly `len` bytes that belongs to an updater
 * file of `file_len` bytes with the given page size: every image (entries,
 * index, header) must lie inside the file, after the header and change list
 * (EBOUNDS), entries strictly increasing by ud_page (EUNSORTED) and not
 * overlapping each other (EOVERLAP), the index and header images after the
 * last entry and not overlapping (EOVERLAP), hdr_len == VFDSWMR_MDHDR_SIZE
 * and idx_len == vfdswmr_mdidx_size(n, m) for some n, m (ELENGTH), idx_md_offset
 * valid as the header's index_offset (EBOUNDS), md_page >= 1 and
 * length >= 1 (EENTRY), no offset x page size overflow (EENTRY). Entries
 * are malloc'd as for the index.
 */
vfdswmr_mderr_t vfdswmr_udcl_decode(const uint8_t *buf, size_t len, uint32_t page_size, uint64_t file_len,
                                    vfdswmr_udcl_t *cl);

/* ---- read-mark table ("VRDM"), "<metadata file>.readers" (marks.h) ------ */
#define VFDSWMR_MARKSHDR_SIZE 64
/* 3: the file holds the kept list past the table (kept.h); readers that
 * do not read it must not mark (they stay unmarked, and a writer keeps no
 * list while an unmarked reader is registered) */
#define VFDSWMR_MARKS_FORMAT_VERSION 3
typedef struct vfdswmr_markshdr_t {
    uint64_t session;       /* the writer session the table belongs to */
    uint64_t release_below; /* marks below this tick are released */
    uint32_t nslots;        /* slots of VFDSWMR_MARKSLOT_SIZE bytes after the header */
} vfdswmr_markshdr_t;
#define VFDSWMR_MARKSLOT_SIZE 16
/* Offset of release_below in the header (rewritten alone, in place). */
#define VFDSWMR_MARKSHDR_RELEASE_OFFSET 16

void vfdswmr_markshdr_encode(const vfdswmr_markshdr_t *h, uint8_t out[VFDSWMR_MARKSHDR_SIZE]);
/* ESHORT, EMAGIC, EVERSION, ERESERVED (reserved bytes not zero), ECOUNT
 * (nslots 0 or more than 65536). No checksum: the header is written once,
 * then only release_below is rewritten, 8 aligned bytes at a time. */
vfdswmr_mderr_t vfdswmr_markshdr_decode(const uint8_t *buf, size_t len, vfdswmr_markshdr_t *h);
/* ---- raw-data write log ("VRAW"), "<metadata file>.raw" (rawlog.h) ------- */
#define VFDSWMR_RAWLOG_FORMAT_VERSION 1
#define VFDSWMR_RAWLOG_HDR_SIZE       36 /* before the ranges */
#define VFDSWMR_RAWRANGE_SIZE         24
/* The most ranges a log may hold (the decoder refuses more). */
#define VFDSWMR_RAWLOG_MAX 65536
typedef struct vfdswmr_rawloghdr_t {
    uint64_t session;    /* the writer session */
    uint64_t first_tick; /* every write of ticks first_tick .. last_tick is listed */
    uint64_t last_tick;  /* the tick whose publish the log was written for */
    uint32_t count;      /* ranges that follow */
} vfdswmr_rawloghdr_t;
typedef struct vfdswmr_rawrange_t {
    uint64_t tick; /* the tick that published the write */
    uint64_t addr; /* first byte written in the HDF5 file */
    uint64_t len;  /* bytes; >= 1 */
} vfdswmr_rawrange_t;
/* Bytes of a log with n ranges (checksum included). */
size_t vfdswmr_rawlog_size(uint32_t n);
/* out holds vfdswmr_rawlog_size(h->count) bytes. */
void vfdswmr_rawlog_encode(const vfdswmr_rawloghdr_t *h, const vfdswmr_rawrange_t *r, uint8_t *out);
/* ESHORT, EMAGIC, EVERSION, ECOUNT (count over VFDSWMR_RAWLOG_MAX or the
 * buffer), ECHECKSUM, ETICK (first_tick > last_tick + 1, or a range's tick
 * outside them), ERANGE (a range of length 0 or past 2^64). len may exceed
 * the log (a longer earlier log under it). *r is malloc'd (NULL when count
 * is 0); the caller frees it. */
vfdswmr_mderr_t vfdswmr_rawlog_decode(const uint8_t *buf, size_t len, vfdswmr_rawloghdr_t *h, vfdswmr_rawrange_t **r);

/* ---- kept old bytes ("VKPT"), in "<metadata file>.readers" (kept.h) ------ */
#define VFDSWMR_KEPT_FORMAT_VERSION 1
#define VFDSWMR_KEPT_HDR_SIZE       20 /* before the entries */
#define VFDSWMR_KEPT_ENTRY_SIZE     32
/* The most entries a list may hold (the decoder refuses more). */
#define VFDSWMR_KEPT_MAX 64
typedef struct vfdswmr_kepthdr_t {
    uint64_t session; /* the writer session */
    uint32_t count;   /* entries that follow */
} vfdswmr_kepthdr_t;
typedef struct vfdswmr_keptent_t {
    uint64_t addr; /* first byte of the HDF5 file's freed space */
    uint64_t len;  /* bytes; >= 1 */
    uint64_t tick; /* snapshots of ticks below this read [addr, addr + len) here */
    uint64_t data; /* where the bytes are, a byte offset in the same file */
} vfdswmr_keptent_t;
/* Bytes of a list with n entries (checksum included). */
size_t vfdswmr_kept_size(uint32_t n);
/* out holds vfdswmr_kept_size(h->count) bytes; h->count <= VFDSWMR_KEPT_MAX. */
void vfdswmr_kept_encode(const vfdswmr_kepthdr_t *h, const vfdswmr_keptent_t *e, uint8_t *out);
/* ESHORT, EMAGIC, EVERSION, ECOUNT (count over VFDSWMR_KEPT_MAX or the
 * buffer), ECHECKSUM, ETICK (a tick over VFDSWMR_TICK_MAX, or ticks going
 * down), ERANGE (an entry of length 0, past 2^63, or with its bytes below
 * `data_min` or past 2^63). len may exceed the list. e holds
 * VFDSWMR_KEPT_MAX entries. */
vfdswmr_mderr_t vfdswmr_kept_decode(const uint8_t *buf, size_t len, uint64_t data_min, vfdswmr_kepthdr_t *h,
                                    vfdswmr_keptent_t *e);

#endif
