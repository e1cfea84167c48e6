/*
 * vfd_swmr_recover: bring an HDF5 file whose vfd_swmr_writer died back to
 * the last snapshot the writer published (common/recover.h), so that plain
 * HDF5 reads it at once. The next writer that opens the file does the same
 * by itself; this command is for users who only want to read.
 *
 * Exit status: 0 recovered, or nothing to recover; 1 failure (nothing lost:
 * the metadata file stays); 2 usage; 3 a live writer holds the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drvconfig.h"
#include "h5err.h"
#include "io.h"
#include "marks.h"
#include "rawlog.h"
#include "mdlock.h"
#include "paths.h"
#include "recover.h"
#include "safefile.h"
#include "sessname.h"
#include "stack.h"
#include "superblock.h"

#define PROG "vfd_swmr_recover"

static const char usage[] =
    "usage: " PROG " [--config STRING] [--force] [--quiet] FILE\n"
    "Recover the HDF5 file FILE after its vfd_swmr_writer died: write the last published snapshot\n"
    "from its metadata file into FILE, so that any HDF5 program reads it.\n"
    "  -c, --config STRING  the writer's driver configuration (where the metadata file is: md_file_path,\n"
    "                       md_file_name; the lower driver: under=); default $HDF5_DRIVER_CONFIG when\n"
    "                       HDF5_DRIVER names a vfd-swmr driver, else the defaults. With no metadata file\n"
    "                       there, the one FILE records as its writer's (an extended attribute) is used;\n"
    "                       without md_file_path/md_file_name, that one first\n"
    "  -f, --force          accept a metadata file recorded for another inode (both files copied); with no\n"
    "                       metadata file, clear a dead writer's seal and take FILE as it is on disk\n"
    "  -q, --quiet          print nothing on success\n"
    "  -h, --help           this text\n"
    "Exit status: 0 recovered or nothing to recover, 1 failure, 2 usage, 3 a writer is running.\n";

static int die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int
die(int status, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (H5Eget_num(H5E_DEFAULT) > 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    return status;
}

/* Open and lock the metadata file: 0 (fd set), or an exit status. */
static int
lock_md(const char *md_path, const char *file, int *fd)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        struct stat st, now;
        vfdswmr_take_t lk;

        *fd = vfdswmr_open_md(md_path, O_RDWR);
        if (*fd == VFDSWMR_OPEN_LINK) {
            char why[8192];
            vfdswmr_md_link_text(md_path, why, sizeof why);
            return die(1, "%s; nothing done", why);
        }
        if (*fd == VFDSWMR_OPEN_NOT_REGULAR)
            return die(1, "metadata file %s is not a regular file", md_path);
        if (*fd < 0 && errno == ENOENT)
            return 0; /* no metadata file: see no_metadata_file */
        if (*fd < 0 || fstat(*fd, &st) < 0)
            return die(1, "cannot open metadata file %s: %s", md_path, strerror(errno));
        if ((lk = vfdswmr_mdlock_take(*fd)) != VFDSWMR_TAKEN) {
            int e = errno;
            close(*fd);
            return lk == VFDSWMR_TAKE_BUSY
                       ? die(3,
                             "%s: a writer is running, or another recovery (it holds metadata file %s); "
                             "nothing done",
                             file, md_path)
                       : die(1, "cannot lock metadata file %s: %s", md_path, strerror(e));
        }
        if (stat(md_path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
            return 0;
        close(*fd); /* replaced between open and lock: look again */
    }
    return die(1, "metadata file %s keeps being replaced", md_path);
}

/* The HDF5 file through the configuration's lower driver, or NULL (the
 * reason printed). */
static H5FD_t *
open_hdf5(const vfdswmr_config_t *cfg, const char *file, const char *md_path, unsigned flags)
{
    hid_t fapl;
    H5FD_t *lower;
    struct stat st;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if ((fapl = vfdswmr_lower_fapl(cfg, PROG)) < 0) {
        die(1, "cannot select the lower driver \"%s\"", cfg->under_name);
        return NULL;
    }
    lower = H5FDopen(file, flags, fapl, VFDSWMR_MAXADDR);
    H5Pclose(fapl);
    if (lower == NULL && flags == H5F_ACC_RDWR)
        die(1, "cannot open %s for writing%s%s; nothing done (the metadata file %s stays)", file,
            stat(file, &st) < 0 ? ": " : "", stat(file, &st) < 0 ? strerror(errno) : "", md_path);
    return lower;
}

