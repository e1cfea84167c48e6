/*
 * Claiming the metadata file before the HDF5 file is touched: is a writer
 * alive (mdfile/mdlock.h), did one crash (recover from what it left), does
 * the metadata file belong to this HDF5 file at all -- and the registry of
 * this process's own writers, so that a program that deletes a file still
 * open in HDF5 (weak close) and creates a new one at the same path works as
 * on sec2.
 *
 * Invariant: when vfdswmr_claim_md() refuses, no file has been created,
 * opened for writing, truncated or changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forked.h"
#include "h5err.h"
#include "mdlock.h"
#include "mdreader.h"
#include "safefile.h"
#include "sessname.h"
#include "superblock.h"
#include "writer.h"

/* ---- this process's live writers ------------------------------------------ */

struct reg_entry {
    dev_t md_dev, h5_dev;
    ino_t md_ino, h5_ino;
    const vfdswmr_writer_t *w;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static struct reg_entry *reg;
static size_t reg_n, reg_cap;

/* A fork child gets the registry unlocked and whole (it closes its copies,
 * close.c close_in_child, and may open files of its own): fork waits until
 * no thread is inside it. */
static void
reg_fork_lock(void)
{
    pthread_mutex_lock(&reg_lock);
}

static void
reg_fork_unlock(void)
{
    pthread_mutex_unlock(&reg_lock);
}

static void
reg_install(void)
{
    (void)pthread_atfork(reg_fork_lock, reg_fork_unlock, reg_fork_unlock);
}

void
vfdswmr_registry_add(const vfdswmr_writer_t *w, const char *h5_name)
{
    struct reg_entry e = {.w = w};
    struct stat st;

    pthread_once(&reg_once, reg_install);

    if (vfdswmr_mdw_file_id(w->mdw, &e.md_dev, &e.md_ino) < 0 || stat(h5_name, &st) < 0)
        return; /* no metadata file, or no file on disk: nothing another open could collide with */
    e.h5_dev = st.st_dev;
    e.h5_ino = st.st_ino;
    pthread_mutex_lock(&reg_lock);
    if (reg_n == reg_cap) {
        size_t cap = reg_cap ? 2 * reg_cap : 8;
        struct reg_entry *p = realloc(reg, cap * sizeof *p);
        if (p == NULL) {
            pthread_mutex_unlock(&reg_lock);
            return; /* then a re-created file is refused: an error, never a wrong file */
        }
        reg = p;
        reg_cap = cap;
    }
    reg[reg_n++] = e;
    pthread_mutex_unlock(&reg_lock);
}

void
vfdswmr_registry_remove(const vfdswmr_writer_t *w)
{
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n; i++)
        if (reg[i].w == w) {
            reg[i] = reg[--reg_n];
            break;
        }
    if (reg_n == 0) {
        free(reg);
        reg = NULL;
        reg_cap = 0;
    }
    pthread_mutex_unlock(&reg_lock);
}

/* A fork child's copy of its parent's writer (common/forked.h): not this
 * process's writer -- the file is its parent's. */
static bool
inherited(const struct reg_entry *e)
{
    return e->w->base.fork_gen != vfdswmr_fork_gen();
}

/* Whose is the metadata file (dev, ino) that a live writer locks? */
typedef enum reg_owner_t {
    REG_NOT_OURS,  /* no writer of this process */
    REG_OURS_GONE, /* ours, and its HDF5 file is no longer the file at h5_name (deleted or replaced) */
    REG_OURS_SAME  /* ours, of that very file (opened twice) */
} reg_owner_t;

static reg_owner_t
registry_lookup(dev_t dev, ino_t ino, const char *h5_name)
{
    struct stat st;
    reg_owner_t rc = REG_NOT_OURS;
    bool gone = stat(h5_name, &st) < 0;

    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n; i++)
        if (reg[i].md_dev == dev && reg[i].md_ino == ino && !inherited(&reg[i])) {
            rc = gone || st.st_dev != reg[i].h5_dev || st.st_ino != reg[i].h5_ino ? REG_OURS_GONE : REG_OURS_SAME;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
    return rc;
}

/* Does a writer of this process write the file (dev, ino)? */
static bool
registry_has_hdf5(dev_t dev, ino_t ino)
{
    bool found = false;

    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < reg_n && !found; i++)
        found = reg[i].h5_dev == dev && reg[i].h5_ino == ino && !inherited(&reg[i]);
    pthread_mutex_unlock(&reg_lock);
    return found;
}

bool
vfdswmr_registry_writes(const char *h5_name)
{
    struct stat st;

    return stat(h5_name, &st) == 0 && registry_has_hdf5(st.st_dev, st.st_ino);
}

/* ---- the claim ---------------------------------------------------------------- */

static vfdswmr_claim_t
refuse(const char *fmt, const char *md_path, const char *h5_name)
{
    VFDSWMR_ERR(H5E_CANTOPENFILE, fmt, VFDSWMR_WRITER_NAME, md_path, h5_name);
    return VFDSWMR_CLAIM_REFUSED;
}

