/*
 * Shared by swmr_writer and swmr_reader; see swmr_common.h.
 */
#include "swmr_common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const opts_t *swmr_opts;

static void
vmsg(const char *tag, const char *fmt, va_list ap)
{
    char buf[4096];

    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(stderr, "%s[%s]: %s%s\n", swmr_opts ? swmr_opts->prog : "swmr",
            swmr_opts && swmr_opts->name ? swmr_opts->name : "-", tag, buf);
    fflush(stderr);
}

void
swmr_msg(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

/* Failures end the process at once (_exit): HDF5's own clean-up at exit, with files and
 * objects still open, would only add noise after the message that matters. */
void
swmr_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vmsg("FAIL: ", fmt, ap);
    va_end(ap);
    fflush(stdout);
    _exit(1);
}

/* HDF5's automatic error printing is off (swmr_parse): the stack is printed here, once. */
void
swmr_h5fail(const char *fmt, ...)
{
    va_list ap;

    H5Eprint2(H5E_DEFAULT, stderr);
    va_start(ap, fmt);
    vmsg("FAIL: ", fmt, ap);
    va_end(ap);
    fflush(stdout);
    _exit(1);
}

typedef struct {
    char *buf;
    size_t n, len;
} errbuf_t;

static herr_t
walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    errbuf_t *eb = data;
    char min[128] = "";

    H5Eget_msg(e->min_num, NULL, min, sizeof min);
    if (eb->len < eb->n) {
        int w = snprintf(eb->buf + eb->len, eb->n - eb->len, "%s#%u %s: %s (%s)", n ? "; " : "", n,
                         e->func_name ? e->func_name : "?", e->desc ? e->desc : "", min);
        if (w > 0)
            eb->len += (size_t)w;
    }
    return 0;
}

void
h5_error_string(char *buf, size_t n)
{
    errbuf_t eb = {buf, n, 0};

    if (n)
        buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &eb);
    if (n && !buf[0])
        snprintf(buf, n, "(no HDF5 error on the stack)");
}

int64_t
now_ns(void)
{
    return (int64_t)(vfdswmr_now() * 1e9);
}

void *
xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);

    if (!p)
        swmr_fail("out of memory");
    return p;
}

size_t
box_elems(int rank, const hsize_t dims[3])
{
    size_t n = 1;

    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    return n;
}

/* --- options ------------------------------------------------------------------------------ */

static const struct {
    const char *name;
    kind_t kind;
} kinds[] = {{"single", K_SINGLE}, {"implicit", K_IMPLICIT}, {"farray", K_FARRAY}, {"earray", K_EARRAY},
             {"btree2", K_BTREE2}, {"btree1", K_BTREE1},     {"grow2d", K_GROW2D}, {"grow3d", K_GROW3D}};

const char *
kind_name(kind_t k)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == k)
            return kinds[i].name;
    return "?";
}

static uint64_t
fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void
usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --file F [--file2 F2] [--workload append|grow|zoo] [--dsets K[:z],...]\n"
            "  [--steps N] [--first-step K] [--last-step L] [--rows-per-step R] [--swmr] [--earliest]\n"
            "  [--existing] [--no-space-reuse] [--no-shrink] [--flush file|dset] [--interval-ms MS] [--acks N]\n"
            "  [--ack-id I] [--tick-len T] [--poll-us US] [--seed S] [--timeout SEC]\n"
            "  [--max-latency-ticks X] [--evict-on-close] [--lenient] [--name LABEL]\n"
            "  [--progress P] [--progress2 P2] [--check-stage K] [--tolerate-transient]\n"
            "kinds: single implicit farray earray btree2 btree1 (append), grow2d grow3d (grow);\n"
            "':z' adds the deflate filter\n",
            prog);
    exit(2);
}

static long
num(const char *prog, const char *opt, const char *s, long lo, long hi)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: --%s %s: expected an integer from %ld to %ld\n", prog, opt, s, lo, hi);
        exit(2);
    }
    return v;
}

static void
spec_setup(opts_t *o, dspec_t *d)
{
    hsize_t N = (hsize_t)o->steps * (hsize_t)o->rows_per_step, U = H5S_UNLIMITED;

    d->alloc = H5D_ALLOC_TIME_DEFAULT;
    d->rank = 2;
    d->chunk[2] = d->maxdims[2] = 1;
    switch (d->kind) {
    case K_SINGLE:
        d->maxdims[0] = d->chunk[0] = N;
        d->maxdims[1] = d->chunk[1] = SWMR_NCOLS;
        d->idx = H5D_CHUNK_IDX_SINGLE;
        break;
    case K_IMPLICIT:
    case K_FARRAY:
        d->maxdims[0] = N;
        d->maxdims[1] = SWMR_NCOLS;
        d->chunk[0] = SWMR_CHUNK_ROWS;
        d->chunk[1] = SWMR_NCOLS;
        d->idx = d->kind == K_IMPLICIT ? H5D_CHUNK_IDX_NONE : H5D_CHUNK_IDX_FARRAY;
        d->alloc = d->kind == K_IMPLICIT ? H5D_ALLOC_TIME_EARLY : H5D_ALLOC_TIME_LATE;
        break;
    case K_EARRAY:
    case K_BTREE1:
        d->maxdims[0] = U;
        d->maxdims[1] = SWMR_NCOLS;
        d->chunk[0] = SWMR_CHUNK_ROWS;
        d->chunk[1] = SWMR_NCOLS;
        d->idx = d->kind == K_EARRAY ? H5D_CHUNK_IDX_EARRAY : H5D_CHUNK_IDX_BTREE;
        break;
    case K_BTREE2:
        d->maxdims[0] = d->maxdims[1] = U;
        d->chunk[0] = SWMR_CHUNK_ROWS;
        d->chunk[1] = 6;
        d->idx = H5D_CHUNK_IDX_BT2;
        break;
    case K_GROW2D:
        d->maxdims[0] = d->maxdims[1] = U;
        d->chunk[0] = 4;
        d->chunk[1] = 5;
        d->idx = H5D_CHUNK_IDX_BT2;
        break;
    case K_GROW3D:
        d->rank = 3;
        d->maxdims[0] = d->maxdims[1] = d->maxdims[2] = U;
        d->chunk[0] = 3;
        d->chunk[1] = 4;
        d->chunk[2] = 3;
        d->idx = H5D_CHUNK_IDX_BT2;
        break;
    }
    d->box[0] = d->box[1] = d->box[2] = 1;
    for (int s = -1; s < o->steps; s++) {
        hsize_t sh[3];

        sched_shape(o, d, s, sh);
        for (int i = 0; i < d->rank; i++)
            if (sh[i] > d->box[i])
                d->box[i] = sh[i];
    }
}

