/*
 * The directory the updater files appear in: which names are updater files,
 * which sequence numbers exist, and which names are garbage.
 *
 * Invariants:
 *  - A name is an updater file exactly when vfdswmr_updater_name() could
 *    have produced it: "<base>.<n>" with n in canonical decimal (no sign,
 *    no leading zero) below 2^64. "<that>.<random>.tmp" (vfdswmr_create_temp)
 *    or "<that>.tmp" (older writers) is an updater being written.
 *  - Names that do not start with "<base>." belong to someone else and are
 *    not even classified as garbage (the HDF5 file often shares the
 *    directory); every other name is garbage, reported once per udir.
 *  - Nothing here opens, changes or removes a file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aux.h"
#include "paths.h"
#include "safefile.h"

struct aux_udir_t {
    char *dir; /* "." when ud_base has no directory part */
    char *base;
    char **garbage; /* sorted, owned */
    size_t ngarbage, cap;
};

/* Canonical decimal of [p, p+len) into *out; false when not canonical or too big. */
static bool
parse_seq(const char *p, size_t len, uint64_t *out)
{
    uint64_t n = 0;

    if (len == 0 || (p[0] == '0' && len > 1))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9 || n > (UINT64_MAX - d) / 10)
            return false;
        n = n * 10 + d;
    }
    *out = n;
    return true;
}

aux_name_kind_t
aux_classify_name(const char *base, const char *name, uint64_t *seq)
{
    size_t blen = strlen(base), len;
    const char *rest, *dot;

    if (strncmp(name, base, blen) != 0 || name[blen] != '.')
        return AUX_NAME_OTHER;
    rest = name + blen + 1;
    len = strlen(rest);
    if (parse_seq(rest, len, seq))
        return AUX_NAME_UPDATER;
    dot = strchr(rest, '.');
    if (dot && parse_seq(rest, (size_t)(dot - rest), seq) && (strcmp(dot, ".tmp") == 0 || vfdswmr_is_temp_suffix(dot)))
        return AUX_NAME_TMP;
    return AUX_NAME_GARBAGE;
}

aux_udir_t *
aux_udir_new(const char *ud_base)
{
    aux_udir_t *d = calloc(1, sizeof *d);

    if (d == NULL)
        return NULL;
    d->dir = vfdswmr_path_dir_dup(ud_base);
    d->base = strdup(vfdswmr_path_base(ud_base));
    if (d->dir == NULL || d->base == NULL) {
        aux_udir_free(d);
        return NULL;
    }
    return d;
}

void
aux_udir_free(aux_udir_t *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->ngarbage; i++)
        free(d->garbage[i]);
    free(d->garbage);
    free(d->dir);
    free(d->base);
    free(d);
}

const char *
aux_udir_dir(const aux_udir_t *d)
{
    return d->dir;
}

/* Remember name; true when it was new (or could not be remembered). */
static bool
garbage_is_new(aux_udir_t *d, const char *name)
{
    size_t lo = 0, hi = d->ngarbage;
    char *copy;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(d->garbage[mid], name);
        if (c == 0)
            return false;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (d->ngarbage == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        char **g = realloc(d->garbage, cap * sizeof *g);
        if (g == NULL)
            return true; /* out of memory: count it again next time rather than fail */
        d->garbage = g;
        d->cap = cap;
    }
    if (NULL == (copy = strdup(name)))
        return true;
    memmove(d->garbage + lo + 1, d->garbage + lo, (d->ngarbage - lo) * sizeof *d->garbage);
    d->garbage[lo] = copy;
    d->ngarbage++;
    return true;
}

int
aux_udir_scan(aux_udir_t *d, aux_scan_t *out, void (*on_garbage)(void *ctx, const char *name), void *ctx)
{
    DIR *dp = opendir(d->dir);
    struct dirent *e;

    *out = (aux_scan_t){0};
    if (dp == NULL) {
        out->dir_missing = errno == ENOENT;
        return out->dir_missing ? 0 : -1;
    }
    errno = 0;
    while ((e = readdir(dp)) != NULL) {
        uint64_t seq;
        switch (aux_classify_name(d->base, e->d_name, &seq)) {
        case AUX_NAME_UPDATER:
            if (!out->any || seq < out->min)
                out->min = seq;
            if (!out->any || seq > out->max)
                out->max = seq;
            out->any = true;
            break;
        case AUX_NAME_GARBAGE:
            if (garbage_is_new(d, e->d_name) && on_garbage)
                on_garbage(ctx, e->d_name);
            break;
        case AUX_NAME_TMP:
        case AUX_NAME_OTHER:
            break;
        }
        errno = 0;
    }
    if (errno != 0) {
        int saved = errno;
        closedir(dp);
        errno = saved;
        return -1;
    }
    closedir(dp);
    return 0;
}
