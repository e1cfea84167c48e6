/* The default view, --pages and --watch of vfd_swmr_inspect; see inspect.h
 * and the man page for the JSON schema. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "inspect.h"

/* The reader's lag behind the newest snapshot, in ticks of the tick clock
 * (tick counts, epochs): what max_lag and the read marks count. */
static uint64_t
lag_of(const insp_t *s, const insp_mark_t *m)
{
    return s->hdr.epoch > m->epoch ? s->hdr.epoch - m->epoch : 0;
}

/* Has the writer released the reader's mark (marks.h: it stalled for
 * VFDSWMR_MARK_RELEASE_FACTOR x max_lag ticks)? Then the writer no longer
 * keeps its snapshot, and its next read fails with "fell behind". */
static bool
released(const insp_t *s, const insp_mark_t *m)
{
    return m->epoch < s->release_below;
}

/* The bytes of the metadata file the newest snapshot does not use: its
 * header, its index and its images (whole pages each) aside. */
static uint64_t
unused_bytes(const insp_t *s)
{
    uint64_t used = VFDSWMR_MDHDR_SIZE + s->hdr.index_length;

    for (uint32_t i = 0; i < s->snap.idx.nentries; i++)
        used += vfdswmr_pages(s->snap.idx.entries[i].length, s->hdr.page_size) * s->hdr.page_size;
    return s->md_size > used ? s->md_size - used : 0;
}

static const char *
publish_mode(const insp_t *s)
{
    /* publishes at a flush advance the tick but not the tick count (epoch) */
    return s->hdr.tick > s->hdr.epoch ? "flush" : "tick or unknown";
}

/* The recovery command, the configuration shell-quoted. */
static void
recover_command(const insp_opts_t *o, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "vfd_swmr_recover ");
    const char *parts[2] = {o->config_text, o->file};

    for (int k = 0; k < 2; k++) {
        const char *p = parts[k];
        if (p == NULL || *p == '\0')
            continue;
        if (k == 0 && n < len)
            n += (size_t)snprintf(out + n, len - n, "--config ");
        if (n < len)
            out[n++] = '\'';
        for (; *p && n + 5 < len; p++) {
            if (*p == '\'') {
                memcpy(out + n, "'\\''", 4);
                n += 4;
            }
            else
                out[n++] = *p;
        }
        if (n + 2 < len) {
            out[n++] = '\'';
            out[n++] = k == 0 ? ' ' : '\0';
        }
    }
    out[len - 1] = '\0';
}

static void
json_u64_or_null(FILE *f, bool have, uint64_t v)
{
    if (have)
        fprintf(f, "%" PRIu64, v);
    else
        fputs("null", f);
}

static void
json_marks(FILE *f, const insp_t *s)
{
    fputc('[', f);
    for (unsigned i = 0; i < s->nmarks; i++)
        fprintf(f, "%s{\"slot\": %u, \"epoch\": %" PRIu64 ", \"lag\": %" PRIu64 ", \"released\": %s}", i ? ", " : "",
                s->marks[i].slot, s->marks[i].epoch, lag_of(s, &s->marks[i]),
                released(s, &s->marks[i]) ? "true" : "false");
    fputc(']', f);
}

/* readers.registered: the count, or null when it cannot be counted */
static void
json_registered(FILE *f, const insp_t *s)
{
    if (s->registered >= 0)
        fprintf(f, "%ld", s->registered);
    else
        fputs("null", f);
}