void
swmr_parse(opts_t *o, int argc, char **argv, bool writer)
{
    enum {
        O_FILE = 256,
        O_FILE2,
        O_PROGRESS,
        O_PROGRESS2,
        O_WORKLOAD,
        O_DSETS,
        O_STEPS,
        O_FIRST,
        O_LAST,
        O_RPS,
        O_SWMR,
        O_EARLIEST,
        O_NOREUSE,
        O_EXISTING,
        O_NOSHRINK,
        O_FLUSH,
        O_INTERVAL,
        O_ACKS,
        O_ACKID,
        O_TICK,
        O_POLL,
        O_SEED,
        O_TIMEOUT,
        O_MAXLAT,
        O_EVICT,
        O_LENIENT,
        O_NAME,
        O_CHECKSTAGE,
        O_TRANSIENT
    };
    static const struct option lo[] = {{"file", 1, 0, O_FILE},
                                       {"file2", 1, 0, O_FILE2},
                                       {"progress", 1, 0, O_PROGRESS},
                                       {"progress2", 1, 0, O_PROGRESS2},
                                       {"workload", 1, 0, O_WORKLOAD},
                                       {"dsets", 1, 0, O_DSETS},
                                       {"steps", 1, 0, O_STEPS},
                                       {"first-step", 1, 0, O_FIRST},
                                       {"last-step", 1, 0, O_LAST},
                                       {"rows-per-step", 1, 0, O_RPS},
                                       {"swmr", 0, 0, O_SWMR},
                                       {"earliest", 0, 0, O_EARLIEST},
                                       {"no-space-reuse", 0, 0, O_NOREUSE},
                                       {"existing", 0, 0, O_EXISTING},
                                       {"no-shrink", 0, 0, O_NOSHRINK},
                                       {"flush", 1, 0, O_FLUSH},
                                       {"interval-ms", 1, 0, O_INTERVAL},
                                       {"acks", 1, 0, O_ACKS},
                                       {"ack-id", 1, 0, O_ACKID},
                                       {"tick-len", 1, 0, O_TICK},
                                       {"poll-us", 1, 0, O_POLL},
                                       {"seed", 1, 0, O_SEED},
                                       {"timeout", 1, 0, O_TIMEOUT},
                                       {"max-latency-ticks", 1, 0, O_MAXLAT},
                                       {"evict-on-close", 0, 0, O_EVICT},
                                       {"lenient", 0, 0, O_LENIENT},
                                       {"name", 1, 0, O_NAME},
                                       {"check-stage", 1, 0, O_CHECKSTAGE},
                                       {"tolerate-transient", 0, 0, O_TRANSIENT},
                                       {0, 0, 0, 0}};
    const char *prog = writer ? "swmr_writer" : "swmr_reader", *dsets = NULL;
    int c, last = -1;

    memset(o, 0, sizeof *o);
    o->prog = prog;
    o->name = writer ? "writer" : "reader";
    o->steps = -1;
    o->rows_per_step = 3;
    o->interval_ms = 10;
    o->ack_id = -1;
    o->tick_len = 1;
    o->poll_us = 1000;
    o->seed = 1;
    o->timeout_s = 60;
    o->check_stage = -99;
    swmr_opts = o;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures print the stack through swmr_h5fail */
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case O_FILE:
            o->file[0] = optarg;
            break;
        case O_FILE2:
            o->file[1] = optarg;
            break;
        case O_PROGRESS:
            o->progress[0] = optarg;
            break;
        case O_PROGRESS2:
            o->progress[1] = optarg;
            break;
        case O_WORKLOAD:
            if (!strcmp(optarg, "append"))
                o->workload = W_APPEND;
            else if (!strcmp(optarg, "grow"))
                o->workload = W_GROW;
            else if (!strcmp(optarg, "zoo"))
                o->workload = W_ZOO;
            else
                usage(prog);
            break;
        case O_DSETS:
            dsets = optarg;
            break;
        case O_STEPS:
            o->steps = (int)num(prog, "steps", optarg, 1, 100000);
            break;
        case O_FIRST:
            o->first_step = (int)num(prog, "first-step", optarg, 0, 100000);
            break;
        case O_LAST:
            last = (int)num(prog, "last-step", optarg, 0, 100000);
            break;
        case O_RPS:
            o->rows_per_step = (int)num(prog, "rows-per-step", optarg, 1, 1000);
            break;
        case O_SWMR:
            o->swmr = true;
            break;
        case O_EARLIEST:
            o->earliest = true;
            break;
        case O_NOREUSE:
            o->no_space_reuse = true;
            break;
        case O_EXISTING:
            o->existing = true;
            break;
        case O_NOSHRINK:
            o->no_shrink = true;
            break;
        case O_FLUSH:
            if (!strcmp(optarg, "dset"))
                o->flush_dset = true;
            else if (strcmp(optarg, "file"))
                usage(prog);
            break;
        case O_INTERVAL:
            o->interval_ms = (int)num(prog, "interval-ms", optarg, 0, 60000);
            break;
        case O_ACKS:
            o->acks = (int)num(prog, "acks", optarg, 0, 64);
            break;
        case O_ACKID:
            o->ack_id = (int)num(prog, "ack-id", optarg, 0, 63);
            break;
        case O_TICK:
            o->tick_len = (int)num(prog, "tick-len", optarg, 1, 36000);
            break;
        case O_POLL:
            o->poll_us = (int)num(prog, "poll-us", optarg, 0, 1000000);
            break;
        case O_SEED:
            o->seed = (uint64_t)num(prog, "seed", optarg, 0, 1000000000);
            break;
        case O_TIMEOUT:
            o->timeout_s = (double)num(prog, "timeout", optarg, 1, 3600);
            break;
        case O_MAXLAT:
            o->max_latency_ticks = (double)num(prog, "max-latency-ticks", optarg, 0, 1000000);
            break;
        case O_EVICT:
            o->evict_on_close = true;
            break;
        case O_LENIENT:
            o->lenient = true;
            break;
        case O_TRANSIENT:
            o->tolerate_transient = true;
            break;
        case O_NAME:
            o->name = optarg;
            break;
        case O_CHECKSTAGE:
            o->check_stage = (int)num(prog, "check-stage", optarg, -1, ZOO_NSTAGES - 1);
            break;
        default:
            usage(prog);
        }
    }
    if (optind != argc || !o->file[0])
        usage(prog);
    o->nfiles = o->file[1] ? 2 : 1;
    for (int f = 0; f < o->nfiles; f++)
        if (!o->progress[f]) {
            snprintf(o->progress_buf[f], sizeof o->progress_buf[f], "%s.progress", o->file[f]);
            o->progress[f] = o->progress_buf[f];
        }
    if (o->steps < 0)
        o->steps = o->workload == W_ZOO ? ZOO_NSTAGES : o->workload == W_GROW ? 60 : 100;
    if (o->workload == W_ZOO && o->steps > ZOO_NSTAGES) {
        fprintf(stderr, "%s: the zoo has %d stages\n", prog, ZOO_NSTAGES);
        exit(2);
    }
    o->last_step = last >= 0 ? last : o->steps - 1;
    if (o->last_step >= o->steps || o->first_step > o->last_step) {
        fprintf(stderr, "%s: need first-step <= last-step < steps\n", prog);
        exit(2);
    }
    if (o->workload == W_ZOO) {
        if (dsets)
            usage(prog);
        return;
    }
    if (!dsets)
        dsets = o->workload == W_GROW ? "grow2d,grow3d" : "earray";
    for (const char *p = dsets; *p;) {
        size_t len = strcspn(p, ","), i;
        char tok[40];
        dspec_t *d;

        if (!len || len >= sizeof tok || o->ndsets == SWMR_MAX_DSETS)
            usage(prog);
        memcpy(tok, p, len);
        tok[len] = '\0';
        p += len + (p[len] == ',');
        d = &o->dsets[o->ndsets++];
        memset(d, 0, sizeof *d);
        if (len > 2 && !strcmp(tok + len - 2, ":z")) {
            d->deflate = true;
            tok[len - 2] = '\0';
        }
        for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (!strcmp(tok, kinds[i].name))
                break;
        if (i == sizeof kinds / sizeof kinds[0]) {
            fprintf(stderr, "%s: unknown dataset kind '%s'\n", prog, tok);
            exit(2);
        }
        d->kind = kinds[i].kind;
        if ((o->workload == W_GROW) != (d->kind == K_GROW2D || d->kind == K_GROW3D)) {
            fprintf(stderr, "%s: kind '%s' does not belong to this workload\n", prog, tok);
            exit(2);
        }
        if (d->kind == K_IMPLICIT && d->deflate) {
            fprintf(stderr, "%s: the implicit index allows no filter (HDF5 would pick a fixed array)\n", prog);
            exit(2);
        }
        if ((d->kind == K_BTREE1) != o->earliest) {
            fprintf(stderr, "%s: btree1 needs --earliest, and --earliest allows only btree1\n", prog);
            exit(2);
        }
        snprintf(d->name, sizeof d->name, "%s%s", tok, d->deflate ? "_z" : "");
        for (int j = 0; j < o->ndsets - 1; j++)
            if (!strcmp(o->dsets[j].name, d->name)) {
                fprintf(stderr, "%s: dataset %s listed twice\n", prog, d->name);
                exit(2);
            }
        d->id = fnv1a(d->name);
        spec_setup(o, d);
    }
}

