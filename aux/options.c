/*
 * Command line of vfd_swmr_aux: `vfd_swmr_aux [options] <md_file> <ud_base>`.
 *
 * Invariants:
 *  - One table (OPTIONS) names every option once; parsing, the duplicate
 *    check and the messages all come from it.
 *  - Pure: no output, no global state; every problem is one line in err and
 *    -1, so main() decides how to print it (and tests compare it exactly).
 *  - An explicit --tick_len/--max_lag wins over the same key in --vfd_config,
 *    whatever their order; --vfd_config wins over the defaults.
 *  - In the two-word form a value may not start with "--" (so that
 *    "--log_file --stats" is reported, not taken as a file named --stats);
 *    write --log_file=--x for such a name.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "aux.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Longest value echoed in a message. */
#define ECHO_MAX 64

enum kind { FLAG, PATH, UINT, CONFIG };

/* X(id, name, kind, min, max, unit) */
#define OPTIONS(X)                                                                                            \
    X(LOG_FILE, "log_file", PATH, 0, 0, NULL)                                                                 \
    X(POLLS, "polls_per_tick", UINT, AUX_MIN_POLLS, AUX_MAX_POLLS, "polls per tick")                          \
    X(STATS, "stats", FLAG, 0, 0, NULL)                                                                       \
    X(TICK_LEN, "tick_len", UINT, 0, VFDSWMR_MAX_TICK_LEN, "tenths of a second")                              \
    X(MAX_LAG, "max_lag", UINT, VFDSWMR_MIN_MAX_LAG, VFDSWMR_MAX_MAX_LAG, "ticks")                            \
    X(VERBOSE, "verbose", FLAG, 0, 0, NULL)                                                                   \
    X(VFD_CONFIG, "vfd_config", CONFIG, 0, 0, NULL)                                                           \
    X(HELP, "help", FLAG, 0, 0, NULL)                                                                         \
    X(VERSION, "version", FLAG, 0, 0, NULL)

#define OPT_ID(id, name, kind, lo, hi, unit) OPT_##id,
enum opt_id { OPTIONS(OPT_ID) NOPTS };
#define OPT_SPEC(id, name, kind, lo, hi, unit) {name, kind, lo, hi, unit},
static const struct spec {
    const char *name;
    enum kind kind;
    uint32_t min, max;
    const char *unit;
} specs[NOPTS] = {OPTIONS(OPT_SPEC)};

__attribute__((format(printf, 3, 4))) static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* What a message shows of a value: at most ECHO_MAX bytes, then "...". */
static const char *
shown(const char *v, char out[ECHO_MAX + 4])
{
    snprintf(out, ECHO_MAX + 4, "%.*s%s", ECHO_MAX, v, strlen(v) > ECHO_MAX ? "..." : "");
    return out;
}

static const char *
expected(const struct spec *s, char *buf, size_t len)
{
    switch (s->kind) {
    case UINT:
        snprintf(buf, len, "an integer from %" PRIu32 " to %" PRIu32 " (%s)", s->min, s->max, s->unit);
        return buf;
    case PATH:
        return "a path";
    case CONFIG:
        return "a configuration string";
    case FLAG:
        break;
    }
    return "nothing";
}

static int
parse_uint(const struct spec *s, const char *v, uint32_t *out, char *err, size_t errlen)
{
    uint64_t n = 0;
    bool digits = v[0] != '\0';
    char e[ECHO_MAX + 4], x[128];

    for (const char *p = v; *p && digits; p++) {
        digits = *p >= '0' && *p <= '9';
        if (digits && n <= UINT32_MAX)
            n = n * 10 + (uint64_t)(*p - '0');
    }
    if (!digits || n < s->min || n > s->max)
        return fail(err, errlen, "--%s=%s: %s; expected %s", s->name, shown(v, e),
                    digits ? "out of range" : "not a number", expected(s, x, sizeof x));
    *out = (uint32_t)n;
    return 0;
}

static int
check_path(const char *what, const char *v, char *err, size_t errlen)
{
    if (v[0] == '\0')
        return fail(err, errlen, "%s: empty path", what);
    if (strlen(v) > AUX_MAX_PATH)
        return fail(err, errlen, "%s: path longer than %d bytes", what, AUX_MAX_PATH);
    return 0;
}

