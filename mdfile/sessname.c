/* The HDF5 file names its session; see sessname.h. */
#include "sessname.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "format.h"
#include "mdreader.h"
#include "paths.h"
#include "safefile.h"
#include "testhook.h"

#define PREFIX_LEN (sizeof VFDSWMR_SESSNAME_PREFIX - 1)
#define HEX        16
#define PATH_AT    (PREFIX_LEN + 2 * (HEX + 1)) /* where the path starts */

size_t
vfdswmr_sessname_encode(const vfdswmr_sessname_t *r, char *out, size_t len)
{
    size_t n = strnlen(r->path, sizeof r->path);
    char head[PATH_AT + 1];

    if (n < 2 || n > VFDSWMR_SESSNAME_MAX || r->path[0] != '/' || PATH_AT + n > len)
        return 0;
    snprintf(head, sizeof head, "%s%016" PRIx64 " %016" PRIx64 " ", VFDSWMR_SESSNAME_PREFIX, r->dev, r->session);
    memcpy(out, head, PATH_AT);
    memcpy(out + PATH_AT, r->path, n);
    return PATH_AT + n;
}

/* 16 lower-case hex digits at p into *v: true, or false. */
static bool
take_hex(const char *p, uint64_t *v)
{
    *v = 0;
    for (int i = 0; i < HEX; i++) {
        int d = p[i] >= '0' && p[i] <= '9' ? p[i] - '0' : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10 : -1;
        if (d < 0)
            return false;
        *v = *v << 4 | (uint64_t)d;
    }
    return true;
}

int
vfdswmr_sessname_decode(const void *buf, size_t len, vfdswmr_sessname_t *r)
{
    const char *b = buf;
    size_t n = len - PATH_AT;

    memset(r, 0, sizeof *r);
    if (len < PATH_AT + 2 || memcmp(b, VFDSWMR_SESSNAME_PREFIX, PREFIX_LEN) != 0 || b[PREFIX_LEN + HEX] != ' ' ||
        b[PATH_AT - 1] != ' ' || !take_hex(b + PREFIX_LEN, &r->dev) ||
        !take_hex(b + PREFIX_LEN + HEX + 1, &r->session) || b[PATH_AT] != '/' || n > VFDSWMR_SESSNAME_MAX ||
        memchr(b + PATH_AT, '\0', n) != NULL) {
        memset(r, 0, sizeof *r);
        return -1;
    }
    memcpy(r->path, b + PATH_AT, n);
    r->path[n] = '\0';
    return 0;
}

/* The absolute form of path (its directory resolved) into out (len
 * bytes): 0, or -1 with errno. */
