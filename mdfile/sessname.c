/* The HDF5 file names its session; see sessname.h. */
#include "sessname.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
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

#define PREFIX_LEN (sizeof VFDSWMR_SESSNAME_PREFIX - 1)

size_t
vfdswmr_sessname_encode(const char *abs_path, char *out, size_t len)
{
    size_t n = strlen(abs_path);

    if (n < 2 || abs_path[0] != '/' || n > VFDSWMR_SESSNAME_MAX || PREFIX_LEN + n > len)
        return 0;
    memcpy(out, VFDSWMR_SESSNAME_PREFIX, PREFIX_LEN);
    memcpy(out + PREFIX_LEN, abs_path, n);
    return PREFIX_LEN + n;
}

int
vfdswmr_sessname_decode(const void *buf, size_t len, char *out, size_t outlen)
{
    const char *p = (const char *)buf + PREFIX_LEN;
    size_t n = len - PREFIX_LEN;

    if (outlen)
        out[0] = '\0';
    if (len < PREFIX_LEN + 2 || memcmp(buf, VFDSWMR_SESSNAME_PREFIX, PREFIX_LEN) != 0 || p[0] != '/' ||
        n > VFDSWMR_SESSNAME_MAX || n >= outlen || memchr(p, '\0', n) != NULL)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

int
vfdswmr_sessname_record(int h5_fd, const char *md_path)
{
    char *dir = vfdswmr_path_dir_dup(md_path), real[PATH_MAX], abs[VFDSWMR_SESSNAME_MAX + 2],
         value[VFDSWMR_SESSNAME_VALUE_MAX];
    const char *base = vfdswmr_path_base(md_path);
    size_t n;
    int k;

    if (dir == NULL)
        return -1;
    if (realpath(dir, real) == NULL) {
        free(dir);
        return -1;
    }
    free(dir);
    k = snprintf(abs, sizeof abs, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
    if (k < 0 || (size_t)k >= sizeof abs || (n = vfdswmr_sessname_encode(abs, value, sizeof value)) == 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return fsetxattr(h5_fd, VFDSWMR_SESSNAME_XATTR, value, n, 0);
}

/* The value on fd, decoded into out: 1, or 0. */
static int
read_fd(int fd, char *out, size_t outlen)
{
    char value[VFDSWMR_SESSNAME_VALUE_MAX];
    ssize_t n = fgetxattr(fd, VFDSWMR_SESSNAME_XATTR, value, sizeof value);

    return n > 0 && vfdswmr_sessname_decode(value, (size_t)n, out, outlen) == 0;
}

void
vfdswmr_sessname_erase(int h5_fd, const char *md_path)
{
    char now[VFDSWMR_SESSNAME_MAX + 1], real[PATH_MAX], *dir;

    if (!read_fd(h5_fd, now, sizeof now))
        return;
    /* recorded as the absolute form of md_path: compare the same way */
    if ((dir = vfdswmr_path_dir_dup(md_path)) == NULL)
        return;
    if (realpath(dir, real) != NULL) {
        size_t d = strcmp(real, "/") == 0 ? 0 : strlen(real);
        if (strncmp(now, real, d) == 0 && now[d] == '/' && strcmp(now + d + 1, vfdswmr_path_base(md_path)) == 0)
            (void)fremovexattr(h5_fd, VFDSWMR_SESSNAME_XATTR);
    }
    free(dir);
}

int
vfdswmr_sessname_read(const char *h5_name, char *out, size_t outlen)
{
    int fd = vfdswmr_open_regular(h5_name, O_RDONLY), rc;

    if (outlen)
        out[0] = '\0';
    if (fd < 0)
        return 0;
    rc = read_fd(fd, out, outlen);
    close(fd);
    return rc;
}

int
vfdswmr_sessname_find_fd(int h5_fd, char *out, size_t outlen)
{
    struct stat st;
    vfdswmr_mdhdr_t h;
    bool ours = false;
    int md;

    if (outlen)
        out[0] = '\0';
    if (fstat(h5_fd, &st) == 0 && read_fd(h5_fd, out, outlen) && (md = vfdswmr_open_md(out, O_RDONLY)) >= 0) {
        ours = vfdswmr_mdr_read_header(md, &h) == VFDSWMR_MD_OK && !vfdswmr_hdf5_id_foreign(&h, (uint64_t)st.st_ino);
        close(md);
    }
    if (!ours && outlen)
        out[0] = '\0';
    return ours;
}

int
vfdswmr_sessname_find(const char *h5_name, char *out, size_t outlen)
{
    int fd = vfdswmr_open_regular(h5_name, O_RDONLY), rc;

    if (outlen)
        out[0] = '\0';
    if (fd < 0)
        return 0;
    rc = vfdswmr_sessname_find_fd(fd, out, outlen);
    close(fd);
    return rc;
}