/* The values given on the command line, before precedence is applied. */
struct given {
    bool seen[NOPTS];
    uint32_t tick_len, max_lag;
    const char *vfd_config;
};

static int
take_value(aux_opts_t *o, struct given *g, enum opt_id id, const char *v, char *err, size_t errlen)
{
    const struct spec *s = &specs[id];
    char what[64];

    snprintf(what, sizeof what, "--%s", s->name);
    switch (id) {
    case OPT_LOG_FILE:
        o->log_file = v;
        return check_path(what, v, err, errlen);
    case OPT_POLLS:
        return parse_uint(s, v, &o->polls_per_tick, err, errlen);
    case OPT_TICK_LEN:
        return parse_uint(s, v, &g->tick_len, err, errlen);
    case OPT_MAX_LAG:
        return parse_uint(s, v, &g->max_lag, err, errlen);
    case OPT_VFD_CONFIG:
        g->vfd_config = v;
        return 0;
    case OPT_STATS:
        o->stats = true;
        return 0;
    case OPT_VERBOSE:
        o->verbose = true;
        return 0;
    case OPT_HELP:
        o->help = true;
        return 0;
    case OPT_VERSION:
        o->version = true;
        return 0;
    case NOPTS:
        break;
    }
    return fail(err, errlen, "internal error: option %d", (int)id);
}

/* argv[*i] is "--name" or "--name=value"; consumes its value. */
static int
parse_option(aux_opts_t *o, struct given *g, int argc, char *const argv[], int *i, char *err, size_t errlen)
{
    const char *arg = argv[*i] + 2, *eq = strchr(arg, '='), *v;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    char e[ECHO_MAX + 4], x[128];
    int id;

    for (id = 0; id < NOPTS; id++)
        if (strlen(specs[id].name) == len && strncmp(specs[id].name, arg, len) == 0)
            break;
    if (id == NOPTS)
        return fail(err, errlen, "unknown option \"%s\"", shown(argv[*i], e));
    if (g->seen[id])
        return fail(err, errlen, "--%s given more than once", specs[id].name);
    g->seen[id] = true;
    if (specs[id].kind == FLAG) {
        if (eq)
            return fail(err, errlen, "--%s takes no value", specs[id].name);
        return take_value(o, g, (enum opt_id)id, NULL, err, errlen);
    }
    if (eq)
        v = eq + 1;
    else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
        v = argv[++*i];
    else
        return fail(err, errlen, "--%s: missing value; expected %s", specs[id].name,
                    expected(&specs[id], x, sizeof x));
    return take_value(o, g, (enum opt_id)id, v, err, errlen);
}

/* Precedence: explicit option > --vfd_config > default. */
static int
settle(aux_opts_t *o, const struct given *g, char *err, size_t errlen)
{
    if (g->vfd_config) {
        vfdswmr_config_t *cfg = malloc(sizeof *cfg); /* ~8 KiB: not on the stack */
        char why[VFDSWMR_CONFIG_ERRLEN];
        int rc;

        if (cfg == NULL)
            return fail(err, errlen, "out of memory");
        rc = vfdswmr_config_parse(g->vfd_config, cfg, why, sizeof why);
        if (rc == 0) {
            o->tick_len = cfg->tick_len;
            o->max_lag = cfg->max_lag;
            o->md_pages_reserved = cfg->md_pages_reserved;
            snprintf(o->under, sizeof o->under, "%s", cfg->under_name);
        }
        free(cfg);
        if (rc < 0)
            return fail(err, errlen, "--vfd_config: %s", why);
    }
    if (g->seen[OPT_TICK_LEN])
        o->tick_len = g->tick_len;
    if (g->seen[OPT_MAX_LAG])
        o->max_lag = g->max_lag;
    return 0;
}