static void
show_json(const insp_opts_t *o, const insp_t *s)
{
    FILE *f = stdout;
    bool h = s->have_hdr && !s->foreign;
    char cmd[8192];

    out_begin(f, o, s);
    fprintf(f, ", \"writer\": {\"state\": \"%s\", \"lock_held\": %s, \"message\": ", s->state,
            s->h5_locked || s->md_locked ? "true" : "false");
    out_str(f, s->message);
    fputs("}, \"session\": ", f);
    if (h)
        out_session(f, s->hdr.session);
    else
        fputs("null", f);
    fputs(", \"format_version\": ", f);
    json_u64_or_null(f, h, VFDSWMR_FORMAT_VERSION);
    fputs(", \"page_size\": ", f);
    json_u64_or_null(f, h, s->hdr.page_size);
    fputs(", \"tick_len\": ", f);
    json_u64_or_null(f, h, s->hdr.tick_len);
    fputs(", \"max_lag\": ", f);
    json_u64_or_null(f, h, s->hdr.max_lag);
    fputs(", \"publish\": ", f);
    if (h)
        fprintf(f, "\"%s\"", publish_mode(s));
    else
        fputs("null", f);
    fputs(", \"tick\": ", f);
    json_u64_or_null(f, h, s->hdr.tick);
    fputs(", \"epoch\": ", f);
    json_u64_or_null(f, h, s->hdr.epoch);
    fputs(", \"published_age_s\": ", f);
    if (h && s->have_age)
        fprintf(f, "%.3f", s->age_s);
    else
        fputs("null", f);
    fputs(", \"eoa\": ", f);
    json_u64_or_null(f, h, s->hdr.eoa);
    fputs(", \"index\": ", f);
    if (h && s->have_snap)
        fprintf(f,
                "{\"entries\": %" PRIu32 ", \"ranges\": %" PRIu32 ", \"offset\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
                s->snap.idx.nentries, s->snap.idx.nranges, s->hdr.index_offset, s->hdr.index_length);
    else
        fputs("null", f);
    fputs(", \"md_size\": ", f);
    json_u64_or_null(f, s->md_fd >= 0, s->md_size);
    fputs(", \"md_unused_bytes\": ", f);
    json_u64_or_null(f, h && s->have_snap, h && s->have_snap ? unused_bytes(s) : 0);
    fputs(", \"rawlog\": ", f);
    if (h && s->have_rawlog)
        fprintf(f, "{\"first_tick\": %" PRIu64 ", \"last_tick\": %" PRIu64 ", \"ranges\": %" PRIu32 "}",
                s->raw.first_tick, s->raw.last_tick, s->raw.count);
    else
        fputs("null", f);
    fputs(", \"readers\": ", f);
    if (h && s->have_readers) {
        fputs("{\"registered\": ", f);
        json_registered(f, s);
        fputs(", \"marked\": ", f);
        json_marks(f, s);
        fprintf(f, ", \"unmarked\": %u, \"release_below\": %" PRIu64 "}", s->unmarked, s->release_below);
    }
    else if (s->registered >= 0 || s->shared) { /* no read-mark table: registered (null when shared) only */
        fputs("{\"registered\": ", f);
        json_registered(f, s);
        fputs(", \"marked\": [], \"unmarked\": 0, \"release_below\": 0}", f);
    }
    else
        fputs("null", f);
    fputs(", \"recovery\": ", f);
    if (s->have_recovery) {
        recover_command(o, cmd, sizeof cmd);
        fputs("{\"refused\": ", f);
        if (s->refused[0])
            out_str(f, s->refused);
        else
            fputs("null", f);
        fprintf(f,
                ", \"tick\": %" PRIu64 ", \"pages\": %" PRIu32 ", \"bytes\": %" PRIu64 ", \"eoa\": %" PRIu64
                ", \"command\": ",
                s->rep.tick, s->rep.pages, s->rep.bytes, s->rep.eoa);
        out_str(f, cmd);
        fputc('}', f);
    }
    else
        fputs("null", f);
    fputs("}\n", f);
}