/* --- values and schedules ----------------------------------------------------------------- */

uint64_t
swmr_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#define HASH_MASK 0xffffffffffull /* 40 bits */

int64_t
swmr_value(uint64_t seed, uint64_t dsid, const hsize_t idx[3], int t)
{
    uint64_t h = swmr_mix64(
        seed ^
        swmr_mix64(dsid ^ swmr_mix64(idx[0] ^ swmr_mix64(idx[1] ^ swmr_mix64(idx[2] ^ swmr_mix64((uint64_t)t))))));

    return (int64_t)(((uint64_t)(t + 1) << 40) | (h & HASH_MASK));
}

int
value_step(int64_t v)
{
    return v < 0 ? -1 : (int)((uint64_t)v >> 40) - 1;
}

bool
value_ok(uint64_t seed, uint64_t dsid, const hsize_t idx[3], int64_t v)
{
    int t = value_step(v);

    return t >= 0 && swmr_value(seed, dsid, idx, t) == v;
}

typedef enum { PH_GROW, PH_SHRINK, PH_REGROW } phase_t;

static phase_t
phase_of(const opts_t *o, int s, int *local)
{
    int g = o->steps / 2, k = o->steps / 5 > 0 ? o->steps / 5 : 1;

    if (o->no_shrink || s < g) {
        *local = s;
        return PH_GROW;
    }
    if (s < g + k) {
        *local = s - g;
        return PH_SHRINK;
    }
    *local = s - g - k;
    return PH_REGROW;
}