static int
absolute(const char *path, char *out, size_t len)
{
    char *dir = vfdswmr_path_dir_dup(path), real[PATH_MAX];
    int k;

    if (dir == NULL)
        return -1;
    if (realpath(dir, real) == NULL) {
        free(dir);
        return -1;
    }
    free(dir);
    k = snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real, vfdswmr_path_base(path));
    if (k < 0 || (size_t)k >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int
vfdswmr_sessname_record(int h5_fd, const char *md_path, uint64_t session, bool keep)
{
    vfdswmr_sessname_t r = {.session = session};
    char value[VFDSWMR_SESSNAME_VALUE_MAX];
    struct stat st;
    size_t n = 0;
    int e;

    if (fstat(h5_fd, &st) < 0)
        return -1;
    r.dev = (uint64_t)st.st_dev;
    if (absolute(md_path, r.path, sizeof r.path) == 0 && (n = vfdswmr_sessname_encode(&r, value, sizeof value)) == 0)
        errno = ENAMETOOLONG;
    else if (n > 0 && vfdswmr_test_flag("no_xattr"))
        errno = ENOTSUP; /* as a file system without extended attributes */
    else if (n > 0 && fsetxattr(h5_fd, VFDSWMR_SESSNAME_XATTR, value, n, 0) == 0)
        return 0;
    e = errno;
    if (!keep)
        vfdswmr_sessname_clear(h5_fd); /* never an older session's record instead */
    errno = e;
    return -1;
}

/* The attribute's value on fd into value: its length, or -1 (none, not
 * readable, no extended attributes). */
static ssize_t
read_value(int fd, char value[VFDSWMR_SESSNAME_VALUE_MAX])
{
    return vfdswmr_test_flag("no_xattr") ? -1
                                         : fgetxattr(fd, VFDSWMR_SESSNAME_XATTR, value, VFDSWMR_SESSNAME_VALUE_MAX);
}

/* value (n bytes, as read_value returned) decoded into *r: 1, or 0 (r zeroed). */
static int
decode_value(const char *value, ssize_t n, vfdswmr_sessname_t *r)
{
    if (n > 0 && vfdswmr_sessname_decode(value, (size_t)n, r) == 0)
        return 1;
    memset(r, 0, sizeof *r);
    return 0;
}

_Static_assert(sizeof VFDSWMR_SESSNAME_ENDED == sizeof VFDSWMR_SESSNAME_PREFIX, "an ended record keeps its length");

/* End the attribute on h5_fd whose value (n bytes, as read_value returned)
 * is value: a session's record is rewritten in place under the ended
 * prefix (sessname.h), an ended one stays, anything else goes. */
static void
end_value(int h5_fd, char *value, ssize_t n)
{
    if (n >= (ssize_t)PREFIX_LEN && memcmp(value, VFDSWMR_SESSNAME_ENDED, PREFIX_LEN) == 0)
        return; /* ended already */
    if (n >= (ssize_t)PREFIX_LEN && memcmp(value, VFDSWMR_SESSNAME_PREFIX, PREFIX_LEN) == 0) {
        memcpy(value, VFDSWMR_SESSNAME_ENDED, PREFIX_LEN);
        if (fsetxattr(h5_fd, VFDSWMR_SESSNAME_XATTR, value, (size_t)n, XATTR_REPLACE) == 0)
            return;
    }
    (void)fremovexattr(h5_fd, VFDSWMR_SESSNAME_XATTR);
}

int
vfdswmr_sessname_read_fd(int fd, vfdswmr_sessname_t *r)
{
    char value[VFDSWMR_SESSNAME_VALUE_MAX];

    return decode_value(value, read_value(fd, value), r);
}

void
vfdswmr_sessname_erase(int h5_fd, const char *md_path)
{
    vfdswmr_sessname_t now;
    char value[VFDSWMR_SESSNAME_VALUE_MAX], mine[VFDSWMR_SESSNAME_MAX + 1];
    ssize_t n = read_value(h5_fd, value);

    if (decode_value(value, n, &now) && absolute(md_path, mine, sizeof mine) == 0 && strcmp(now.path, mine) == 0)
        end_value(h5_fd, value, n);
}

void
vfdswmr_sessname_erase_session(int h5_fd, uint64_t session)
{
    vfdswmr_sessname_t now;
    char value[VFDSWMR_SESSNAME_VALUE_MAX];
    ssize_t n = read_value(h5_fd, value);

    if (decode_value(value, n, &now) && now.session == session)
        end_value(h5_fd, value, n);
}

int
vfdswmr_sessname_elsewhere(const char *h5_name, const char *md_path, vfdswmr_sessname_t *r)
{
    int fd = vfdswmr_open_regular(h5_name, O_RDONLY), rc = 0;
    char here[VFDSWMR_SESSNAME_MAX + 1];
    struct stat st;

    memset(r, 0, sizeof *r);
    if (fd < 0)
        return 0;
    if (vfdswmr_sessname_read_fd(fd, r) && fstat(fd, &st) == 0 && r->dev == (uint64_t)st.st_dev &&
        (absolute(md_path, here, sizeof here) < 0 || strcmp(here, r->path) != 0))
        rc = 1;
    if (!rc)
        memset(r, 0, sizeof *r);
    close(fd);
    return rc;
}

void
vfdswmr_sessname_clear(int h5_fd)
{
    char value[VFDSWMR_SESSNAME_VALUE_MAX];

    end_value(h5_fd, value, read_value(h5_fd, value));
}

int
vfdswmr_sessname_read(const char *h5_name, vfdswmr_sessname_t *r)
{
    int fd = vfdswmr_open_regular(h5_name, O_RDONLY), rc;

    memset(r, 0, sizeof *r);
    if (fd < 0)
        return 0;
    rc = vfdswmr_sessname_read_fd(fd, r);
    close(fd);
    return rc;
}

int
vfdswmr_sessname_find_fd(int h5_fd, vfdswmr_sessname_seal_fn sealed, char *out, size_t outlen)
{
    vfdswmr_sessname_t r;
    vfdswmr_mdhdr_t h;
    struct stat st;
    bool ours = false;
    int md, seal;

    if (outlen)
        out[0] = '\0';
    if (!vfdswmr_sessname_read_fd(h5_fd, &r) || fstat(h5_fd, &st) < 0 || r.dev != (uint64_t)st.st_dev ||
        strlen(r.path) >= outlen || (sealed && (seal = sealed(h5_fd)) != 1 && seal != -2))
        return 0;
    if ((md = vfdswmr_open_md(r.path, O_RDONLY)) >= 0) {
        /* any session of this file at the recorded place: the recorded one,
         * or (killed between the two) the one that took it over */
        ours = vfdswmr_mdr_read_header(md, &h) == VFDSWMR_MD_OK && h.hdf5_id == (uint64_t)st.st_ino;
        close(md);
    }
    if (ours)
        memcpy(out, r.path, strlen(r.path) + 1);
    return ours;
}

bool
vfdswmr_sessname_unsupported(int h5_fd)
{
    if (vfdswmr_test_flag("no_xattr"))
        return true;
    return fgetxattr(h5_fd, VFDSWMR_SESSNAME_XATTR, NULL, 0) < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP);
}

int
vfdswmr_sessname_find(const char *h5_name, vfdswmr_sessname_seal_fn sealed, char *out, size_t outlen)
{
    int fd = vfdswmr_open_regular(h5_name, O_RDONLY), rc;

    if (outlen)
        out[0] = '\0';
    if (fd < 0)
        return 0;
    rc = vfdswmr_sessname_find_fd(fd, sealed, out, outlen);
    close(fd);
    return rc;
}