static void
show_text(const insp_opts_t *o, const insp_t *s)
{
    FILE *f = stdout;
    bool h = s->have_hdr && !s->foreign;
    char cmd[8192];

    out_line(f, "file:           %s", o->file);
    if (s->md_fd >= 0) {
        char unused[64] = "";
        if (h && s->have_snap)
            snprintf(unused, sizeof unused, ", %" PRIu64 " not used by the newest snapshot", unused_bytes(s));
        out_line(f, "metadata file:  %s (%" PRIu64 " bytes%s)", s->md_path, s->md_size, unused);
    }
    else
        out_line(f, "metadata file:  none at %s", s->md_path);
    out_line(f, "writer:         %s: %s", s->state, s->message);
    if (h) {
        fprintf(f, "session:        %016" PRIx64 "\n", s->hdr.session);
        fprintf(f,
                "configuration:  format %d, page size %" PRIu32 ", tick_len %" PRIu32 " (%.1f s), max_lag %" PRIu32
                ", publish: %s\n",
                VFDSWMR_FORMAT_VERSION, s->hdr.page_size, s->hdr.tick_len, s->hdr.tick_len / 10.0, s->hdr.max_lag,
                publish_mode(s));
        fprintf(f, "newest tick:    %" PRIu64 " (tick count %" PRIu64 ")", s->hdr.tick, s->hdr.epoch);
        if (s->have_age)
            fprintf(f, ", published %.1f s ago", s->age_s);
        fprintf(f, "\nend of file:    %" PRIu64 " (allocated, in that snapshot)\n", s->hdr.eoa);
        if (s->have_snap)
            fprintf(f,
                    "index:          %" PRIu32 " pages (%" PRIu32 " metadata ranges), %" PRIu64
                    " bytes at offset %" PRIu64 "\n",
                    s->snap.idx.nentries, s->snap.idx.nranges, s->hdr.index_length, s->hdr.index_offset);
        else
            out_line(f, "index:          cannot be read: %s", s->load_err);
        if (s->have_rawlog)
            fprintf(f, "raw-data log:   ticks %" PRIu64 "..%" PRIu64 ", %" PRIu32 " writes\n", s->raw.first_tick,
                    s->raw.last_tick, s->raw.count);
        else
            fprintf(f, "raw-data log:   none (made when a reader first registers)\n");
    }
    fprintf(f, "readers:        ");
    if (s->registered >= 0)
        fprintf(f, "%ld registered", s->registered);
    else if (s->shared)
        fprintf(f, "registered: cannot be counted (one or more on the shared registration byte)");
    else
        fprintf(f, "registered: cannot be counted");
    if (h && s->have_readers) {
        fprintf(f, "; %u with read marks", s->nmarks);
        if (s->unmarked)
            fprintf(f, ", %u starting", s->unmarked);
        fputc('\n', f);
        for (unsigned i = 0; i < s->nmarks; i++)
            fprintf(f,
                    "  slot %u: holds a snapshot of tick count %" PRIu64 ": %" PRIu64 " tick%s behind (max_lag %" PRIu32
                    ")%s\n",
                    s->marks[i].slot, s->marks[i].epoch, lag_of(s, &s->marks[i]),
                    lag_of(s, &s->marks[i]) == 1 ? "" : "s", s->hdr.max_lag,
                    released(s, &s->marks[i]) ? "; released: the writer no longer keeps its snapshot, its next read "
                                                "fails with \"fell behind\""
                                              : "");
    }
    else if (h)
        fprintf(f, "; no read-mark table (the first reader that needs one makes it)\n");
    else
        fputc('\n', f);
    if (s->have_recovery) {
        recover_command(o, cmd, sizeof cmd);
        if (s->refused[0])
            out_line(f, "recovery:       would refuse: %s", s->refused);
        else {
            fprintf(f,
                    "recovery:       would restore tick %" PRIu64 ": %" PRIu32 " pages (%" PRIu64
                    " bytes of metadata), end of file %" PRIu64 "\n",
                    s->rep.tick, s->rep.pages, s->rep.bytes, s->rep.eoa);
            out_line(f, "                run: %s", cmd);
        }
    }
}

int
insp_show(const insp_opts_t *o, insp_t *s)
{
    if (o->json)
        show_json(o, s);
    else
        show_text(o, s);
    /* a metadata file that is another file's, or cannot be read, is a problem: the view, and a line on stderr */
    if (s->foreign || (s->md_fd >= 0 && !s->have_snap)) {
        out_line(stderr, PROG ": %s: %s", o->file,
                 s->foreign || !s->have_hdr ? s->message
                 : s->load_err[0]           ? s->load_err
                                            : "cannot be read");
        return 1;
    }
    return 0;
}