/* The record of FILE's session (mdfile/sessname.h) names nothing to
 * recover any more: remove it -- the one naming md_path or session, or
 * (md_path NULL) any. */
static void
forget_record(const char *file, const char *md_path, uint64_t session)
{
    int fd = vfdswmr_open_regular(file, O_RDONLY);

    if (fd < 0)
        return;
    if (md_path) {
        vfdswmr_sessname_erase(fd, md_path);
        vfdswmr_sessname_erase_session(fd, session); /* an updater-only writer's, recovered from aux's copy */
    }
    else
        vfdswmr_sessname_clear(fd);
    close(fd);
}

/*
 * No metadata file. Nothing to recover -- unless the HDF5 file carries a
 * writer's seal (common/superblock.h): then its writer died and its
 * metadata file is elsewhere (another configuration) or lost, and plain
 * HDF5 refuses the file. Say so; with --force clear the seal, taking the
 * file as its writer left it on disk.
 */
static int
no_metadata_file(const vfdswmr_config_t *cfg, const char *file, const char *md_path, bool force, bool quiet)
{
    H5FD_t *lower = open_hdf5(cfg, file, md_path, H5F_ACC_RDONLY);
    vfdswmr_recover_io_t io;
    uint64_t size, addr;
    int found = 0, sealed = 0, rc = 0;

    if (lower == NULL) /* cannot be read: nothing this command can do either */
        goto nothing;
    vfdswmr_recover_io_lower(lower, &io);
    if (io.size(io.ctx, &size) < 0 || (found = vfdswmr_sb_find(io.read, io.ctx, size, &addr)) < 0 ||
        (found && (sealed = vfdswmr_recover_sealed(&io, addr)) == -1)) {
        H5FDclose(lower);
        return die(1, "cannot read %s: %s", file, strerror(errno));
    }
    if (sealed == 1 && !force)
        rc = die(1,
                 "%s was left by a vfd_swmr_writer that died (its superblock is sealed: plain HDF5 refuses it), but "
                 "there is no metadata file %s to recover it from: give the writer's md_file_path/md_file_name "
                 "with --config; if its metadata file is lost, --force clears the seal and leaves the file as its "
                 "writer left it on disk (it may mix the writer's last ticks); nothing done",
                 file, md_path);
    H5FDclose(lower);
    if (sealed != 1)
        goto nothing;
    if (rc != 0)
        return rc;
    if ((lower = open_hdf5(cfg, file, md_path, H5F_ACC_RDWR)) == NULL)
        return 1;
    vfdswmr_recover_io_lower(lower, &io);
    if (vfdswmr_recover_set_seal(&io, addr, false) < 0 || io.sync(io.ctx) < 0)
        rc = die(1, "cannot clear the seal of %s: %s", file, strerror(errno));
    if (H5FDclose(lower) < 0 && rc == 0)
        rc = die(1, "cannot close %s", file);
    if (rc == 0)
        forget_record(file, NULL, 0); /* the file as it is on disk: no session of it to find */
    if (rc == 0 && !quiet)
        printf(PROG ": %s: no metadata file %s: the seal of its dead writer cleared (--force); the file is as its "
                    "writer left it on disk and may mix its last ticks: check it\n",
               file, md_path);
    return rc;
nothing:
    if (!quiet)
        printf(PROG ": %s: nothing to recover: there is no metadata file %s (if its writer kept the metadata file "
                    "elsewhere, give the writer's md_file_path/md_file_name with --config)\n",
               file, md_path);
    return rc;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"force", no_argument, NULL, 'f'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *config = vfdswmr_config_env(), *file;
    bool force = false, quiet = false;
    vfdswmr_config_t cfg;
    char md_path[VFDSWMR_MAX_PATH + 64], rec[VFDSWMR_SESSNAME_MAX + 1], marks[VFDSWMR_MAX_PATH + 128], err[1024];
    int c, md_fd = -1, rc;
    vfdswmr_sessname_t recorded;
    bool named, elsewhere;
    H5FD_t *lower;
    struct stat st;
    vfdswmr_recover_io_t io;
    vfdswmr_recover_report_t rep;

    while ((c = getopt_long(argc, argv, "c:fqh", opts, NULL)) != -1)
        switch (c) {
        case 'c':
            config = optarg;
            break;
        case 'f':
            force = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    if (optind != argc - 1) {
        fputs(usage, stderr);
        return 2;
    }
    file = argv[optind];
    if (vfdswmr_config_parse(config, &cfg, err, sizeof err) < 0)
        return die(2, "bad configuration: %s", err);
    if (vfdswmr_md_path(&cfg, file, md_path, sizeof md_path) < 0)
        return die(2, "metadata file path too long for %s", file);
    /* A live writer -- also one keeping no metadata file, whose lock is on
     * the HDF5 file alone -- has the file: nothing to recover, nothing to
     * touch (its seal, its record). */
    {
        int fd = vfdswmr_open_regular(file, O_RDONLY), held = fd >= 0 ? vfdswmr_mdlock_hdf5_held(fd) : 0;
        if (fd >= 0)
            close(fd);
        if (held > 0)
            return die(3, "%s: a writer is running (it holds the file's writer lock); nothing done", file);
    }
    /* The session the file records (mdfile/sessname.h) comes first, wherever
     * its writer kept its metadata file; then the configuration's -- unless
     * the configuration names the metadata file: then that one. */
    named = vfdswmr_config_given(&cfg, "md_file_path") || vfdswmr_config_given(&cfg, "md_file_name");
    if (named && (rc = lock_md(md_path, file, &md_fd)) != 0)
        return rc;
    if (md_fd < 0 && vfdswmr_sessname_find(file, NULL, rec, sizeof rec) == 1 && strcmp(rec, md_path) != 0) {
        if ((rc = lock_md(rec, file, &md_fd)) != 0)
            return rc;
        if (md_fd >= 0) { /* else gone meanwhile: as if there were none */
            if (!quiet)
                printf(PROG ": %s: using metadata file %s, which the file records as its writer's\n", file, rec);
            memcpy(md_path, rec, strlen(rec) + 1);
        }
    }
    if (md_fd < 0 && (rc = lock_md(md_path, file, &md_fd)) != 0)
        return rc;
    if (md_fd < 0)
        return no_metadata_file(&cfg, file, md_path, force, quiet);
    elsewhere = vfdswmr_sessname_elsewhere(file, md_path, &recorded);
    if ((lower = open_hdf5(&cfg, file, md_path, H5F_ACC_RDWR)) == NULL)
        return 1;
    vfdswmr_recover_io_lower(lower, &io);
    rc = vfdswmr_recover_run(md_fd, md_path, &io, file, stat(file, &st) == 0 ? (uint64_t)st.st_ino : 0,
                             elsewhere ? &recorded : NULL, force, &rep, err, sizeof err);
    if (H5FDclose(lower) < 0 && rc == 0) {
        snprintf(err, sizeof err, "cannot close %s", file);
        rc = -1;
    }
    if (rc < 0)
        return die(1, "%s", err);
    if (!rep.needed) {
        if (!quiet)
            printf(PROG ": %s: nothing to recover: its writer closed it cleanly (metadata file %s kept as it is)\n",
                   file, md_path);
        return 0;
    }
    /* The HDF5 file holds the snapshot now (and is synced): the metadata file has done its work. */
    if (unlink(md_path) < 0)
        return die(1, "%s recovered, but the metadata file %s cannot be removed: %s", file, md_path, strerror(errno));
    /* the dead writer's read-mark table and raw-data log, if any: nobody uses them any more */
    if (vfdswmr_marks_name(marks, sizeof marks, md_path) == 0)
        unlink(marks);
    if (vfdswmr_rawlog_name(marks, sizeof marks, md_path) == 0)
        unlink(marks);
    if (vfdswmr_fsync_dir_of(md_path) < 0)
        return die(1, "%s recovered and the metadata file %s removed, but its directory cannot be synced: %s", file,
                   md_path, strerror(errno));
    forget_record(file, force ? NULL : md_path, rep.session); /* it names nothing now */
    close(md_fd);
    if (!quiet)
        printf(PROG ": %s: recovered tick %" PRIu64 " of writer session %016" PRIx64 ": %" PRIu32 " pages (%" PRIu64
                    " bytes of metadata) written back, end of file %" PRIu64 "\n",
               file, rep.tick, rep.session, rep.pages, rep.bytes, rep.eoa);
    return 0;
}
