/*
 * Command line of vfd_swmr_aux: `vfd_swmr_aux [options] <md_file> <ud_base>`,
 * read with getopt_long (long options only, arguments returned in order).
 *
 * Invariants:
 *  - longopts[] names every option once and range[] gives the numeric ones
 *    their limits; every message is built from these two tables.
 *  - No output: getopt_long's diagnostics are off (opterr = 0, ':' leading
 *    the option string); every problem is one line in err and -1, so main()
 *    decides how to print it (and tests compare it exactly).
 *  - getopt_long's state is global: each parse resets it (optind = 0, glibc's
 *    full reset), so parsing may be repeated in a process, not concurrently.
 *  - Options match as getopt_long matches them: by the whole name or by a
 *    prefix no other option shares ("--tick" for --tick_len).
 *  - An explicit --tick_len/--max_lag wins over the same key in --vfd_config,
 *    whatever their order; --vfd_config wins over the defaults.
 *  - In the two-word form a value may not start with "--" (so that
 *    "--log_file --stats" is reported, not taken as a file named --stats);
 *    write --log_file=--x for such a name.
 */
#include <bsd/stdlib.h> /* strtonum */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "aux.h"
#include "errtext.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Longest value echoed in a message. */
#define ECHO_MAX 64

enum opt_id {
    OPT_LOG_FILE,
    OPT_POLLS,
    OPT_STATS,
    OPT_TICK_LEN,
    OPT_MAX_LAG,
    OPT_VERBOSE,
    OPT_VFD_CONFIG,
    OPT_HELP,
    OPT_VERSION,
    OPT_NOPTS
};

/* getopt_long returns VAL0 + id: clear of 1, '?', ':' and any optopt of "-x". */
#define VAL0 0x100

static const struct option longopts[OPT_NOPTS + 1] = {
    [OPT_LOG_FILE] = {"log_file", required_argument, NULL, VAL0 + OPT_LOG_FILE},
    [OPT_POLLS] = {"polls_per_tick", required_argument, NULL, VAL0 + OPT_POLLS},
    [OPT_STATS] = {"stats", no_argument, NULL, VAL0 + OPT_STATS},
    [OPT_TICK_LEN] = {"tick_len", required_argument, NULL, VAL0 + OPT_TICK_LEN},
    [OPT_MAX_LAG] = {"max_lag", required_argument, NULL, VAL0 + OPT_MAX_LAG},
    [OPT_VERBOSE] = {"verbose", no_argument, NULL, VAL0 + OPT_VERBOSE},
    [OPT_VFD_CONFIG] = {"vfd_config", required_argument, NULL, VAL0 + OPT_VFD_CONFIG},
    [OPT_HELP] = {"help", no_argument, NULL, VAL0 + OPT_HELP},
    [OPT_VERSION] = {"version", no_argument, NULL, VAL0 + OPT_VERSION},
    [OPT_NOPTS] = {NULL, 0, NULL, 0},
};

/* The numeric options' limits; unit NULL for the others. */
static const struct {
    long long min, max;
    const char *unit;
} range[OPT_NOPTS] = {
    [OPT_POLLS] = {AUX_MIN_POLLS, AUX_MAX_POLLS, "polls per tick"},
    [OPT_TICK_LEN] = {0, VFDSWMR_MAX_TICK_LEN, "tenths of a second"},
    [OPT_MAX_LAG] = {VFDSWMR_MIN_MAX_LAG, VFDSWMR_MAX_MAX_LAG, "ticks"},
};

/* What a message shows of a value: at most ECHO_MAX bytes, then "...". */
static const char *
shown(const char *v, char out[ECHO_MAX + 4])
{
    snprintf(out, ECHO_MAX + 4, "%.*s%s", ECHO_MAX, v, strlen(v) > ECHO_MAX ? "..." : "");
    return out;
}

/* What the value of an option with a value must be. */
static const char *
expected(int id, char *buf, size_t len)
{
    if (range[id].unit == NULL)
        return id == OPT_LOG_FILE ? "a path" : "a configuration string";
    snprintf(buf, len, "an integer from %lld to %lld (%s)", range[id].min, range[id].max, range[id].unit);
    return buf;
}

static int
parse_uint(int id, const char *v, uint32_t *out, char *err, size_t errlen)
{
    const char *why;
    long long n = strtonum(v, range[id].min, range[id].max, &why); /* why: NULL, "too small", ... */
    char e[ECHO_MAX + 4], x[128];

    /* Digits only: strtonum() also takes " 5", "+5" and "-1". */
    if (v[0] == '\0' || v[strspn(v, "0123456789")] != '\0')
        why = "not a number";
    else if (why != NULL)
        why = "out of range";
    if (why != NULL)
        return vfdswmr_errtext(err, errlen, "--%s=%s: %s; expected %s", longopts[id].name, shown(v, e), why,
                               expected(id, x, sizeof x));
    *out = (uint32_t)n;
    return 0;
}

static int
check_path(const char *what, const char *v, char *err, size_t errlen)
{
    if (v[0] == '\0')
        return vfdswmr_errtext(err, errlen, "%s: empty path", what);
    if (strlen(v) > AUX_MAX_PATH)
        return vfdswmr_errtext(err, errlen, "%s: path longer than %d bytes", what, AUX_MAX_PATH);
    return 0;
}

/* The command line as given, before precedence is applied. */
struct given {
    bool seen[OPT_NOPTS];
    const char *arg[OPT_NOPTS]; /* the values of options with one */
    uint32_t num[OPT_NOPTS];    /* the numeric options' values, checked */
    const char *pos[2];         /* <md_file>, <ud_base> */
    int npos;
};