/* A crashed writer's metadata file, locked by us: does it belong to this
 * HDF5 file? (Read with the load protocol; its header names the file.) */
static int
check_owner(int fd, const char *md_path, const char *h5_name)
{
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdsnap_t s;
    struct stat st;
    char why[256];
    uint64_t ino = stat(h5_name, &st) == 0 ? (uint64_t)st.st_ino : 0;

    vfdswmr_mdr_opts_default(&o);
    if (vfdswmr_mdr_load(&io, &o, &s, why, sizeof why) != VFDSWMR_MD_OK) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: metadata file %s, left by a writer that is no longer running, cannot be read (%s): it "
                    "cannot be used to recover \"%s\"; nothing was changed",
                    VFDSWMR_WRITER_NAME, md_path, why, h5_name);
        return -1;
    }
    vfdswmr_mdsnap_free(&s);
    if (s.hdr.hdf5_id != 0 && ino == 0) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: \"%s\" does not exist, but metadata file %s, left by a writer of it that died, does: "
                    "nothing was changed (put the HDF5 file back and recover it, or remove the metadata file)",
                    VFDSWMR_WRITER_NAME, h5_name, md_path);
        return -1;
    }
    if (vfdswmr_hdf5_id_foreign(&s.hdr, ino)) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: metadata file %s belongs to another HDF5 file (inode %" PRIu64 ", but \"%s\" is inode %" PRIu64
                    "): a stale or foreign metadata file (two files with the same name sharing md_file_path?); "
                    "nothing was changed: remove it if it is stale, or use another md_file_path",
                    VFDSWMR_WRITER_NAME, md_path, s.hdr.hdf5_id, h5_name, ino);
        return -1;
    }
    return 0;
}

/*
 * The HDF5 file itself (fd, opened read-only by the caller; -1: not there
 * yet, or not a file, which the lower driver will say): a live writer holds
 * its writer lock there too (mdlock.h), which still refuses a second writer
 * when the metadata file was removed or moved. FREE, AGAIN (this process's
 * own writer has it) or REFUSED.
 */
static vfdswmr_claim_t
check_hdf5_lock(int fd, const char *h5_name, const char *md_path)
{
    struct stat st;
    int held;

    if (fd < 0)
        return VFDSWMR_CLAIM_FREE;
    held = fstat(fd, &st) == 0 ? vfdswmr_mdlock_hdf5_held(fd) : -1;
    if (held <= 0)
        return VFDSWMR_CLAIM_FREE;
    if (registry_has_hdf5(st.st_dev, st.st_ino))
        return VFDSWMR_CLAIM_AGAIN;
    {
        vfdswmr_sessname_t rec;
        bool named = vfdswmr_sessname_read(h5_name, &rec) == 1,
             none = named && !strcmp(rec.path, VFDSWMR_SESSNAME_NONE);
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: another writer has \"%s\" open (it holds the file's writer lock; %s%s%s); nothing was "
                    "changed",
                    VFDSWMR_WRITER_NAME, h5_name,
                    none    ? "it keeps no metadata file"
                    : named ? "its metadata file is recorded as "
                            : "its metadata file should be ",
                    none    ? ""
                    : named ? rec.path
                            : md_path,
                    "");
    }
    return VFDSWMR_CLAIM_REFUSED;
}

/* The metadata file (st) is locked by a live writer: ours, or another's. */
static vfdswmr_claim_t
held_by_writer(const struct stat *st, const char *md_path, const char *h5_name)
{
    switch (registry_lookup(st->st_dev, st->st_ino, h5_name)) {
    case REG_OURS_GONE: /* our own writer of a file that is gone: make way */
        return VFDSWMR_CLAIM_REPLACE;
    case REG_OURS_SAME: /* the same file again: HDF5 will find it open and share it */
        return VFDSWMR_CLAIM_AGAIN;
    case REG_NOT_OURS:
        break;
    }
    return refuse("%s: metadata file %s is locked: another writer has \"%s\" open (or is recovering it); nothing "
                  "was changed",
                  md_path, h5_name);
}

/* One look at the metadata file's name; *raced: the file there was replaced
 * between open and lock (look again). */
