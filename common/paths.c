#include "paths.h"

#include <stdio.h>
#include <string.h>

int
vfdswmr_md_path(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len)
{
    const char *slash = strrchr(h5_name, '/');
    const char *base = slash ? slash + 1 : h5_name;
    int dir_len = slash ? (int)(slash - h5_name) : 1;
    const char *dir = slash ? h5_name : ".";
    int n;

    if (slash == h5_name) /* a file in / */
        dir_len = 0;
    if (cfg->md_file_path[0]) {
        dir = cfg->md_file_path;
        dir_len = (int)strlen(dir);
        while (dir_len > 1 && dir[dir_len - 1] == '/')
            dir_len--;
    }
    if (cfg->md_file_name[0])
        n = snprintf(out, len, "%.*s/%s", dir_len, dir, cfg->md_file_name);
    else
        n = snprintf(out, len, "%.*s/%s.md", dir_len, dir, base);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

int
vfdswmr_ud_base(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len)
{
    size_t n;

    if (cfg->updater_file_path[0]) {
        n = strlen(cfg->updater_file_path);
        if (n >= len)
            return -1;
        memcpy(out, cfg->updater_file_path, n + 1);
        return 0;
    }
    if (vfdswmr_md_path(cfg, h5_name, out, len) < 0)
        return -1;
    n = strlen(out);
    if (n + 3 >= len)
        return -1;
    memcpy(out + n, ".ud", 4);
    return 0;
}