const char *
sched_phase(const opts_t *o, int s)
{
    int local;

    if (o->workload != W_GROW)
        return "append";
    switch (phase_of(o, s, &local)) {
    case PH_GROW:
        return "grow";
    case PH_SHRINK:
        return "shrink";
    default:
        return "regrow";
    }
}

static bool
is_grow(const dspec_t *d)
{
    return d->kind == K_GROW2D || d->kind == K_GROW3D;
}

/* One step of the grow workload applied to an extent. */
static void
grow_step(const opts_t *o, const dspec_t *d, int s, hsize_t sh[3])
{
    static const hsize_t inc2[3] = {2, 3, 0}, dec2[3] = {3, 4, 0}, reg2[3] = {3, 4, 0};
    static const hsize_t inc3[3] = {1, 2, 1}, dec3[3] = {2, 3, 2}, reg3[3] = {2, 3, 2};
    int local;
    phase_t ph = phase_of(o, s, &local);
    int dim = local % d->rank;
    bool two = d->rank == 2;

    switch (ph) {
    case PH_GROW:
        sh[dim] += two ? inc2[dim] : inc3[dim];
        break;
    case PH_REGROW:
        sh[dim] += two ? reg2[dim] : reg3[dim];
        break;
    case PH_SHRINK: {
        hsize_t dec = two ? dec2[dim] : dec3[dim];

        if (sh[dim] > dec)
            sh[dim] -= dec;
        else if (sh[dim] > 1)
            sh[dim] = 1;
        break;
    }
    }
}

void
sched_shape(const opts_t *o, const dspec_t *d, int s, hsize_t out[3])
{
    out[0] = out[1] = out[2] = 1;
    if (is_grow(d)) {
        for (int i = 0; i < d->rank; i++)
            out[i] = 0;
        for (int u = 0; u <= s; u++)
            grow_step(o, d, u, out);
        return;
    }
    out[1] = SWMR_NCOLS;
    if (d->kind == K_SINGLE)
        out[0] = (hsize_t)o->steps * (hsize_t)o->rows_per_step;
    else
        out[0] = (hsize_t)(s + 1) * (hsize_t)o->rows_per_step;
}

int
sched_writes(const opts_t *o, const dspec_t *d, int s, box_t out[SWMR_MAX_BOXES])
{
    int n = 0;
    hsize_t old[3], now[3];

    if (!is_grow(d)) {
        memset(&out[0], 0, sizeof out[0]);
        out[0].start[0] = (hsize_t)s * (hsize_t)o->rows_per_step;
        out[0].count[0] = (hsize_t)o->rows_per_step;
        out[0].count[1] = SWMR_NCOLS;
        out[0].count[2] = 1;
        return 1;
    }
    sched_shape(o, d, s - 1, old);
    sched_shape(o, d, s, now);
    if (box_elems(d->rank, now) == 0)
        return 0;
    /* the newly exposed slab, in the one dimension that grew; when regrowing, only its lower
     * half: the rest keeps showing the fill value the shrink left behind */
    for (int dim = 0; dim < d->rank; dim++)
        if (now[dim] > old[dim]) {
            box_t *b = &out[n];
            int local;
            hsize_t cnt = now[dim] - old[dim];

            if (phase_of(o, s, &local) == PH_REGROW)
                cnt /= 2;
            if (!cnt)
                break;
            n++;
            for (int i = 0; i < 3; i++) {
                b->start[i] = 0;
                b->count[i] = i < d->rank ? now[i] : 1;
            }
            b->start[dim] = old[dim];
            b->count[dim] = cnt;
            break;
        }
    /* and an overwrite of one plane of dimension 0, in every phase */
    {
        box_t *b = &out[n++];

        for (int i = 0; i < 3; i++) {
            b->start[i] = 0;
            b->count[i] = i < d->rank ? now[i] : 1;
        }
        b->start[0] = ((hsize_t)s * 7) % now[0];
        b->count[0] = 1;
    }
    return n;
}