static vfdswmr_claim_t
claim_once(vfdswmr_writer_t *w, const char *h5_name, int *old_fd, bool *raced)
{
    struct stat st, now;
    int fd = vfdswmr_open_md(w->md_path, O_RDWR);
    vfdswmr_take_t lk;
    char why[8192];

    if (fd == VFDSWMR_OPEN_LINK) {
        vfdswmr_md_link_text(w->md_path, why, sizeof why);
        return refuse("%s: %s; nothing was changed (\"%s\")", why, h5_name);
    }
    if (fd == VFDSWMR_OPEN_NOT_REGULAR)
        return refuse("%s: metadata file %s is not a regular file; nothing was changed (\"%s\")", w->md_path, h5_name);
    if (fd < 0 && errno == ENOENT)
        return VFDSWMR_CLAIM_FREE; /* no writer, alive or dead */
    if (fd < 0 || fstat(fd, &st) < 0) {
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open metadata file %s: %s; nothing was changed", VFDSWMR_WRITER_NAME,
                    w->md_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return VFDSWMR_CLAIM_REFUSED;
    }
    if ((lk = vfdswmr_mdlock_take(fd)) != VFDSWMR_TAKEN) {
        if (lk == VFDSWMR_TAKE_ERROR)
            VFDSWMR_ERR(H5E_CANTOPENFILE,
                        "%s: cannot lock metadata file %s: %s (the file system must support fcntl locks); "
                        "nothing was changed",
                        VFDSWMR_WRITER_NAME, w->md_path, strerror(errno));
        close(fd);
        return lk == VFDSWMR_TAKE_ERROR ? VFDSWMR_CLAIM_REFUSED : held_by_writer(&st, w->md_path, h5_name);
    }
    /* Ours now. Still the file at that name? */
    *raced = stat(w->md_path, &now) < 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino;
    if (*raced || check_owner(fd, w->md_path, h5_name) < 0) {
        close(fd);
        return *raced ? VFDSWMR_CLAIM_FREE : VFDSWMR_CLAIM_REFUSED;
    }
    *old_fd = fd;
    return VFDSWMR_CLAIM_CRASHED;
}

_Static_assert(sizeof(((vfdswmr_writer_t *)0)->md_path) >= VFDSWMR_SESSNAME_MAX + 1, "a record fits md_path");

/* The claim at w->md_path. */
static vfdswmr_claim_t
claim_at(vfdswmr_writer_t *w, const char *h5_name, int *old_fd)
{
    vfdswmr_claim_t rc;
    bool raced = false;

    for (int attempt = 0; attempt < 8; attempt++) {
        rc = claim_once(w, h5_name, old_fd, &raced);
        /* a crashed writer's file is ours, locked, exactly then (writer.h) */
        VFDSWMR_ASSERT((rc == VFDSWMR_CLAIM_CRASHED) == (*old_fd >= 0));
        if (!raced)
            return rc;
    }
    return refuse("%s: metadata file %s keeps being replaced by other processes; nothing was changed (\"%s\")",
                  w->md_path, h5_name);
}

vfdswmr_claim_t
vfdswmr_claim_md(vfdswmr_writer_t *w, const char *h5_name, int *old_fd)
{
    char configured[sizeof w->md_path], rec[VFDSWMR_SESSNAME_MAX + 1];
    vfdswmr_claim_t rc;

    int h5 = vfdswmr_open_regular(h5_name, O_RDONLY), found = 0; /* one look at the HDF5 file for both */

    *old_fd = -1;
    rc = check_hdf5_lock(h5, h5_name, w->md_path);
    /* The session the HDF5 file records comes first, wherever its writer
     * kept its metadata file (reached by another name or configuration):
     * this session takes its place there, as at the configured name.
     * Whatever the superblock says: recovery refuses a snapshot an
     * unsealed file does not hold (recover.c). */
    if (rc == VFDSWMR_CLAIM_FREE && h5 >= 0)
        found = vfdswmr_sessname_find_fd(h5, NULL, rec, sizeof rec);
    if (h5 >= 0)
        close(h5);
    if (rc != VFDSWMR_CLAIM_FREE)
        return rc;
    if (found != 1 || strcmp(rec, w->md_path) == 0)
        return claim_at(w, h5_name, old_fd);
    memcpy(configured, w->md_path, sizeof configured);
    memcpy(w->md_path, rec, strlen(rec) + 1); /* fits: VFDSWMR_SESSNAME_MAX */
    switch (rc = claim_at(w, h5_name, old_fd)) {
    case VFDSWMR_CLAIM_FREE: /* gone meanwhile: as if nothing were recorded */
        memcpy(w->md_path, configured, sizeof configured);
        return claim_at(w, h5_name, old_fd);
    case VFDSWMR_CLAIM_REPLACE:
    case VFDSWMR_CLAIM_AGAIN:
        /* this process's own writer of a file of this inode, found by its
         * record only: never replaced or shared through a record */
        rc = refuse("%s: metadata file %s, which \"%s\" records as its session's, belongs to a writer of this "
                    "process; nothing was changed",
                    w->md_path, h5_name);
        memcpy(w->md_path, configured, sizeof configured);
        return rc;
    case VFDSWMR_CLAIM_REFUSED:
        return rc;
    case VFDSWMR_CLAIM_CRASHED:
        break;
    }
    VFDSWMR_LOG(&w->log, "open", "using metadata file %s, which \"%s\" records as its session's (configured: %s)",
                w->md_path, h5_name, configured);
    return rc;
}
