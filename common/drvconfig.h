/*
 * Parser for the configuration string of every vfd-swmr driver and tool
 * ("drvconfig": the drivers' configuration, not autoconf's config.h).
 *
 * Grammar (the public header include/vfdswmr.h documents every key):
 *
 *   config  := segment { ';' segment }
 *   segment := blanks | pair       (empty segments are ignored)
 *   pair    := key '=' value
 *   key     := one of the names in vfdswmr_config_keys[]
 *   value   := text, where '\' escapes the next character (so "\;", "\(",
 *              "\)" and "\\" stand for ';', '(', ')' and '\')
 *   under   := NAME [ blanks '(' nested-config ')' ]
 *
 * Blanks (space, tab, CR, LF) around keys and values are ignored; escaped
 * blanks are kept. ';' splits only outside parentheses. The nested configuration of `under` is kept verbatim
 * (escapes included) and handed to the lower driver unchanged: parentheses
 * inside it must balance unless escaped.
 *
 * Every key may appear at most once. Values are range checked here; checks
 * that need a role (writer or reader) live in vfdswmr_config_check_writer().
 *
 * Error contract: functions return 0, or -1 with one line in the caller's
 * errbuf; nothing is printed or kept.
 */
#ifndef VFDSWMR_COMMON_DRVCONFIG_H
#define VFDSWMR_COMMON_DRVCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfdswmr.h" /* VFDSWMR_MAX_PATH and the documented defaults */

/* Longest driver name accepted for `under` (HDF5 itself has no fixed limit). */
#define VFDSWMR_MAX_DRIVER_NAME 64
/* Longest nested configuration accepted for `under`, in bytes. */
#define VFDSWMR_MAX_NESTED_CONFIG 4096
/* Size of the buffer that receives an error message. */
#define VFDSWMR_CONFIG_ERRLEN 512

typedef struct vfdswmr_config_t {
    uint32_t tick_len;          /* tenths of a second; 0: manual ticks only */
    uint32_t max_lag;           /* ticks, >= 3 */
    uint32_t md_pages_reserved; /* pages, >= 1 */
    bool presume_posix_semantics;
    bool maintain_metadata_file;
    bool generate_updater_files;
    bool durable;                                     /* keys durable and flush_raw_data (its former name) */
    bool publish_at_tick_only;                        /* publish=tick; false: publish=flush (the default) */
    uint32_t pb_expansion_threshold;                  /* 0..100, 0 disables */
    uint32_t open_timeout;                            /* tenths of a second a reader waits for the metadata file */
    bool keep_metadata_file;                          /* writer: leave the metadata file at close */
    uint32_t updater_keep_ticks;                      /* writer: ticks updater files are kept; 0: max_lag + 1 */
    uint64_t chunk_cache_size;                        /* bytes of raw-data chunk images cached; 0: no cache */
    uint64_t chunk_cache_max_entry;                   /* UINT64_MAX (not given): chunk_cache_size / 4 */
    uint64_t chunk_cache_dset_min;                    /* UINT64_MAX (not given): min(10 MiB, chunk_cache_size / 16) */
    bool chunk_cache_tag;                             /* attribute reads to datasets through HDF5's API context */
    bool chunk_cache_readahead;                       /* load windows ahead of strided small misses (ccfile.c) */
    uint64_t versioned_max;                           /* writer: the versioned zone's largest extent, bytes */
    char md_file_path[VFDSWMR_MAX_PATH + 1];          /* "" = directory of the HDF5 file */
    char md_file_name[VFDSWMR_MAX_PATH + 1];          /* "" = <HDF5 file name>.md */
    char updater_file_path[VFDSWMR_MAX_PATH + 1];     /* "" = <metadata file>.ud */
    char log_file_path[VFDSWMR_MAX_PATH + 1];         /* "" = no log */
    char under_name[VFDSWMR_MAX_DRIVER_NAME + 1];     /* lower driver, default "sec2" */
    char under_config[VFDSWMR_MAX_NESTED_CONFIG + 1]; /* "" = none */
    bool under_has_config;                            /* true when written as NAME(...) */
    uint32_t given;                                   /* bit i set: vfdswmr_config_keys[i] appeared in the string */
} vfdswmr_config_t;

/* The length of a tick in seconds: tick_len tenths of a second, and one
 * tenth for tick_len 0 (ticks end only when asked), wherever a length is
 * still needed (the writer's deadlines, vfd_swmr_aux's polls and lag). */
static inline double
vfdswmr_tick_seconds(uint32_t tick_len)
{
    return tick_len ? tick_len * 0.1 : 0.1;
}

/* Fill *cfg with the documented defaults. */
void vfdswmr_config_defaults(vfdswmr_config_t *cfg);

/*
 * Parse `text` (NULL or "" means all defaults) into *cfg, starting from the
 * defaults. Returns 0 on success. On failure returns -1, leaves *cfg in an
 * unspecified state, and writes into errbuf (errlen bytes, always
 * NUL-terminated when errlen > 0) one line that names the offending key (or
 * the position, when no key could be read) and the accepted form, e.g.
 *   max_lag=2: out of range; expected an integer from 3 to 100000 (ticks)
 */
int vfdswmr_config_parse(const char *text, vfdswmr_config_t *cfg, char *errbuf, size_t errlen);

/*
 * Writer-only consistency checks: at least one of maintain_metadata_file and
 * generate_updater_files must be set. Returns 0, or -1 with a message.
 */
int vfdswmr_config_check_writer(const vfdswmr_config_t *cfg, char *errbuf, size_t errlen);

/* The configuration the command-line tools take by default: $HDF5_DRIVER_CONFIG
 * when $HDF5_DRIVER names vfd_swmr_writer or vfd_swmr_reader, else NULL. */
const char *vfdswmr_config_env(void);

/* Whether `key` appeared in the parsed string (false: its value is the default). */
bool vfdswmr_config_given(const vfdswmr_config_t *cfg, const char *key);

/* NULL-terminated list of the accepted keys, in documentation order. */
extern const char *const vfdswmr_config_keys[];

#endif
