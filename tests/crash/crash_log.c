/*
 * The crash harness's logs; see crash_log.h.
 */
#include "crash_log.h"

#include "../swmr/swmr_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

FILE *
cl_open_append(const char *path)
{
    FILE *f = fopen(path, "a");

    if (!f)
        swmr_fail("cannot open %s: %s", path, strerror(errno));
    return f;
}

void
cl_line(FILE *f, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    if (fflush(f) == EOF || ferror(f))
        swmr_fail("cannot write a log line: %s", strerror(errno));
}

static void
chomp(char *s)
{
    size_t n = strlen(s);

    if (n && s[n - 1] == '\n')
        s[n - 1] = '\0';
}

void
cl_progress_read(const char *path, cl_progress_t *p)
{
    FILE *f = fopen(path, "r");
    char line[256], what[64], how[16];
    int k, swmr, lineno = 0;
    uint64_t seed;

    memset(p, 0, sizeof *p);
    p->last_begin = p->last_flushed = p->killed_in = -1;
    if (!f)
        swmr_fail("cannot open the progress file %s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n'))
            break; /* a partial last line: the writer died writing it (cannot happen with fflush'd lines) */
        chomp(line);
        if (lineno == 1) {
            if (sscanf(line, "crash-progress seed=%" SCNu64 " mix=%31s swmr=%d", &seed, p->mix, &swmr) != 3)
                swmr_fail("%s: not a progress file (first line '%s')", path, line);
            p->seed = seed;
            p->swmr = swmr != 0;
        }
        else if (sscanf(line, "begin %d %15s", &k, how) == 2) {
            if (k > p->last_begin)
                p->last_begin = k;
            if (!strcmp(how, "close"))
                p->close_begun = true;
        }
        else if (sscanf(line, "flushed %d", &k) == 1) {
            if (k > p->last_flushed)
                p->last_flushed = k;
        }
        else if (sscanf(line, "kill %d %63[^\n]", &k, what) == 2) {
            p->killed_in = k;
            snprintf(p->kill_what, sizeof p->kill_what, "%s", what);
        }
        else if (sscanf(line, "closed %d", &k) == 1)
            p->closed = true;
        else
            swmr_fail("%s:%d: malformed line '%s'", path, lineno, line);
    }
    fclose(f);
    if (lineno == 0)
        swmr_fail("%s is empty", path);
}

void
cl_seen_read(const char *path, cl_seen_t *s)
{
    FILE *f = fopen(path, "r");
    char line[CM_LINELEN + 32], reader[64] = "?", mix[32];
    int lineno = 0;
    uint64_t seed;
    cl_walk_t *w = NULL;
    size_t want = 0;

    if (!f)
        swmr_fail("cannot open the seen log %s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        int n, k;

        lineno++;
        if (!strchr(line, '\n'))
            swmr_fail("%s:%d: an incomplete or overlong line", path, lineno);
        chomp(line);
        if (lineno == 1) {
            if (sscanf(line, "crash-seen seed=%" SCNu64 " mix=%31s reader=%63s", &seed, mix, reader) != 3)
                swmr_fail("%s: not a seen log (first line '%s')", path, line);
            if (s->mix[0] && (seed != s->seed || strcmp(mix, s->mix)))
                swmr_fail("%s: seed %" PRIu64 " mix %s, but other logs have seed %" PRIu64 " mix %s", path, seed, mix,
                          s->seed, s->mix);
            s->seed = seed;
            snprintf(s->mix, sizeof s->mix, "%s", mix);
        }
        else if (!w) {
            if (sscanf(line, "walk %d state %d lines %zu", &n, &k, &want) != 3 || want > 100000)
                swmr_fail("%s:%d: expected a walk record, got '%s'", path, lineno, line);
            if (s->nwalks == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 64;
                s->walks = realloc(s->walks, s->cap * sizeof *s->walks);
                if (!s->walks)
                    swmr_fail("out of memory");
            }
            w = &s->walks[s->nwalks];
            memset(w, 0, sizeof *w);
            snprintf(w->reader, sizeof w->reader, "%s", reader);
            w->walk = n;
            w->state = k;
            w->lines = xcalloc(want ? want : 1, CM_LINELEN);
        }
        else if (w->nlines < want) {
            if (strlen(line) >= CM_LINELEN)
                swmr_fail("%s:%d: line too long", path, lineno);
            snprintf(w->lines[w->nlines++], CM_LINELEN, "%s", line);
        }
        else {
            if (sscanf(line, "end %d", &n) != 1 || n != w->walk)
                swmr_fail("%s:%d: expected 'end %d', got '%s'", path, lineno, w->walk, line);
            s->nwalks++;
            w = NULL;
        }
    }
    fclose(f);
    if (lineno == 0)
        swmr_fail("%s is empty", path);
    if (w)
        swmr_fail("%s: the last walk record (walk %d) is incomplete", path, w->walk);
}

void
cl_seen_free(cl_seen_t *s)
{
    for (size_t i = 0; i < s->nwalks; i++)
        free(s->walks[i].lines);
    free(s->walks);
    memset(s, 0, sizeof *s);
}

long
cl_num(const char *prog, const char *what, const char *s, long lo, long hi)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: --%s %s: expected an integer from %ld to %ld\n", prog, what, s, lo, hi);
        exit(2);
    }
    return v;
}

bool
cl_run_opt(const char *prog, int c, const char *arg, cl_run_t *r)
{
    switch (c) {
    case 'f':
        r->file = arg;
        return true;
    case 'p':
        r->progress = arg;
        return true;
    case 's':
        r->seed = (uint64_t)cl_num(prog, "seed", arg, 0, 4000000000L);
        return true;
    case 'm':
        if (!(r->mix = cm_mix_find(arg))) {
            fprintf(stderr, "%s: --mix %s: unknown mix\n", prog, arg);
            exit(2);
        }
        return true;
    default:
        return false;
    }
}
