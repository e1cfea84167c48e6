/*
 * --verify: every structure of a session's files decoded and every checksum
 * checked, through the formats' one decoder each (mdfile/format.h). A
 * live writer replaces structures while they are read (a new header and
 * index each publish, images freed max_lag ticks after they left the
 * index): when something fails and the newest tick moved meanwhile, the
 * whole check runs again on the newer snapshot (a few times), so only what
 * stays wrong is reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inspect.h"
#include "io.h"
#include "kept.h"
#include "le.h"
#include "marks.h"
#include "mdidx_file.h"
#include "rawlog.h"
#include "safefile.h"

typedef struct {
    insp_list_t problems, notes;
    unsigned header, index, images, readers, kept, rawlog;
} result_t;

static void
result_free(result_t *r)
{
    list_free(&r->problems);
    list_free(&r->notes);
    *r = (result_t){0};
}

/* The index slot that is not the current index's (the previous index, or one
 * being written), where the configuration's md_pages_reserved puts it. */
static void
other_slots(const insp_opts_t *o, const insp_t *s, result_t *r)
{
    uint32_t ps = s->hdr.page_size, reserved = o->cfg.md_pages_reserved;
    uint64_t size = vfdswmr_mdidx_slot_size(reserved, ps);
    uint8_t head[VFDSWMR_MDIDX_HEAD];

    for (unsigned slot = 0; slot < 2; slot++) {
        uint64_t off = vfdswmr_mdidx_slot_offset(slot, reserved, ps);
        vfdswmr_mdidx_t v = {0};
        vfdswmr_mderr_t rc;
        uint8_t *buf;
        size_t len;

        if (off == s->hdr.index_offset || size < VFDSWMR_MDIDX_HEAD || off + VFDSWMR_MDIDX_HEAD > s->md_size ||
            vfdswmr_pread_all(s->md_fd, head, sizeof head, off) < 0 ||
            vfdswmr_mdidx_head_check(head, size) == VFDSWMR_MD_EMAGIC)
            continue; /* never written (or another layout): nothing there to check */
        r->index++;
        /* its length from the counts it states (VIDX: signature, session, tick, then the two counts);
         * the decoder below checks them as for any index */
        len = vfdswmr_mdidx_size((uint32_t)vfdswmr_le_decode(head + 20, 4), (uint32_t)vfdswmr_le_decode(head + 24, 4));
        if (len > size || off + len > s->md_size || (buf = malloc(len)) == NULL) {
            list_add(&r->notes, s->md_path, "index_slot", off, -1,
                     "the other index slot states a length of %zu bytes, more than the slot or the file holds", len);
            continue;
        }
        if (vfdswmr_pread_all(s->md_fd, buf, len, off) < 0)
            rc = VFDSWMR_MD_EIO;
        else if ((rc = vfdswmr_mdidx_decode(buf, len, ps, &v)) == VFDSWMR_MD_OK) {
            if (v.session != s->hdr.session)
                list_add(&r->notes, s->md_path, "index_slot", off, -1,
                         "the other index slot holds session %016" PRIx64 "'s index (an earlier writer's)", v.session);
            vfdswmr_mdidx_free(&v);
        }
        free(buf);
        if (rc != VFDSWMR_MD_OK)
            list_add(&r->notes, s->md_path, "index_slot", off, -1,
                     "the other index slot (the previous index, or one being written when its writer stopped): %s",
                     vfdswmr_mderr_str(rc));
    }
}

static void
images(const insp_t *s, result_t *r)
{
    int fd = s->md_fd;
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    size_t len = 1u << 20;
    uint8_t *buf = malloc(len);

    if (buf == NULL) {
        list_add(&r->problems, s->md_path, "image", 0, -1, "out of memory");
        return;
    }
    for (uint32_t i = 0; i < s->snap.idx.nentries; i++) {
        const vfdswmr_mdentry_t *e = &s->snap.idx.entries[i];
        vfdswmr_mderr_t rc = vfdswmr_mdr_verify_image(&io, s->hdr.page_size, e, buf, len);
        r->images++;
        if (rc != VFDSWMR_MD_OK)
            list_add(&r->problems, s->md_path, "image", e->md_page * s->hdr.page_size, i,
                     "the image of HDF5 page %" PRIu64 " (%" PRIu32 " bytes): %s%s%s", e->hdf5_page, e->length,
                     vfdswmr_mderr_str(rc), rc == VFDSWMR_MD_EIO ? ": " : "",
                     rc == VFDSWMR_MD_EIO ? strerror(errno) : "");
    }
    free(buf);
}