int
insp_pages(const insp_opts_t *o, insp_t *s)
{
    FILE *f = stdout;
    const vfdswmr_mdidx_t *x = &s->snap.idx;
    uint32_t ps = s->hdr.page_size;

    if (!s->have_snap || s->foreign) {
        out_line(stderr, PROG ": %s: no index to show: %s", o->file,
                 s->md_fd < 0 ? "no metadata file"
                 : s->foreign ? s->message
                              : s->load_err);
        return 1;
    }
    if (o->json) {
        fputs("{\"schema\": 1, \"file\": ", f);
        out_str(f, o->file);
        fputs(", \"metadata_file\": ", f);
        out_str(f, s->md_path);
        fputs(", \"session\": ", f);
        out_session(f, s->hdr.session);
        fprintf(f, ", \"tick\": %" PRIu64 ", \"page_size\": %" PRIu32 ", \"entries\": [", s->hdr.tick, ps);
    }
    else
        fprintf(f,
                "index of tick %" PRIu64 ", session %016" PRIx64 ", page size %" PRIu32 ": %" PRIu32 " entries\n"
                "%12s %14s %14s %10s %9s  metadata ranges (offset+length)\n",
                s->hdr.tick, s->hdr.session, ps, x->nentries, "hdf5 page", "hdf5 address", "md offset", "length",
                "checksum");
    for (uint32_t i = 0; i < x->nentries; i++) {
        const vfdswmr_mdentry_t *e = &x->entries[i];
        if (o->json)
            fprintf(f,
                    "%s{\"hdf5_page\": %" PRIu64 ", \"hdf5_addr\": %" PRIu64 ", \"md_offset\": %" PRIu64
                    ", \"length\": %" PRIu32 ", \"checksum\": \"%08" PRIx32 "\", \"ranges\": [",
                    i ? ", " : "", e->hdf5_page, e->hdf5_page * ps, e->md_page * ps, e->length, e->checksum);
        else
            fprintf(f, "%12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu32 "  %08" PRIx32 " ", e->hdf5_page,
                    e->hdf5_page * ps, e->md_page * ps, e->length, e->checksum);
        for (uint32_t k = 0; k < e->nranges; k++) {
            const vfdswmr_mdrange_t *r = &x->ranges[e->range_first + k];
            if (o->json)
                fprintf(f, "%s[%" PRIu32 ", %" PRIu32 "]", k ? ", " : "", r->offset, r->length);
            else
                fprintf(f, " %" PRIu32 "+%" PRIu32, r->offset, r->length);
        }
        fputs(o->json ? "]}" : "\n", f);
    }
    if (o->json)
        fputs("]}\n", f);
    return 0;
}

static volatile sig_atomic_t stop_watch;

static void
on_signal(int sig)
{
    (void)sig;
    stop_watch = 1;
}

/* Pages of s's index whose image is not the one prev (the previous
 * line's index) had: what was published in between. */
static uint32_t
published(const insp_t *s, const vfdswmr_mdidx_t *prev)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < s->snap.idx.nentries; i++) {
        const vfdswmr_mdentry_t *e = &s->snap.idx.entries[i];
        const vfdswmr_mdentry_t *p = vfdswmr_mdidx_find(prev, s->hdr.page_size, e->hdf5_page);
        n += p == NULL || p->hdf5_page != e->hdf5_page || p->md_page != e->md_page || p->length != e->length ||
             p->checksum != e->checksum;
    }
    return n;
}

