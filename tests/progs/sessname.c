/*
 * sessname: what an HDF5 file records as its session (mdfile/sessname.h),
 * for tests.
 *   sessname show FILE              print the recorded path, or "none"
 *   sessname find FILE              print the path the drivers would follow, or "none"
 *   sessname set FILE PATH SESSION  record PATH (absolute) for session SESSION (hex) on
 *                                   FILE's device, as a writer would
 *   sessname erase FILE             remove the record, whatever it names (a file system
 *                                   without extended attributes keeps none)
 * Exit status 0, 1 on failure (the reason on stderr), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sessname.h"
#include "superblock.h"

int
main(int argc, char **argv)
{
    char out[VFDSWMR_SESSNAME_MAX + 1], value[VFDSWMR_SESSNAME_VALUE_MAX];
    vfdswmr_sessname_t r;
    struct stat st;
    size_t n;

    if (argc == 3 && strcmp(argv[1], "show") == 0) {
        puts(vfdswmr_sessname_read(argv[2], &r) ? r.path : "none");
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "find") == 0) {
        puts(vfdswmr_sessname_find(argv[2], vfdswmr_sb_sealed_fd, out, sizeof out) ? out : "none");
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "set") == 0) {
        if (stat(argv[2], &st) < 0) {
            fprintf(stderr, "sessname: %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        r.dev = (uint64_t)st.st_dev;
        r.session = strtoull(argv[4], NULL, 16);
        snprintf(r.path, sizeof r.path, "%s", argv[3]);
        if ((n = vfdswmr_sessname_encode(&r, value, sizeof value)) == 0) {
            fprintf(stderr, "sessname: %s is not an absolute path that fits\n", argv[3]);
            return 1;
        }
        if (setxattr(argv[2], VFDSWMR_SESSNAME_XATTR, value, n, 0) < 0) {
            fprintf(stderr, "sessname: %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "erase") == 0) {
        if (removexattr(argv[2], VFDSWMR_SESSNAME_XATTR) < 0 && errno != ENODATA) {
            fprintf(stderr, "sessname: %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        return 0;
    }
    fputs("usage: sessname show|find|erase FILE | sessname set FILE PATH SESSION\n", stderr);
    return 2;
}