/* Where a table of n slots ends (marks.h). */
static uint64_t
slots_end(uint32_t n)
{
    return VFDSWMR_MARKSHDR_SIZE + (uint64_t)n * VFDSWMR_MARKSLOT_SIZE;
}

/* The read-mark table and the kept-bytes list after it. */
static void
readers_file(const insp_t *s, result_t *r)
{
    char path[VFDSWMR_MAX_PATH + 128];
    uint8_t b[VFDSWMR_MARKSHDR_SIZE];
    vfdswmr_markshdr_t h;
    vfdswmr_kepthdr_t kh;
    vfdswmr_keptent_t ke[VFDSWMR_KEPT_MAX];
    vfdswmr_mderr_t rc;
    struct stat st = {0};
    int fd;

    if (vfdswmr_marks_name(path, sizeof path, s->md_path) < 0)
        return;
    if ((fd = vfdswmr_open_md(path, O_RDONLY)) < 0) {
        if (!(fd == VFDSWMR_OPEN_FAILED && errno == ENOENT))
            list_add(&r->problems, path, "readers", 0, -1, "cannot be opened: %s", insp_open_error(fd));
        return;
    }
    r->readers++;
    if (vfdswmr_pread_upto(fd, b, sizeof b, 0) < (ssize_t)sizeof b)
        rc = VFDSWMR_MD_ESHORT;
    else
        rc = vfdswmr_markshdr_decode(b, sizeof b, &h);
    if (rc == VFDSWMR_MD_OK && (fstat(fd, &st) < 0 || (uint64_t)st.st_size < slots_end(h.nslots))) {
        list_add(&r->problems, path, "readers", VFDSWMR_MARKSHDR_SIZE, -1,
                 "read-mark table: %" PRIu32 " slots stated, but the file is %lld bytes, short of %" PRIu64, h.nslots,
                 (long long)st.st_size, slots_end(h.nslots));
    }
    else if (rc != VFDSWMR_MD_OK)
        list_add(&r->problems, path, "readers", 0, -1, "read-mark table header: %s", vfdswmr_mderr_str(rc));
    else if (h.session != s->hdr.session)
        list_add(&r->notes, path, "readers", 0, -1,
                 "read-mark table of session %016" PRIx64 ", not the metadata file's (a writer starting or gone)",
                 h.session);
    else {
        r->kept++;
        /* a live writer may be rewriting it: read it again for a while (a tenth of a second), else twice */
        unsigned tries = s->h5_locked || s->md_locked ? 100 : 2;
        if (vfdswmr_kept_read_list_tries(fd, &kh, ke, tries) < 0)
            list_add(&r->problems, path, "kept", VFDSWMR_KEPT_LIST_OFFSET, -1,
                     "the kept-bytes list does not decode (checksum or fields), read %u times", tries);
        else if (kh.count > 0 && kh.session != s->hdr.session)
            list_add(&r->problems, path, "kept", VFDSWMR_KEPT_LIST_OFFSET, -1,
                     "the kept-bytes list is session %016" PRIx64 "'s, in session %016" PRIx64 "'s table", kh.session,
                     s->hdr.session);
    }
    close(fd);
}

static void
rawlog(const insp_t *s, result_t *r)
{
    char why[256], path[VFDSWMR_MAX_PATH + 128];
    vfdswmr_rawloghdr_t h;
    int rc = insp_rawlog(s, &h, why, sizeof why);

    if (rc == 0 || vfdswmr_rawlog_name(path, sizeof path, s->md_path) < 0)
        return;
    r->rawlog++;
    if (rc < 0)
        list_add(&r->problems, path, "rawlog", 0, -1, "raw-data log: %s", why);
    else if (h.session != s->hdr.session)
        list_add(&r->notes, path, "rawlog", 0, -1,
                 "raw-data log of session %016" PRIx64 ", not the metadata file's (an earlier writer's)", h.session);
}