static void
watch_line(const insp_opts_t *o, const insp_t *s, double interval, long npub)
{
    FILE *f = stdout;
    struct timespec now;
    bool h = s->have_hdr && !s->foreign;

    clock_gettime(CLOCK_REALTIME, &now);
    if (o->json) {
        fprintf(f, "{\"schema\": 1, \"time\": %.3f, \"state\": \"%s\", \"session\": ",
                (double)now.tv_sec + now.tv_nsec * 1e-9, s->state);
        if (h)
            out_session(f, s->hdr.session);
        else
            fputs("null", f);
        fputs(", \"tick\": ", f);
        json_u64_or_null(f, h, s->hdr.tick);
        fputs(", \"epoch\": ", f);
        json_u64_or_null(f, h, s->hdr.epoch);
        fputs(", \"entries\": ", f);
        json_u64_or_null(f, h && s->have_snap, s->snap.idx.nentries);
        fputs(", \"published\": ", f);
        json_u64_or_null(f, h && npub >= 0, (uint64_t)npub);
        fputs(", \"interval_s\": ", f);
        if (interval >= 0)
            fprintf(f, "%.3f", interval);
        else
            fputs("null", f);
        fputs(", \"readers\": ", f);
        json_marks(f, s);
        fputs("}\n", f);
    }
    else {
        struct tm tm;
        char when[32];
        localtime_r(&now.tv_sec, &tm);
        strftime(when, sizeof when, "%H:%M:%S", &tm);
        fprintf(f, "%s.%03ld %-8s", when, now.tv_nsec / 1000000, s->state);
        if (!h)
            fputs(" (no session)", f);
        else {
            fprintf(f, " tick %" PRIu64 " (count %" PRIu64 ")", s->hdr.tick, s->hdr.epoch);
            if (s->have_snap)
                fprintf(f, ", %" PRIu32 " pages", s->snap.idx.nentries);
            if (npub >= 0)
                fprintf(f, " (%ld new)", npub);
        }
        if (interval >= 0)
            fprintf(f, ", +%.2f s", interval);
        if (s->registered >= 0)
            fprintf(f, ", %ld readers", s->registered);
        for (unsigned i = 0; i < s->nmarks; i++)
            fprintf(f, "%s slot %u lag %" PRIu64 "%s", i ? "," : ":", s->marks[i].slot, lag_of(s, &s->marks[i]),
                    released(s, &s->marks[i]) ? " (released)" : "");
        fputc('\n', f);
    }
    fflush(f);
}

int
insp_watch(const insp_opts_t *o, insp_t *s, double seconds)
{
    struct sigaction sa = {.sa_handler = on_signal};
    double start = vfdswmr_now(), last = -1;
    uint64_t tick = UINT64_MAX, session = 0;
    const char *state = NULL;
    vfdswmr_mdidx_t prev = {0}; /* the previous line's index (entries only) */
    bool have_prev = false;

    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (!stop_watch && (seconds <= 0 || vfdswmr_now() - start < seconds)) {
        bool h = s->have_hdr && !s->foreign;
        uint64_t t = h ? s->hdr.tick : UINT64_MAX, sess = h ? s->hdr.session : 0;
        if (t != tick || sess != session || state == NULL || strcmp(state, s->state) != 0) {
            double now = vfdswmr_now();
            long npub = -1;
            if (h && s->have_snap) {
                if (have_prev && sess == session) /* the first line, or a new session's: nothing to compare with */
                    npub = (long)published(s, &prev);
                free(prev.entries);
                prev = (vfdswmr_mdidx_t){.nentries = s->snap.idx.nentries};
                prev.entries = malloc(((size_t)prev.nentries + 1) * sizeof *prev.entries);
                if ((have_prev = prev.entries != NULL))
                    memcpy(prev.entries, s->snap.idx.entries, (size_t)prev.nentries * sizeof *prev.entries);
            }
            watch_line(o, s, last < 0 ? -1 : now - last, npub);
            last = now;
            tick = t;
            session = sess;
            state = s->state;
        }
        struct timespec nap = {0, 20 * 1000 * 1000}; /* a poll every 20 ms: a tick is 100 ms or more */
        nanosleep(&nap, NULL);
        insp_restate(o, s);
    }
    free(prev.entries);
    return 0;
}