int
check_dataset(hid_t did, const dspec_t *d, char *err, size_t n)
{
    hid_t type = -1, space = -1, dcpl = -1;
    hsize_t dims[3], maxdims[3], chunk[3];
    H5D_chunk_index_t idx;
    int64_t fill = 0;
    int rank, nfilters, rc = -1;
    const char *why = NULL;
    char what[160] = "";

    if ((type = H5Dget_type(did)) < 0 || (space = H5Dget_space(did)) < 0 || (dcpl = H5Dget_create_plist(did)) < 0) {
        why = "cannot get its type, dataspace or creation properties";
        goto done;
    }
    if (H5Tequal(type, H5T_STD_I64LE) <= 0) {
        why = "datatype is not H5T_STD_I64LE";
        goto done;
    }
    if ((rank = H5Sget_simple_extent_dims(space, dims, maxdims)) != d->rank) {
        snprintf(what, sizeof what, "rank %d, expected %d", rank, d->rank);
        goto done;
    }
    for (int i = 0; i < rank; i++)
        if (maxdims[i] != d->maxdims[i]) {
            snprintf(what, sizeof what, "maximum dimension %d is %lld, expected %lld", i,
                     maxdims[i] == H5S_UNLIMITED ? -1LL : (long long)maxdims[i],
                     d->maxdims[i] == H5S_UNLIMITED ? -1LL : (long long)d->maxdims[i]);
            goto done;
        }
    if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, 3, chunk) != rank) {
        why = "layout is not chunked";
        goto done;
    }
    for (int i = 0; i < rank; i++)
        if (chunk[i] != d->chunk[i]) {
            snprintf(what, sizeof what, "chunk dimension %d is %llu, expected %llu", i, (unsigned long long)chunk[i],
                     (unsigned long long)d->chunk[i]);
            goto done;
        }
    nfilters = H5Pget_nfilters(dcpl);
    if (nfilters != (d->deflate ? 1 : 0)) {
        snprintf(what, sizeof what, "%d filters, expected %d", nfilters, d->deflate ? 1 : 0);
        goto done;
    }
    if (d->deflate) {
        unsigned flags;
        size_t nelmts = 0;

        if (H5Pget_filter2(dcpl, 0, &flags, &nelmts, NULL, 0, NULL, NULL) != H5Z_FILTER_DEFLATE) {
            why = "its filter is not deflate";
            goto done;
        }
    }
    if (H5Pget_fill_value(dcpl, H5T_NATIVE_INT64, &fill) < 0 || fill != SWMR_FILL) {
        snprintf(what, sizeof what, "fill value %" PRId64 ", expected %" PRId64, fill, SWMR_FILL);
        goto done;
    }
    if (H5Dget_chunk_index_type(did, &idx) < 0) {
        why = "H5Dget_chunk_index_type failed";
        goto done;
    }
    if (idx != d->idx) {
        snprintf(what, sizeof what, "chunk index type %d, expected %d (H5D_CHUNK_IDX_*)", (int)idx, (int)d->idx);
        goto done;
    }
    rc = 0;
done:
    if (rc)
        snprintf(err, n, "dataset %s: %s", d->name, why ? why : what);
    if (type >= 0)
        H5Tclose(type);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return rc;
}

/* --- expected-state model -------------------------------------------------------------------- */

static size_t
box_index(const dspec_t *d, hsize_t i0, hsize_t i1, hsize_t i2)
{
    return (size_t)((i0 * d->box[1] + i1) * d->box[2] + i2);
}

static bool
inside(const hsize_t sh[3], int rank, hsize_t i0, hsize_t i1, hsize_t i2)
{
    return i0 < sh[0] && i1 < sh[1] && (rank < 3 || i2 < sh[2]);
}

static bool
inside_box(const box_t *x, hsize_t i0, hsize_t i1, hsize_t i2)
{
    return i0 >= x->start[0] && i0 < x->start[0] + x->count[0] && i1 >= x->start[1] && i1 < x->start[1] + x->count[1] &&
           i2 >= x->start[2] && i2 < x->start[2] + x->count[2];
}

void
model_init(model_t *mo, const opts_t *o, const dspec_t *d)
{
    sched_t *sc = xcalloc(1, sizeof *sc);

    memset(mo, 0, sizeof *mo);
    mo->o = o;
    mo->d = d;
    mo->owner = true;
    mo->sc = sc;
    sc->nsteps = o->steps;
    sc->shape = xcalloc((size_t)o->steps + 1, sizeof *sc->shape);
    sc->nw = xcalloc((size_t)o->steps, sizeof *sc->nw);
    sc->w = xcalloc((size_t)o->steps, sizeof *sc->w);
    for (int s = -1; s < o->steps; s++) {
        sched_shape(o, d, s, sc->shape[s + 1]);
        if (d->rank < 3)
            sc->shape[s + 1][2] = 1;
        if (s >= 0)
            sc->nw[s] = sched_writes(o, d, s, sc->w[s]);
    }
    mo->nbox = box_elems(3, d->box);
    mo->cur = xcalloc(mo->nbox, sizeof(int64_t));
    mo->pre = xcalloc(mo->nbox, sizeof(int64_t));
    mo->last_t = xcalloc(mo->nbox, sizeof(int32_t));
    for (size_t i = 0; i < mo->nbox; i++) {
        mo->cur[i] = mo->pre[i] = SWMR_FILL;
        mo->last_t[i] = -1;
    }
    mo->m = -1;
    memcpy(mo->shape, sc->shape[0], sizeof mo->shape);
}

void
model_clone(model_t *dst, const model_t *src)
{
    if (!dst->cur) {
        dst->cur = xcalloc(src->nbox, sizeof(int64_t));
        dst->pre = xcalloc(src->nbox, sizeof(int64_t));
        dst->last_t = xcalloc(src->nbox, sizeof(int32_t));
    }
    else if (dst->owner) {
        /* a model_init'ed model becomes a clone: give back its own schedule */
        free(dst->sc->shape);
        free(dst->sc->nw);
        free(dst->sc->w);
        free(dst->sc);
    }
    dst->o = src->o;
    dst->d = src->d;
    dst->sc = src->sc;
    dst->owner = false;
    dst->nbox = src->nbox;
    dst->m = src->m;
    memcpy(dst->shape, src->shape, sizeof dst->shape);
    memcpy(dst->cur, src->cur, src->nbox * sizeof(int64_t));
    memcpy(dst->pre, src->pre, src->nbox * sizeof(int64_t));
    memcpy(dst->last_t, src->last_t, src->nbox * sizeof(int32_t));
}

