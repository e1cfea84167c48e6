/*
 * --updater: the updater files <base>.<n> of a writer (generate_updater_files),
 * each decoded and verified whole by the format's one decoder
 * (vfdswmr_updater_decode: header, change list, every image's checksum, the
 * embedded metadata file header and index), and the sequence as
 * vfd_swmr_aux would meet it: which numbers are present, which are missing
 * between the first and the last, which are out of order (a header naming
 * another sequence than the file name, a tick not after the previous
 * file's, another session's file among them). Names are classified as
 * vfd_swmr_aux classifies them (aux_classify_name).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aux.h"
#include "inspect.h"
#include "io.h"
#include "safefile.h"
#include "updater.h"

/* Missing sequence numbers listed at most (all are counted). */
#define MAX_LISTED 100000u
/* Updater files larger than this are not read into memory (reported). */
#define MAX_CHECKED ((uint64_t)1 << 30)

typedef struct {
    uint64_t seq, tick, session, size;
    uint16_t flags;
    size_t entries;
    bool decoded;
} ufile_t;

static int
seq_cmp(const void *a, const void *b)
{
    uint64_t x = ((const ufile_t *)a)->seq, y = ((const ufile_t *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Decode and verify one file into *u; problems into l. */
static void
check_file(const char *path, ufile_t *u, insp_list_t *l)
{
    struct stat st;
    vfdswmr_updater_t d;
    vfdswmr_udhdr_t h;
    vfdswmr_mderr_t rc = VFDSWMR_MD_OK;
    uint8_t *buf, hb[VFDSWMR_UDHDR_SIZE];
    int fd = vfdswmr_open_md(path, O_RDONLY);

    if (fd < 0) {
        list_add(l, path, "updater", 0, -1, "cannot be opened: %s", insp_open_error(fd));
        return;
    }
    if (fstat(fd, &st) < 0) {
        list_add(l, path, "updater", 0, -1, "cannot be read: %s", strerror(errno));
        close(fd);
        return;
    }
    u->size = (uint64_t)st.st_size;
    /* the header first: a file that is no updater, or shorter than its header
     * needs, is said without reading (or allocating) the rest */
    ssize_t n = vfdswmr_pread_upto(fd, hb, sizeof hb, 0);
    if (n < 0 || (rc = vfdswmr_udhdr_decode(hb, (size_t)n, &h)) != VFDSWMR_MD_OK ||
        u->size < vfdswmr_updater_size(&h, NULL) || u->size > MAX_CHECKED) {
        if (n < 0)
            list_add(l, path, "updater", 0, -1, "cannot be read: %s", strerror(errno));
        else if (rc != VFDSWMR_MD_OK)
            list_add(l, path, "updater", 0, -1, "header: %s", vfdswmr_mderr_str(rc));
        else if (u->size > MAX_CHECKED)
            list_add(l, path, "updater", 0, -1, "larger than 1 GiB: not checked");
        else
            list_add(l, path, "updater", 0, -1,
                     "%" PRIu64 " bytes, shorter than the %" PRIu64
                     " its header needs (cut short, or still being written)",
                     u->size, vfdswmr_updater_size(&h, NULL));
        close(fd);
        return;
    }
    if ((buf = malloc(u->size ? u->size : 1)) == NULL || vfdswmr_pread_all(fd, buf, u->size, 0) < 0) {
        list_add(l, path, "updater", 0, -1, "cannot be read: %s", buf ? strerror(errno) : "out of memory");
        free(buf);
        close(fd);
        return;
    }
    close(fd);
    if ((rc = vfdswmr_updater_decode(buf, u->size, &d)) != VFDSWMR_MD_OK)
        list_add(l, path, "updater", 0, -1, "%s", vfdswmr_mderr_str(rc));
    else {
        u->decoded = true;
        u->tick = d.hdr.tick;
        u->session = d.hdr.session;
        u->flags = d.hdr.flags;
        u->entries = (d.hdr.flags & VFDSWMR_UD_CREATE_ONLY) ? 0 : d.plan.nimages;
        if (d.hdr.sequence != u->seq)
            list_add(l, path, "updater", 0, -1, "its header says sequence %" PRIu64 ", its name %" PRIu64,
                     d.hdr.sequence, u->seq);
        vfdswmr_updater_free(&d);
    }
    free(buf);
}

static void
json_seqs(FILE *f, const uint64_t *v, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu64, i ? ", " : "", v[i]);
    fputc(']', f);
}

static void
text_seqs(FILE *f, const char *label, const uint64_t *v, size_t n)
{
    fprintf(f, "%-13s", label);
    if (n == 0)
        fputs(" none", f);
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        if (j > i)
            fprintf(f, " %" PRIu64 "-%" PRIu64, v[i], v[j]);
        else
            fprintf(f, " %" PRIu64, v[i]);
        i = j;
    }
    fputc('\n', f);
}

/* Append v to *a (n, cap): false when out of memory. */
static bool
push(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        uint64_t *p = realloc(*a, c * sizeof *p);
        if (p == NULL)
            return false;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return true;
}

int
insp_updaters(const insp_opts_t *o, const char *base)
{
    char path[VFDSWMR_MAX_PATH + 128];
    aux_udir_t *ud = aux_udir_new(base);
    const char *dir, *name;
    ufile_t *files = NULL;
    size_t n = 0, cap = 0, nmiss = 0, cmiss = 0, nout = 0, cout = 0;
    uint64_t missing_total = 0; /* all of them; the list holds the first MAX_LISTED */
    uint64_t *missing = NULL, *out = NULL;
    insp_list_t problems = {0};
    FILE *f = stdout;
    DIR *d;
    struct dirent *de;
    int rc;

    if (ud == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    dir = aux_udir_dir(ud);
    name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    if (*name == '\0') {
        out_line(stderr, PROG ": --updater %s: no base name", base);
        aux_udir_free(ud);
        return -1;
    }
    if ((d = opendir(dir)) == NULL) {
        out_line(stderr, PROG ": cannot read the updater directory %s: %s", dir, strerror(errno));
        aux_udir_free(ud);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        uint64_t seq;
        if (aux_classify_name(name, de->d_name, &seq) != AUX_NAME_UPDATER)
            continue;
        if (n == cap) {
            size_t c = cap ? 2 * cap : 64;
            ufile_t *p = realloc(files, c * sizeof *p);
            if (p == NULL) {
                fprintf(stderr, PROG ": out of memory\n");
                closedir(d);
                free(files);
                aux_udir_free(ud);
                return -1;
            }
            files = p;
            cap = c;
        }
        files[n++] = (ufile_t){.seq = seq};
    }
    closedir(d);
    qsort(files, n, sizeof *files, seq_cmp);
    const ufile_t *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        ufile_t *u = &files[i];
        snprintf(path, sizeof path, "%s/%s.%" PRIu64, dir, name, u->seq);
        if (i)
            missing_total += u->seq - files[i - 1].seq - 1;
        for (uint64_t s = i ? files[i - 1].seq + 1 : u->seq; s < u->seq && nmiss < MAX_LISTED; s++)
            if (!push(&missing, &nmiss, &cmiss, s))
                break;
        size_t before = problems.n;
        check_file(path, u, &problems);
        bool bad_order = problems.n > before && u->decoded; /* the sequence in its header is not its name's */
        if (u->decoded && prev) {
            if (u->session != prev->session) {
                list_add(&problems, path, "updater", 0, -1,
                         "session %016" PRIx64 ", but the files before it are session %016" PRIx64, u->session,
                         prev->session);
                bad_order = true;
            }
            else if (u->tick < prev->tick || (u->tick == prev->tick && !(prev->flags & VFDSWMR_UD_CREATE_ONLY))) {
                list_add(&problems, path, "updater", 0, -1,
                         "tick %" PRIu64 " does not follow the previous file's %" PRIu64, u->tick, prev->tick);
                bad_order = true;
            }
        }
        if (bad_order && !push(&out, &nout, &cout, u->seq))
            break;
        if (u->decoded && !bad_order)
            prev = u; /* the next is compared with the last file in order */
    }
    if (missing_total)
        list_add(&problems, base, "updater", 0, -1,
                 "%" PRIu64 " updater file%s missing between %" PRIu64 " and %" PRIu64 "%s", missing_total,
                 missing_total == 1 ? "" : "s", files[0].seq, files[n - 1].seq,
                 missing_total > nmiss ? " (the first 100000 listed)" : "");
    if (n == 0)
        list_add(&problems, base, "updater", 0, -1, "no updater file %s.<n> in %s", name, dir);
    if (o->json) {
        fputs("{\"schema\": 1, \"base\": ", f);
        out_str(f, base);
        fprintf(f, ", \"ok\": %s, \"present\": [", problems.n ? "false" : "true");
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s%" PRIu64, i ? ", " : "", files[i].seq);
        fputs("], \"missing\": ", f);
        json_seqs(f, missing, nmiss);
        fprintf(f, ", \"missing_count\": %" PRIu64, missing_total);
        fputs(", \"out_of_order\": ", f);
        json_seqs(f, out, nout);
        fputs(", \"files\": [", f);
        for (size_t i = 0, k = 0; i < n; i++) {
            const ufile_t *u = &files[i];
            if (!u->decoded)
                continue;
            fprintf(f, "%s{\"sequence\": %" PRIu64 ", \"tick\": %" PRIu64 ", \"session\": ", k++ ? ", " : "", u->seq,
                    u->tick);
            out_session(f, u->session);
            fprintf(f, ", \"flags\": [%s%s%s], \"entries\": %zu, \"bytes\": %" PRIu64 "}",
                    u->flags & VFDSWMR_UD_CREATE_ONLY ? "\"create_only\"" : "",
                    (u->flags & VFDSWMR_UD_CREATE_ONLY) && (u->flags & VFDSWMR_UD_FINAL) ? ", " : "",
                    u->flags & VFDSWMR_UD_FINAL ? "\"final\"" : "", u->entries, u->size);
        }
        fputs("], \"problems\": ", f);
        list_json(f, &problems);
        fputs("}\n", f);
    }
    else {
        out_line(f, "updater files %s.<n> in %s: %zu", name, dir, n);
        uint64_t *present = calloc(n ? n : 1, sizeof *present);
        if (present) {
            for (size_t i = 0; i < n; i++)
                present[i] = files[i].seq;
            text_seqs(f, "present:", present, n);
            free(present);
        }
        text_seqs(f, "missing:", missing, nmiss);
        text_seqs(f, "out of order:", out, nout);
        if (n && files[n - 1].decoded)
            fprintf(f, "last:          sequence %" PRIu64 ", tick %" PRIu64 ", session %016" PRIx64 "%s\n",
                    files[n - 1].seq, files[n - 1].tick, files[n - 1].session,
                    files[n - 1].flags & VFDSWMR_UD_FINAL ? " (final: the writer closed)" : "");
        list_text(f, "problem", &problems);
        if (problems.n)
            fprintf(f, "%zu problem%s found\n", problems.n, problems.n == 1 ? "" : "s");
        else
            fprintf(f, "no problem found\n");
    }
    rc = problems.n ? 1 : 0;
    list_free(&problems);
    free(files);
    free(missing);
    free(out);
    aux_udir_free(ud);
    return rc;
}