static int
take_positional(struct given *g, const char *a, char *err, size_t errlen)
{
    char e[ECHO_MAX + 4];

    if (g->npos == 2)
        return vfdswmr_errtext(err, errlen, "unexpected argument \"%s\" (only <md_file> and <ud_base> are expected)",
                               shown(a, e));
    g->pos[g->npos++] = a;
    return 0;
}

/*
 * The getopt_long() answer c for the option word `arg`, whose value (optarg)
 * is the next word when `split`: 0, or -1 with the message.
 */
static int
take_option(struct given *g, int c, const char *arg, bool split, char *err, size_t errlen)
{
    int id = (c == '?' || c == ':' ? optopt : c) - VAL0; /* optopt: 0 unknown or ambiguous, a character for "-x" */
    char e[ECHO_MAX + 4], x[128];

    if (id < 0 || id >= OPT_NOPTS)
        return vfdswmr_errtext(err, errlen, "unknown option \"%s\"", shown(arg, e));
    if (g->seen[id])
        return vfdswmr_errtext(err, errlen, "--%s given more than once", longopts[id].name);
    g->seen[id] = true;
    if (c == '?') /* the only error left for a known option: a value after a flag */
        return vfdswmr_errtext(err, errlen, "--%s takes no value", longopts[id].name);
    if (c == ':' || (split && strncmp(optarg, "--", 2) == 0))
        return vfdswmr_errtext(err, errlen, "--%s: missing value; expected %s", longopts[id].name,
                               expected(id, x, sizeof x));
    g->arg[id] = optarg;
    if (range[id].unit)
        return parse_uint(id, optarg, &g->num[id], err, errlen);
    return id == OPT_LOG_FILE ? check_path("--log_file", optarg, err, errlen) : 0;
}

/* Precedence: explicit option > --vfd_config > default. */
static int
settle(aux_opts_t *o, const struct given *g, char *err, size_t errlen)
{
    if (g->arg[OPT_VFD_CONFIG]) {
        vfdswmr_config_t *cfg = malloc(sizeof *cfg); /* ~8 KiB: not on the stack */
        char why[VFDSWMR_CONFIG_ERRLEN];
        int rc;

        if (cfg == NULL)
            return vfdswmr_errtext(err, errlen, "out of memory");
        rc = vfdswmr_config_parse(g->arg[OPT_VFD_CONFIG], cfg, why, sizeof why);
        if (rc == 0) {
            o->tick_len = cfg->tick_len;
            o->max_lag = cfg->max_lag;
            o->md_pages_reserved = cfg->md_pages_reserved;
            snprintf(o->under, sizeof o->under, "%s", cfg->under_name);
        }
        free(cfg);
        if (rc < 0)
            return vfdswmr_errtext(err, errlen, "--vfd_config: %s", why);
    }
    if (g->seen[OPT_TICK_LEN])
        o->tick_len = g->num[OPT_TICK_LEN];
    if (g->seen[OPT_MAX_LAG])
        o->max_lag = g->num[OPT_MAX_LAG];
    return 0;
}

void
aux_opts_defaults(aux_opts_t *o)
{
    *o = (aux_opts_t){.polls_per_tick = AUX_DEFAULT_POLLS,
                      .tick_len = VFDSWMR_DEFAULT_TICK_LEN,
                      .max_lag = VFDSWMR_DEFAULT_MAX_LAG,
                      .md_pages_reserved = VFDSWMR_DEFAULT_MD_PAGES_RESERVED};
    snprintf(o->under, sizeof o->under, "%s", VFDSWMR_DEFAULT_UNDER);
}

int
aux_opts_parse(aux_opts_t *o, int argc, char *const argv[], char *err, size_t errlen)
{
    struct given g = {0};
    const char *ud;
    char e[ECHO_MAX + 4];
    int c;

    aux_opts_defaults(o);
    opterr = 0;
    optind = 0; /* glibc: start afresh, whatever an earlier parse left behind */
    /* "-": arguments come back in order, as 1. With no short options each
     * call takes whole words, starting at argv[at]: two when the value is
     * the next word. */
    for (int at = 1; (c = getopt_long(argc, argv, "-:", longopts, NULL)) != -1; at = optind) {
        if (c == 1 ? take_positional(&g, optarg, err, errlen) < 0
                   : take_option(&g, c, argv[at], optind - at == 2, err, errlen) < 0)
            return -1;
        if (g.seen[OPT_HELP] || g.seen[OPT_VERSION])
            break; /* what follows is not looked at */
    }
    o->log_file = g.arg[OPT_LOG_FILE];
    if (g.seen[OPT_POLLS])
        o->polls_per_tick = g.num[OPT_POLLS];
    o->stats = g.seen[OPT_STATS];
    o->verbose = g.seen[OPT_VERBOSE];
    o->help = g.seen[OPT_HELP];
    o->version = g.seen[OPT_VERSION];
    if (o->help || o->version)
        return 0;
    for (int i = optind; i < argc; i++) /* after "--" */
        if (take_positional(&g, argv[i], err, errlen) < 0)
            return -1;
    if (g.npos < 2)
        return vfdswmr_errtext(err, errlen, g.npos == 0 ? "missing <md_file> and <ud_base>" : "missing <ud_base>");
    ud = g.pos[1];
    if (check_path("<md_file>", g.pos[0], err, errlen) < 0 || check_path("<ud_base>", ud, err, errlen) < 0)
        return -1;
    if (ud[strlen(ud) - 1] == '/')
        return vfdswmr_errtext(err, errlen,
                               "<ud_base> %s names a directory; give the base path of the updater files, "
                               "e.g. DIR/FILE.h5.md.ud",
                               shown(ud, e));
    o->md_file = g.pos[0];
    o->ud_base = ud;
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
