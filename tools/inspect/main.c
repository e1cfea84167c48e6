/*
 * vfd_swmr_inspect: show and verify a VFD SWMR session, live or dead, never
 * writing or locking anything (inspect.h; tools/inspect/vfd_swmr_inspect.1).
 *
 * Exit status: 0 shown / sound; 1 a problem found, or a file that cannot be
 * read; 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inspect.h"
#include "paths.h"

static const char usage[] =
    "usage: " PROG " [--config STRING] [--json] [--verify | --pages | --watch [SECONDS]] FILE\n"
    "       " PROG " [--config STRING] [--json] --updater PATH [FILE]\n"
    "Show what the VFD SWMR writer of the HDF5 file FILE and its readers are doing, and check their files.\n"
    "Nothing is written and no lock is taken: running it never disturbs a writer or a reader.\n"
    "  -c, --config STRING  the writer's driver configuration (md_file_path, md_file_name, md_pages_reserved,\n"
    "                       updater_file_path); default $HDF5_DRIVER_CONFIG when HDF5_DRIVER names a\n"
    "                       vfd-swmr driver. The metadata file: the one the configuration names; without\n"
    "                       md_file_path/md_file_name, the one FILE records as its writer's, then FILE.md\n"
    "      --verify         read every structure and check every checksum; exit 1 on any problem\n"
    "  -p, --pages, --index the newest snapshot's index, entry by entry\n"
    "  -u, --updater PATH   check the updater files PATH.<n> (PATH a directory: the default base name in it)\n"
    "  -w, --watch [SECONDS] a line per published tick, until interrupted or for SECONDS\n"
    "  -j, --json           JSON (schema in the manual page)\n"
    "  -h, --help           this text\n"
    "Exit status: 0 shown or sound, 1 a problem found or a file that cannot be read, 2 usage.\n";

/* The updater base for --updater PATH: PATH itself, or in a directory the
 * configuration's base name (default "<metadata file>.ud"). */
static int
updater_base(const insp_opts_t *o, const char *arg, char *out, size_t len)
{
    struct stat st;
    char md[VFDSWMR_MAX_PATH + 64];
    const char *name;

    if (stat(arg, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(out, len, "%s", arg);
        return 0;
    }
    if (o->cfg.updater_file_path[0]) {
        name = strrchr(o->cfg.updater_file_path, '/');
        name = name ? name + 1 : o->cfg.updater_file_path;
        return snprintf(out, len, "%s/%s", arg, name) >= (int)len ? -1 : 0;
    }
    if (o->file == NULL) {
        out_line(stderr, PROG ": --updater %s is a directory: give the updater files' base name (%s/NAME), or FILE",
                 arg, arg);
        return -1;
    }
    if (vfdswmr_md_path(&o->cfg, o->file, md, sizeof md) < 0)
        return -1;
    name = strrchr(md, '/') ? strrchr(md, '/') + 1 : md;
    return snprintf(out, len, "%s/%s.ud", arg, name) >= (int)len ? -1 : 0;
}

int
main(int argc, char **argv)
{
    enum { OPT_VERIFY = 256 };
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"verify", no_argument, NULL, OPT_VERIFY},
                                         {"pages", no_argument, NULL, 'p'},
                                         {"index", no_argument, NULL, 'p'},
                                         {"updater", required_argument, NULL, 'u'},
                                         {"watch", optional_argument, NULL, 'w'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    insp_opts_t o = {.config_text = vfdswmr_config_env()};
    const char *updater = NULL;
    bool verify = false, pages = false, watch = false;
    double seconds = 0;
    char err[1024], base[VFDSWMR_MAX_PATH + 128];
    insp_t s;
    int c, rc, modes;

    while ((c = getopt_long(argc, argv, "c:pu:w::jh", opts, NULL)) != -1)
        switch (c) {
        case 'c':
            o.config_text = optarg;
            break;
        case OPT_VERIFY:
            verify = true;
            break;
        case 'p':
            pages = true;
            break;
        case 'u':
            updater = optarg;
            break;
        case 'w': {
            const char *arg = optarg;
            char *end;
            /* "--watch 5 FILE": getopt leaves an optional argument's separate word
             * alone; a word after it that is a whole number of seconds is taken */
            if (arg == NULL && optind < argc - 1) {
                errno = 0;
                seconds = strtod(argv[optind], &end);
                if (errno == 0 && end != argv[optind] && *end == '\0')
                    arg = argv[optind++];
            }
            watch = true;
            if (arg) {
                errno = 0;
                seconds = strtod(arg, &end);
                if (errno || end == arg || *end || !(seconds > 0 && seconds <= 1e9)) { /* NaN fails too */
                    out_line(stderr, PROG ": --watch: \"%s\" is not a number of seconds (0 to 10^9)", arg);
                    return 2;
                }
            }
            break;
        }
        case 'j':
            o.json = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    modes = verify + pages + watch + (updater != NULL);
    if (modes > 1 || optind < argc - 1 || (optind == argc && updater == NULL)) {
        fprintf(stderr, PROG ": %s\n%s",
                modes > 1 ? "--verify, --pages, --watch and --updater are views of their own: give one"
                          : "give one HDF5 file",
                usage);
        return 2;
    }
    o.file = optind < argc ? argv[optind] : NULL;
    if (vfdswmr_config_parse(o.config_text, &o.cfg, err, sizeof err) < 0) {
        out_line(stderr, PROG ": bad configuration: %s", err);
        return 2;
    }
    if (updater) {
        if (updater_base(&o, updater, base, sizeof base) < 0)
            return 2;
        return insp_updaters(&o, base) == 0 ? 0 : 1;
    }
    if (insp_gather(&o, &s) < 0) {
        if (o.json) { /* JSON readers get an object too: the reason, as on stderr */
            fputs("{\"schema\": 1, \"file\": ", stdout);
            out_str(stdout, o.file);
            fputs(", \"error\": ", stdout);
            out_str(stdout, s.message);
            fputs("}\n", stdout);
        }
        insp_release(&s);
        return 1;
    }
    if (verify)
        rc = insp_verify(&o, &s);
    else if (pages)
        rc = insp_pages(&o, &s);
    else if (watch)
        rc = insp_watch(&o, &s, seconds);
    else
        rc = insp_show(&o, &s);
    insp_release(&s);
    return rc == 0 ? 0 : 1;
}
