#include "paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvconfig.h"

const char *
vfdswmr_path_base(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

const char *
vfdswmr_path_dir(const char *path, size_t *len)
{
    const char *slash = strrchr(path, '/');

    *len = 1;
    if (slash == NULL)
        return ".";
    if (slash == path) /* a file in / */
        return "/";
    *len = (size_t)(slash - path);
    return path;
}

char *
vfdswmr_path_dir_dup(const char *path)
{
    size_t len;
    const char *dir = vfdswmr_path_dir(path, &len);

    return strndup(dir, len);
}

int
vfdswmr_md_path(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len)
{
    const char *base = vfdswmr_path_base(h5_name);
    size_t dir_len;
    const char *dir = vfdswmr_path_dir(h5_name, &dir_len);
    int n;

    if (cfg->md_file_path[0]) {
        dir = cfg->md_file_path;
        dir_len = strlen(dir);
        while (dir_len > 1 && dir[dir_len - 1] == '/')
            dir_len--;
    }
    else if (base == h5_name + 1) /* a file in / ("/"): "/<name>.md", one slash */
        dir_len = 0;
    if (cfg->md_file_name[0])
        n = snprintf(out, len, "%.*s/%s", (int)dir_len, dir, cfg->md_file_name);
    else
        n = snprintf(out, len, "%.*s/%s.md", (int)dir_len, dir, base);
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