void
model_free(model_t *mo)
{
    if (mo->owner && mo->sc) {
        free(mo->sc->shape);
        free(mo->sc->nw);
        free(mo->sc->w);
        free(mo->sc);
    }
    free(mo->cur);
    free(mo->pre);
    free(mo->last_t);
    memset(mo, 0, sizeof *mo);
}

void
model_advance(model_t *mo)
{
    const dspec_t *d = mo->d;
    int s = mo->m + 1;
    const hsize_t *ns = mo->sc->shape[s + 1];

    for (hsize_t i0 = 0; i0 < d->box[0]; i0++)
        for (hsize_t i1 = 0; i1 < d->box[1]; i1++)
            for (hsize_t i2 = 0; i2 < d->box[2]; i2++) {
                size_t k = box_index(d, i0, i1, i2);

                if (!(inside(mo->shape, 3, i0, i1, i2) && inside(ns, 3, i0, i1, i2))) {
                    mo->cur[k] = SWMR_FILL; /* outside, or pruned by a shrink */
                    mo->last_t[k] = -1;
                }
                mo->pre[k] = mo->cur[k];
            }
    for (int b = 0; b < mo->sc->nw[s]; b++) {
        const box_t *x = &mo->sc->w[s][b];

        for (hsize_t i0 = x->start[0]; i0 < x->start[0] + x->count[0]; i0++)
            for (hsize_t i1 = x->start[1]; i1 < x->start[1] + x->count[1]; i1++)
                for (hsize_t i2 = x->start[2]; i2 < x->start[2] + x->count[2]; i2++) {
                    hsize_t idx[3] = {i0, i1, i2};

                    mo->cur[box_index(d, i0, i1, i2)] = swmr_value(mo->o->seed, d->id, idx, s);
                }
    }
    memcpy(mo->shape, ns, sizeof mo->shape);
    mo->m = s;
}

/* Does a step in (u, limit] write element idx with value v / prune element idx? */
static bool
future_write(const model_t *mo, const hsize_t idx[3], int64_t v, int limit)
{
    int t = value_step(v);

    if (t <= mo->m || t > limit || !value_ok(mo->o->seed, mo->d->id, idx, v))
        return false;
    for (int b = 0; b < mo->sc->nw[t]; b++)
        if (inside_box(&mo->sc->w[t][b], idx[0], idx[1], idx[2]))
            return true;
    return false;
}

static bool
future_prune(const model_t *mo, const hsize_t idx[3], int limit)
{
    for (int t = mo->m + 1; t <= limit; t++)
        if (!inside(mo->sc->shape[t + 1], 3, idx[0], idx[1], idx[2]))
            return true;
    return false;
}

/* Is v a splice of two of the element's legitimate values: bytes below k from one, the rest
 * from the other? */
static bool
torn_value(const model_t *mo, const hsize_t idx[3], int64_t v, int64_t c, int64_t p, int limit)
{
    int64_t cand[40];
    int n = 0;

    cand[n++] = c;
    cand[n++] = p;
    cand[n++] = SWMR_FILL;
    for (int t = mo->m + 1; t <= limit && n < 40; t++)
        for (int b = 0; b < mo->sc->nw[t]; b++)
            if (inside_box(&mo->sc->w[t][b], idx[0], idx[1], idx[2])) {
                cand[n++] = swmr_value(mo->o->seed, mo->d->id, idx, t);
                break;
            }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (cand[i] == cand[j])
                continue;
            for (int k = 1; k < 8; k++) {
                uint64_t low = (1ull << (8 * k)) - 1;

                if (((uint64_t)v & low) == ((uint64_t)cand[i] & low) &&
                    ((uint64_t)v & ~low) == ((uint64_t)cand[j] & ~low))
                    return true;
            }
        }
    return false;
}

/* Compare the observation with the model's current step. 1: complete, 0: incomplete (some
 * of the step's writes not visible yet), -1: mismatch (described in *mm), -2: fits but for
 * torn elements (the first described in *mm). With commit, record the write steps seen. */