void
aux_opts_defaults(aux_opts_t *o)
{
    *o = (aux_opts_t){.polls_per_tick = AUX_DEFAULT_POLLS, .tick_len = VFDSWMR_DEFAULT_TICK_LEN,
                      .max_lag = VFDSWMR_DEFAULT_MAX_LAG, .md_pages_reserved = VFDSWMR_DEFAULT_MD_PAGES_RESERVED};
    snprintf(o->under, sizeof o->under, "%s", VFDSWMR_DEFAULT_UNDER);
}

int
aux_opts_parse(aux_opts_t *o, int argc, char *const argv[], char *err, size_t errlen)
{
    struct given g = {0};
    const char *pos[2];
    int npos = 0;
    bool options = true;
    char e[ECHO_MAX + 4];

    aux_opts_defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options && strcmp(a, "--") == 0)
            options = false;
        else if (options && strncmp(a, "--", 2) == 0) {
            if (parse_option(o, &g, argc, argv, &i, err, errlen) < 0)
                return -1;
            if (o->help || o->version)
                return 0;
        }
        else if (options && a[0] == '-' && a[1] != '\0')
            return fail(err, errlen, "unknown option \"%s\"", shown(a, e));
        else if (npos == 2)
            return fail(err, errlen, "unexpected argument \"%s\" (only <md_file> and <ud_base> are expected)",
                        shown(a, e));
        else
            pos[npos++] = a;
    }
    if (npos < 2)
        return fail(err, errlen, npos == 0 ? "missing <md_file> and <ud_base>" : "missing <ud_base>");
    if (check_path("<md_file>", pos[0], err, errlen) < 0 || check_path("<ud_base>", pos[1], err, errlen) < 0)
        return -1;
    if (pos[1][strlen(pos[1]) - 1] == '/')
        return fail(err, errlen, "<ud_base> %s names a directory; give the base path of the updater files, "
                    "e.g. DIR/FILE.h5.md.ud", shown(pos[1], e));
    o->md_file = pos[0];
    o->ud_base = pos[1];
    return settle(o, &g, err, errlen);
}

void
aux_usage(FILE *fp)
{
    fputs("Usage: " AUX_PROG " [options] <md_file> <ud_base>\n"
          "\n"
          "Keeps a local copy of a VFD SWMR metadata file up to date by applying, in\n"
          "sequence, the updater files a vfd_swmr_writer publishes (generate_updater_files=1).\n"
          "\n"
          "  <md_file>  the local metadata file to maintain, on a POSIX file system local\n"
          "             to the readers (they find it with md_file_path/md_file_name); it\n"
          "             need not exist yet\n"
          "  <ud_base>  base path of the updater files <ud_base>.0, <ud_base>.1, ...: the\n"
          "             writer's updater_file_path (default: <its metadata file>.ud)\n"
          "\n"
          "Options, as --name value or --name=value:\n"
          "  --log_file PATH      log events with timestamps to PATH (truncated first;\n"
          "                       a regular file, never a symbolic link)\n"
          "  --polls_per_tick N   look for the next updater N times per tick, 1 to 1000\n"
          "                       (default 10)\n"
          "  --stats              print counters on exit\n"
          "  --tick_len T         the writer's tick length, tenths of a second, 0 to 36000\n"
          "                       (default 4)\n"
          "  --max_lag N          warn when the next updater has been missing while later\n"
          "                       ones exist, or unreadable, for over N ticks, 3 to 100000\n"
          "                       (default 7)\n"
          "  --verbose            log events to stdout as well\n"
          "  --vfd_config STRING  a configuration string as in HDF5_DRIVER_CONFIG: its\n"
          "                       tick_len, max_lag and md_pages_reserved apply unless\n"
          "                       given as options; under= is checked but not used (the\n"
          "                       local file is always written with POSIX I/O)\n"
          "  --help               print this text and exit\n"
          "  --version            print the version and exit\n"
          "\n"
          "Exit status: 0 after the writer's final updater or on SIGINT/SIGTERM, 1 on a\n"
          "damaged updater file (or one that is not a regular file), a local file or log\n"
          "file that is a symbolic link or not a regular file, or an I/O error on the\n"
          "local file, 2 on a usage error.\n",
          fp);
}

void
aux_version(FILE *fp)
{
    fprintf(fp, "%s (vfd-swmr) %s\n", AUX_PROG, PACKAGE_VERSION);
}