/* The loader's text without the structure's name, which the list names. */
static const char *
unprefixed(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0 ? text + strlen(prefix) : text;
}

/* The index did not load: where, when the in-place reader of recovery
 * (mdfile/mdidx_file.h, the same checks) can name the entry or range at
 * fault; else the loader's words at the index's offset. */
static void
index_problem(const insp_t *s, result_t *r)
{
    vfdswmr_mdidx_file_t x;
    vfdswmr_mderr_t rc = vfdswmr_mdidx_file_open(&x, s->md_fd, &s->hdr);

    if (rc != VFDSWMR_MD_OK && x.bad_entry != UINT32_MAX)
        list_add(&r->problems, s->md_path, "index", s->hdr.index_offset + x.bad_at, x.bad_entry,
                 "index entry %" PRIu32 "%s: %s", x.bad_entry,
                 x.bad_at >= VFDSWMR_MDIDX_HEAD + (uint64_t)x.head.nentries * VFDSWMR_MDIDX_ENTRY
                     ? " (one of its ranges)"
                     : "",
                 vfdswmr_mderr_str(rc));
    else
        list_add(&r->problems, s->md_path, "index", s->hdr.index_offset, -1, "%s", unprefixed(s->load_err, "index: "));
    vfdswmr_mdidx_file_close(&x);
}

static void
check_all(const insp_opts_t *o, const insp_t *s, result_t *r)
{
    if (s->h5_fd < 0)
        list_add(&r->notes, o->file, "file", 0, -1,
                 "the HDF5 file does not exist (its metadata file is checked alone)");
    if (s->md_fd < 0) {
        if (strcmp(s->state, "died") == 0)
            list_add(&r->problems, o->file, "file", 0, -1, "%s", s->refused);
        else
            list_add(&r->notes, s->md_path, "file", 0, -1, "no metadata file: nothing to verify");
        return;
    }
    if (!s->have_hdr) {
        list_add(&r->problems, s->md_path, "header", 0, -1, "%s", unprefixed(s->load_err, "header: "));
        return;
    }
    r->header++;
    if (s->foreign)
        list_add(&r->problems, s->md_path, "header", 0, -1, "%s", s->message);
    if (!s->have_snap) {
        index_problem(s, r);
        return;
    }
    r->index++;
    other_slots(o, s, r);
    images(s, r);
    readers_file(s, r);
    rawlog(s, r);
}

int
insp_verify(const insp_opts_t *o, insp_t *s)
{
    result_t r = {0};
    FILE *f = stdout;
    int rc;

    for (int round = 0;; round++) {
        uint64_t tick = s->have_hdr ? s->hdr.tick : 0;
        bool live = s->h5_locked || s->md_locked;
        check_all(o, s, &r);
        if (r.problems.n == 0 || !live || round == 4)
            break;
        insp_reload(s);
        if (!s->have_hdr || s->hdr.tick == tick)
            break; /* nothing moved: what failed stays failed */
        result_free(&r);
    }
    if (o->json) {
        out_begin(f, o, s);
        fprintf(f,
                ", \"ok\": %s, \"checked\": {\"header\": %u, \"index\": %u, \"images\": %u, \"readers\": %u, "
                "\"kept\": %u, \"rawlog\": %u}, \"problems\": ",
                r.problems.n ? "false" : "true", r.header, r.index, r.images, r.readers, r.kept, r.rawlog);
        list_json(f, &r.problems);
        fputs(", \"notes\": ", f);
        list_json(f, &r.notes);
        fputs("}\n", f);
    }
    else {
        fprintf(
            f,
            "checked: %u header, %u index, %u page images, %u read-mark table, %u kept-bytes list, %u raw-data log\n",
            r.header, r.index, r.images, r.readers, r.kept, r.rawlog);
        list_text(f, "problem", &r.problems);
        list_text(f, "note", &r.notes);
        if (r.problems.n)
            fprintf(f, "%zu problem%s found\n", r.problems.n, r.problems.n == 1 ? "" : "s");
        else
            fprintf(f, "no problem found\n");
    }
    rc = r.problems.n ? 1 : 0;
    result_free(&r);
    return rc;
}