static int
model_compare(model_t *mo, const hsize_t dims[3], const int64_t *obs, int limit, bool commit, mismatch_t *mm)
{
    const dspec_t *d = mo->d;
    size_t k = 0, incomplete = 0, torn = 0;
    mismatch_t first_torn;

    for (hsize_t i0 = 0; i0 < dims[0]; i0++)
        for (hsize_t i1 = 0; i1 < dims[1]; i1++)
            for (hsize_t i2 = 0; i2 < dims[2]; i2++, k++) {
                size_t b = box_index(d, i0, i1, i2);
                hsize_t idx[3] = {i0, i1, i2};
                int64_t v = obs[k], c = mo->cur[b], p = mo->pre[b];
                int tv = value_step(v);
                const char *why = NULL;

                if (v == c || future_write(mo, idx, v, limit)) {
                    if (v != SWMR_FILL ? tv < mo->last_t[b] : mo->last_t[b] >= 0 && !future_prune(mo, idx, limit))
                        why = "went back to an older value";
                }
                else if (v == p) {
                    if (v != SWMR_FILL ? tv < mo->last_t[b] : mo->last_t[b] >= 0 && !future_prune(mo, idx, limit))
                        why = "went back to its value from before this step's write, after showing a newer one";
                    else
                        incomplete++;
                }
                else if (v == SWMR_FILL && future_prune(mo, idx, limit)) {
                    /* pruned by a later shrink whose extent we do not see yet */
                }
                else if (torn_value(mo, idx, v, c, p, limit)) {
                    if (!torn++) {
                        memset(&first_torn, 0, sizeof first_torn);
                        first_torn.torn = true;
                        first_torn.step = mo->m;
                        memcpy(first_torn.idx, idx, sizeof idx);
                        first_torn.got = v;
                        first_torn.want = c;
                        first_torn.want_pre = p;
                        first_torn.last_t = mo->last_t[b];
                        snprintf(first_torn.what, sizeof first_torn.what,
                                 "is torn (its bytes splice two of its values: a read that raced an "
                                 "in-place write)");
                    }
                    continue;
                }
                else
                    why = "has a wrong value";
                if (why && mm->count++) {
                    why = NULL;
                    continue;
                }
                if (why) {
                    mm->mismatch = true;
                    mm->step = mo->m;
                    memcpy(mm->idx, idx, sizeof idx);
                    mm->got = v;
                    mm->want = c;
                    mm->want_pre = p;
                    mm->last_t = mo->last_t[b];
                    snprintf(mm->what, sizeof mm->what, "%s", why);
                    continue;
                }
                if (commit && v != SWMR_FILL && tv > mo->last_t[b])
                    mo->last_t[b] = tv;
            }
    if (mm->count)
        return -1;
    if (torn) {
        *mm = first_torn;
        mm->count = torn;
        return -2;
    }
    return incomplete ? 0 : 1;
}

int
model_match(model_t *mo, model_t *scratch, const hsize_t dims_in[3], const int64_t *obs, int limit, mismatch_t *mm)
{
    hsize_t dims[3] = {dims_in[0], dims_in[1], mo->d->rank < 3 ? 1 : dims_in[2]};
    int best = -2, torn = -2, r;
    mismatch_t m1, mt;

    memset(mm, 0, sizeof *mm);
    memset(&mt, 0, sizeof mt);
    mm->step = -2;
    if (limit < mo->m)
        limit = mo->m;
    model_clone(scratch, mo);
    for (;;) {
        if (!memcmp(dims, scratch->shape, sizeof dims)) {
            memset(&m1, 0, sizeof m1);
            r = model_compare(scratch, dims, obs, limit, false, &m1);
            if (r >= 0)
                best = scratch->m;
            else if (r == -2) {
                torn = scratch->m;
                mt = m1;
            }
            else if (best < -1 && torn < -1)
                *mm = m1;
        }
        if (scratch->m >= limit)
            break;
        model_advance(scratch);
    }
    if (best < -1 && torn >= -1) {
        *mm = mt;
        return -2;
    }
    if (best < -1) {
        if (!mm->mismatch)
            snprintf(mm->what, sizeof mm->what, "the extent is that of no step from %d to %d", mo->m, limit);
        return -1;
    }
    while (mo->m < best)
        model_advance(mo);
    memset(&m1, 0, sizeof m1);
    r = model_compare(mo, dims, obs, limit, true, &m1);
    if (r < 0)
        swmr_fail("internal error: dataset %s: step %d fit, then did not", mo->d->name, best);
    return r;
}

/* Whose value is v? Another element's (misplaced data), of which step. */
static void
whose_value(const model_t *mo, int64_t v, char *buf, size_t n)
{
    const dspec_t *d = mo->d;
    int t = value_step(v);

    buf[0] = '\0';
    if (v == SWMR_FILL || t < 0 || t >= mo->o->steps)
        return;
    for (hsize_t i0 = 0; i0 < d->box[0]; i0++)
        for (hsize_t i1 = 0; i1 < d->box[1]; i1++)
            for (hsize_t i2 = 0; i2 < d->box[2]; i2++) {
                hsize_t idx[3] = {i0, i1, i2};

                if (swmr_value(mo->o->seed, d->id, idx, t) == v) {
                    snprintf(buf, n, "; it is the value of element [%llu,%llu,%llu] at step %d (misplaced data)",
                             (unsigned long long)i0, (unsigned long long)i1, (unsigned long long)i2, t);
                    return;
                }
            }
}

void
describe_mismatch(const model_t *mo, const mismatch_t *mm, char *buf, size_t n)
{
    const dspec_t *d = mo->d;
    char whose[160];

    if (!mm->mismatch && !mm->torn) {
        snprintf(buf, n, "dataset %s: %s", d->name, mm->what);
        return;
    }
    if (value_ok(mo->o->seed, d->id, mm->idx, mm->got))
        whose[0] = '\0';
    else
        whose_value(mo, mm->got, whose, sizeof whose);
    snprintf(buf, n,
             "dataset %s, extent of step %d (%s): %zu element(s) %s; the first, [%llu,%llu,%llu], %s: read %" PRId64
             " (%s, claims step %d), expected %" PRId64 " (after step %d), %" PRId64
             " (before its write), a value of a later step, or fill if a later step prunes it; newest "
             "step seen here before: %d%s",
             d->name, mm->step, sched_phase(mo->o, mm->step), mm->count, mm->torn ? "torn" : "do not fit",
             (unsigned long long)mm->idx[0], (unsigned long long)mm->idx[1], (unsigned long long)mm->idx[2], mm->what,
             mm->got,
             mm->got == SWMR_FILL                             ? "the fill value"
             : value_ok(mo->o->seed, d->id, mm->idx, mm->got) ? "a valid value of this element"
                                                              : "not a value this element ever has",
             value_step(mm->got), mm->want, mm->step, mm->want_pre, mm->last_t, whose);
}

