/*
 * craftmd: a crafted metadata file for FILE (tests/unit/craftmd.h), what an
 * attacker or a damaged disk hands recovery.
 *   craftmd FILE MD N LEN good|bad
 * N entries of LEN bytes whose images are holes (zeros), every checksum
 * that of LEN zero bytes -- with `bad`, the last entry's wrong. The header
 * names FILE's inode; FILE is made at least as long as the snapshot (a
 * sparse extension). Prints the snapshot's end of allocation. Exit status
 * 0, 1 on failure (the reason on stderr), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"
#include "craftmd.h"
#include "format.h"

#define PS 4096u

int
main(int argc, char **argv)
{
    vfdswmr_checksum_stream_t *cs;
    uint8_t zeros[PS] = {0};
    unsigned long n, len;
    uint64_t eoa;
    uint32_t sum;
    struct stat st;

    if (argc != 6 || (strcmp(argv[5], "good") != 0 && strcmp(argv[5], "bad") != 0)) {
        fputs("usage: craftmd FILE MD N LEN good|bad\n", stderr);
        return 2;
    }
    n = strtoul(argv[3], NULL, 0);
    len = strtoul(argv[4], NULL, 0);
    if (n == 0 || n > UINT32_MAX || len == 0 || len > UINT32_MAX || stat(argv[1], &st) < 0) {
        fprintf(stderr, "craftmd: bad arguments, or %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    if (NULL == (cs = vfdswmr_checksum_begin()))
        return 1;
    for (unsigned long done = 0; done < len; done += PS)
        vfdswmr_checksum_update(cs, zeros, len - done < PS ? len - done : PS);
    sum = vfdswmr_checksum_end(cs);
    if (craft_md(argv[2], PS, (uint32_t)n, (uint32_t)len, sum, strcmp(argv[5], "bad") == 0 ? sum ^ 1 : sum,
                 (uint64_t)st.st_ino, &eoa) < 0 ||
        ((uint64_t)st.st_size < eoa && truncate(argv[1], (off_t)eoa) < 0)) {
        fprintf(stderr, "craftmd: %s\n", strerror(errno));
        return 1;
    }
    printf("%" PRIu64 "\n", eoa);
    return 0;
}
