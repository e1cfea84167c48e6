/*
 * The part of format.h every structure shares: the descriptions of its
 * errors and the page sizes the formats accept. This file encodes and
 * decodes no structure; the codecs are format_md.c (metadata file header
 * VHDR and index VIDX), format_ud.c (updater file header VUDH and change
 * list VUCL) and format_side.c (read-mark table header VRDM and raw-data
 * write log VRAW), with the helpers they share in format_codec.h.
 *
 * Invariant: every vfdswmr_mderr_t below VFDSWMR_MD_NERRORS has its text in
 * mderr_text.
 */
#include "format.h"

static const char *const mderr_text[VFDSWMR_MD_NERRORS] = {
    [VFDSWMR_MD_OK] = "success",
    [VFDSWMR_MD_ESHORT] = "buffer shorter than the structure (truncated file)",
    [VFDSWMR_MD_EMAGIC] = "wrong signature",
    [VFDSWMR_MD_ECHECKSUM] = "checksum mismatch (torn write or damage)",
    [VFDSWMR_MD_EVERSION] = "unsupported format version",
    [VFDSWMR_MD_EPAGESIZE] = "page size 0, not a power of two, or out of range",
    [VFDSWMR_MD_ERESERVED] = "a reserved field or flag bit is not zero",
    [VFDSWMR_MD_ELENGTH] = "a stated length disagrees with the entry count",
    [VFDSWMR_MD_ECOUNT] = "entry count larger than the buffer can hold",
    [VFDSWMR_MD_EUNSORTED] = "entries not in strictly increasing order",
    [VFDSWMR_MD_EOVERLAP] = "two entries cover the same pages",
    [VFDSWMR_MD_EENTRY] = "an entry is invalid (zero length, in page 0, or its offset overflows)",
    [VFDSWMR_MD_EBOUNDS] = "an offset or length lies outside the file, or is absurd",
    [VFDSWMR_MD_ETICK_AHEAD] = "header and index ticks differ by one, or the index is newer (a write in flight)",
    [VFDSWMR_MD_ETICK] = "tick mismatch",
    [VFDSWMR_MD_ESESSION] = "structures of two writer sessions mixed",
    [VFDSWMR_MD_EFLAGS] = "invalid combination of flags",
    [VFDSWMR_MD_ESEQUENCE] = "updater sequence number not the one expected",
    [VFDSWMR_MD_EIO] = "read or write failed",
    [VFDSWMR_MD_ENOMEM] = "out of memory",
    [VFDSWMR_MD_ERANGE] = "metadata range invalid (empty, outside its image, unsorted or miscounted)",
    [VFDSWMR_MD_EFIELD] =
        "a header field has a value the format forbids (max_lag below 3, epoch after tick, tick above 2^62)",
};

const char *
vfdswmr_mderr_str(vfdswmr_mderr_t err)
{
    if ((unsigned)err >= VFDSWMR_MD_NERRORS || mderr_text[err] == NULL)
        return "unknown metadata format error";
    return mderr_text[err];
}

bool
vfdswmr_mderr_retryable(vfdswmr_mderr_t err)
{
    switch (err) {
    case VFDSWMR_MD_ESHORT:
    case VFDSWMR_MD_EMAGIC:
    case VFDSWMR_MD_ECHECKSUM:
    case VFDSWMR_MD_ETICK_AHEAD:
    case VFDSWMR_MD_ESESSION:
    case VFDSWMR_MD_EBOUNDS:
        return true;
    default:
        return false;
    }
}

bool
vfdswmr_page_size_valid(uint32_t page_size)
{
    return page_size >= VFDSWMR_MIN_PAGE_SIZE && page_size <= VFDSWMR_MAX_PAGE_SIZE &&
           (page_size & (page_size - 1)) == 0;
}