/* --- progress and acknowledgement files -------------------------------------------------------- */

static void
write_atomically(const char *path, const char *text)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (!(f = fopen(tmp, "w")) || fputs(text, f) == EOF || fclose(f) == EOF)
        swmr_fail("cannot write %s: %s", tmp, strerror(errno));
    if (rename(tmp, path) < 0)
        swmr_fail("cannot rename %s to %s: %s", tmp, path, strerror(errno));
}

void
progress_write(const char *path, int step, bool done, const int64_t *pub_ns, int nsteps)
{
    size_t cap = 128 + (size_t)nsteps * 48, len;
    char *text = xcalloc(cap, 1);

    len = (size_t)snprintf(text, cap, "swmr-progress\nstep %d\ndone %d\n", step, done ? 1 : 0);
    for (int s = 0; s < nsteps; s++)
        if (pub_ns[s])
            len += (size_t)snprintf(text + len, cap - len, "pub %d %" PRId64 "\n", s, pub_ns[s]);
    snprintf(text + len, cap - len, "end\n");
    write_atomically(path, text);
    free(text);
}

bool
progress_read(const char *path, progress_t *p, int nsteps)
{
    FILE *f = fopen(path, "r");
    char line[256];
    bool header = false, end = false;
    int s;
    int64_t t;

    if (!p->pub_ns)
        p->pub_ns = xcalloc((size_t)nsteps, sizeof(int64_t));
    p->nsteps = nsteps;
    p->valid = false;
    if (!f)
        return false;
    while (fgets(line, sizeof line, f)) {
        int d;

        if (!strcmp(line, "swmr-progress\n"))
            header = true;
        else if (sscanf(line, "step %d", &s) == 1)
            p->step = s;
        else if (sscanf(line, "done %d", &d) == 1)
            p->done = d != 0;
        else if (sscanf(line, "pub %d %" SCNd64, &s, &t) == 2) {
            if (s >= 0 && s < nsteps)
                p->pub_ns[s] = t;
        }
        else if (!strcmp(line, "end\n"))
            end = true;
    }
    fclose(f);
    if (!header || !end)
        swmr_fail("progress file %s is malformed", path);
    p->valid = true;
    return true;
}

void
progress_free(progress_t *p)
{
    free(p->pub_ns);
    memset(p, 0, sizeof *p);
}

void
ack_write(const char *file, int id, int stage, bool failed)
{
    char path[4096], text[64];

    snprintf(path, sizeof path, "%s.ack.%d", file, id);
    if (failed)
        snprintf(text, sizeof text, "fail\n");
    else
        snprintf(text, sizeof text, "stage %d\n", stage);
    write_atomically(path, text);
}

int
ack_read(const char *file, int id, bool *failed)
{
    char path[4096], line[64];
    FILE *f;
    int stage = -2;

    *failed = false;
    snprintf(path, sizeof path, "%s.ack.%d", file, id);
    if (!(f = fopen(path, "r")))
        return -2;
    if (fgets(line, sizeof line, f)) {
        if (!strcmp(line, "fail\n"))
            *failed = true;
        else if (sscanf(line, "stage %d", &stage) != 1)
            stage = -2;
    }
    fclose(f);
    return stage;
}

/* --- the zoo ------------------------------------------------------------------------------------- */

const char *const zoo_stage_text[ZOO_NSTAGES] = {
    "root attribute 'stage' (the stage marker, rewritten at every stage)",
    "group /g1 (compact links)",
    "20 subgroups /g1/c00..c19 (dense links)",
    "contiguous dataset /d_contig and compact dataset /d_compact",
    "chunked deflated dataset /d_chunked (attribute phase change 6/4)",
    "compact attributes a0..a3 and title (variable-length string) on /g1",
    "12 attributes b00..b11 on /d_chunked (dense)",
    "soft links /g1/soft_contig, /g1/dangling, hard link /hard_c00",
    "committed datatype /dtype, dataset /d_typed and attribute /g1@t of that type",
    "delete /g1/c03..c19 (links back to compact)",
    "delete attributes b03..b11 (back to compact) and /g1@a1",
    "delete /d_compact, /g1/soft_contig, /hard_c00",
    "delete /g1@t, /d_typed, /dtype, /g1/dangling",
    "delete /g1 and its subtree",
    "group /g2 with 10 subgroups (dense) and chunked dataset /g2/d"};

int32_t
zoo_contig(int i)
{
    return (int32_t)(i * i * 3 - 7 * i + 11);
}

int16_t
zoo_compact(int i)
{
    return (int16_t)(1000 - 37 * i);
}

int32_t
zoo_attr_a(int a, int j)
{
    return (int32_t)(100 * a + 7 * j + 1);
}

hid_t
zoo_pair_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(zoo_pair_t));

    if (t < 0 || H5Tinsert(t, "a", offsetof(zoo_pair_t, a), H5T_NATIVE_INT32) < 0 ||
        H5Tinsert(t, "b", offsetof(zoo_pair_t, b), H5T_NATIVE_DOUBLE) < 0)
        swmr_h5fail("cannot build the compound type");
    return t;
}

hid_t
zoo_pair_file_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 12);

    if (t < 0 || H5Tinsert(t, "a", 0, H5T_STD_I32LE) < 0 || H5Tinsert(t, "b", 4, H5T_IEEE_F64LE) < 0)
        swmr_h5fail("cannot build the compound file type");
    return t;
}
