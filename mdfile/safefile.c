/*
 * Safe creation and opening of files (safefile.h).
 *
 * Invariants:
 *  - Nothing here follows a symbolic link to create, truncate or write a
 *    file: temporaries are O_CREAT | O_EXCL | O_NOFOLLOW, files opened for
 *    writing O_NOFOLLOW.
 *  - Nothing here blocks on a FIFO or opens a device on purpose: paths are
 *    stat(2)ed first and opened O_NONBLOCK, and only a regular file is
 *    handed back.
 */
#include "safefile.h"

#include "io.h"
#include "paths.h"
#include "testhook.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
_Static_assert(sizeof ALPHABET - 1 == 64, "6 bits per character");

/* VFDSWMR_TEMP_RANDOM_LEN random characters of ALPHABET into out. 0, or -1 with errno. */
static int
random_chars(char out[VFDSWMR_TEMP_RANDOM_LEN])
{
    uint8_t bytes[VFDSWMR_TEMP_RANDOM_LEN];
    size_t got = 0;

    while (got < sizeof bytes) {
        ssize_t r = getrandom(bytes + got, sizeof bytes - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        got += (size_t)r;
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        out[i] = ALPHABET[bytes[i] & 63];
    return 0;
}

int
vfdswmr_create_temp(const char *target, char *tmp, size_t tmplen, mode_t mode)
{
    char rnd[VFDSWMR_TEMP_RANDOM_LEN];

    if (strlen(target) + VFDSWMR_TEMP_SUFFIX_LEN >= tmplen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (unsigned attempt = 0; attempt < VFDSWMR_TEMP_ATTEMPTS; attempt++) {
        int fd;

        if (random_chars(rnd) < 0)
            return -1;
        snprintf(tmp, tmplen, "%s.%.*s.tmp", target, (int)sizeof rnd, rnd);
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

bool
vfdswmr_is_temp_suffix(const char *s)
{
    if (strlen(s) != VFDSWMR_TEMP_SUFFIX_LEN || s[0] != '.' || strcmp(s + 1 + VFDSWMR_TEMP_RANDOM_LEN, ".tmp") != 0)
        return false;
    for (size_t i = 1; i <= VFDSWMR_TEMP_RANDOM_LEN; i++)
        if (memchr(ALPHABET, s[i], sizeof ALPHABET - 1) == NULL)
            return false;
    return true;
}

int
vfdswmr_open_regular(const char *path, int flags)
{
    int extra = O_NONBLOCK | O_CLOEXEC, fd, fl;
    struct stat st;

    if ((flags & O_ACCMODE) != O_RDONLY)
        extra |= O_NOFOLLOW;
    if (stat(path, &st) < 0) {
        /* what open() would say, reading (writing, a dangling link is ELOOP;
         * a file made since counts as made after) */
        if (errno == ENOENT && (flags & (O_ACCMODE | O_CREAT)) == O_RDONLY)
            return VFDSWMR_OPEN_FAILED;
    }
    else if (!S_ISREG(st.st_mode))
        goto not_regular;
    if ((fd = open(path, flags | extra, 0666)) < 0) {
        int e = errno;
        /* Swapped in since stat(): a directory opened for writing (EISDIR),
         * a FIFO opened write-only without a reader (ENXIO). */
        if ((e == EISDIR || e == ENXIO) && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            goto not_regular;
        errno = e;
        return VFDSWMR_OPEN_FAILED;
    }
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return VFDSWMR_OPEN_FAILED;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        goto not_regular;
    }
    if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return VFDSWMR_OPEN_FAILED;
    }
    return fd;
not_regular:
    errno = EINVAL;
    return VFDSWMR_OPEN_NOT_REGULAR;
}

int
vfdswmr_open_md(const char *path, int flags)
{
    struct stat st;
    int fd;

    if (lstat(path, &st) < 0) {
        if (errno == ENOENT && !(flags & O_CREAT))
            return VFDSWMR_OPEN_FAILED; /* nothing there: the usual answer of a probe, in one call */
    }
    else if (S_ISLNK(st.st_mode)) {
        errno = ELOOP;
        return VFDSWMR_OPEN_LINK;
    }
    /* a link swapped in since lstat() fails with ELOOP too (so does a loop
     * of links among the directories on the way: not a link here) */
    if ((fd = vfdswmr_open_regular(path, flags | O_NOFOLLOW)) == VFDSWMR_OPEN_FAILED && errno == ELOOP) {
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            return VFDSWMR_OPEN_LINK;
        errno = ELOOP;
    }
    return fd;
}

void
vfdswmr_md_link_text(const char *path, char *buf, size_t len)
{
    char to[4096], full[8192], *slash;
    ssize_t n = readlink(path, to, sizeof to - 1);
    int k;

    if (n < 0) {
        snprintf(buf, len, "metadata file %s is a symbolic link, which no writer, reader or vfd_swmr_recover uses",
                 path);
        return;
    }
    to[n] = '\0';
    /* the file it names: relative to the link's directory */
    k = to[0] == '/' || strchr(path, '/') == NULL
            ? snprintf(full, sizeof full, "%s", to)
            : snprintf(full, sizeof full, "%.*s/%s", (int)(strrchr(path, '/') - path), path, to);
    if (k < 0 || (size_t)k >= sizeof full)
        snprintf(full, sizeof full, "%s", to);
    slash = strrchr(full, '/');
    snprintf(buf, len,
             "metadata file %s is a symbolic link (to %s): writers make metadata files as regular files, and no "
             "writer, reader or vfd_swmr_recover uses one through a link (a writer or a recovery would write "
             "through it into another file); name the file itself (md_file_path=%.*s;md_file_name=%s), or "
             "remove the link",
             path, to, slash ? (int)(slash == full ? 1 : slash - full) : 1, slash ? full : ".",
             slash ? slash + 1 : full);
}

const char *
vfdswmr_path_kind(const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? "a symbolic link" : "missing";
    switch (st.st_mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a directory";
    case S_IFIFO:
        return "a FIFO";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    default:
        return "not a regular file";
    }
}

int
vfdswmr_create_named(const char *path, const void *buf, size_t len, mode_t mode, vfdswmr_file_id_t *id)
{
    char tmp[4096 + VFDSWMR_TEMP_SUFFIX_LEN + 1];
    struct stat st;
    int fd, e;

    if ((fd = vfdswmr_create_temp(path, tmp, sizeof tmp, mode)) < 0)
        return -1;
    if (vfdswmr_pwrite_all(fd, buf, len, 0) < 0 || fstat(fd, &st) < 0 || rename(tmp, path) < 0) {
        e = errno;
        goto fail;
    }
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return fd;
fail:
    unlink(tmp);
    close(fd);
    errno = e;
    return -1;
}

/* Give the new file fd its contents, owner and mode; its id into *id. */
static int
fill(int fd, const void *buf, size_t len, mode_t mode, uid_t uid, gid_t gid, vfdswmr_file_id_t *id)
{
    struct stat st;

    if (vfdswmr_pwrite_all(fd, buf, len, 0) < 0 || fstat(fd, &st) < 0 ||
        ((st.st_uid != uid || st.st_gid != gid) && fchown(fd, uid, gid) < 0) || fchmod(fd, mode) < 0)
        return -1;
    *id = (vfdswmr_file_id_t){st.st_dev, st.st_ino};
    return 0;
}

int
vfdswmr_create_linked(const char *path, const void *buf, size_t len, mode_t mode, uid_t uid, gid_t gid,
                      vfdswmr_file_id_t *id)
{
    char tmp[4096 + VFDSWMR_TEMP_SUFFIX_LEN + 1], *dir = vfdswmr_path_dir_dup(path);
    int fd, e;

    if (dir == NULL)
        return -1;
    /* unnamed until linked: nothing is left behind if we die on the way */
    fd = vfdswmr_test_flag("no_tmpfile") ? (errno = EOPNOTSUPP, -1) : open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    free(dir);
    if (fd >= 0) {
        snprintf(tmp, sizeof tmp, "/proc/self/fd/%d", fd);
        if (fill(fd, buf, len, mode, uid, gid, id) < 0) {
            e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        vfdswmr_test_kill_point("linking"); /* made, not named yet */
        if (linkat(AT_FDCWD, tmp, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 || errno == EEXIST) {
            e = errno;
            close(fd);
            errno = e;
            return e == EEXIST ? -1 : 0;
        }
        close(fd); /* no /proc: a named temporary instead */
    }
    /* no O_TMPFILE here (NFS, ...): a named temporary (a writer's open
     * removes those left behind, STALE_TEMP_AGE), linked, then removed */
    if ((fd = vfdswmr_create_temp(path, tmp, sizeof tmp, 0600)) < 0)
        return -1;
    if ((e = fill(fd, buf, len, mode, uid, gid, id) < 0 ? errno : 0) == 0) {
        vfdswmr_test_kill_point("linking"); /* made, not named yet: the temporary stays */
        e = link(tmp, path) < 0 ? errno : 0;
    }
    unlink(tmp);
    close(fd);
    errno = e;
    return e ? -1 : 0;
}

int
vfdswmr_names_file(const char *path, const vfdswmr_file_id_t *id)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return errno == ENOENT ? 0 : -1;
    return st.st_dev == id->dev && st.st_ino == id->ino;
}

void
vfdswmr_unlink_if_same(const char *path, const vfdswmr_file_id_t *id)
{
    if (vfdswmr_names_file(path, id) == 1)
        unlink(path);
}

int
vfdswmr_temps_each(const char *target, void (*fn)(const char *path, void *ctx), void *ctx)
{
    const char *base = vfdswmr_path_base(target);
    size_t blen = strlen(base);
    char *dir = vfdswmr_path_dir_dup(target), *path = NULL;
    DIR *dp = NULL;
    struct dirent *e;
    int rc = -1;

    if (dir == NULL || NULL == (path = malloc(strlen(dir) + 2 + blen + VFDSWMR_TEMP_SUFFIX_LEN)))
        goto out;
    if (NULL == (dp = opendir(dir))) {
        rc = errno == ENOENT ? 0 : -1;
        goto out;
    }
    while ((e = readdir(dp)) != NULL) {
        struct stat st;
        if (strncmp(e->d_name, base, blen) != 0 || !vfdswmr_is_temp_suffix(e->d_name + blen))
            continue;
        sprintf(path, "%s/%s", dir, e->d_name); /* fits: base + suffix, checked above */
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            fn(path, ctx);
    }
    rc = 0;
out:
    if (dp)
        closedir(dp);
    free(path);
    free(dir);
    return rc;
}
