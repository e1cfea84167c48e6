/*
 * vfdswmr.h - public interface of vfd-swmr, VFD SWMR for HDF5 >= 1.14 as
 * dynamically loaded virtual file drivers.
 *
 * Two drivers are provided as HDF5 plugins:
 *
 *   vfd_swmr_writer   the one process that writes the file
 *   vfd_swmr_reader   any number of processes that read it while it is written
 *
 * Select one without changing a program:
 *
 *   HDF5_PLUGIN_PATH=<plugin dir> HDF5_DRIVER=vfd_swmr_writer \
 *   HDF5_DRIVER_CONFIG='tick_len=4;max_lag=7' ./my_writer
 *
 * or from C with vfdswmr_set_fapl_writer() / vfdswmr_set_fapl_reader() below
 * (link with -lvfdswmr).
 *
 * ------------------------------------------------------------------------
 * Configuration string
 * ------------------------------------------------------------------------
 * `key=value` pairs separated by ';'. Blanks around keys and values are
 * ignored. A backslash escapes the next character, so a path may contain
 * "\;", "\(", "\)" or "\\". Every key may appear once. Unknown keys,
 * malformed or out-of-range values, duplicates and over-long paths make
 * H5Fcreate/H5Fopen fail, with a message naming the key and the accepted
 * form on the HDF5 error stack; nothing is created or modified then.
 *
 * key                      meaning (unit)                         default
 * tick_len                 length of a tick, in tenths of a       4
 *                          second, 0 to 36000; 0 means ticks
 *                          end only by explicit calls
 * max_lag                  how many ticks a reader may lag the    7
 *                          writer, 3 to 100000; superseded
 *                          metadata is kept this long
 * md_pages_reserved        pages at the head of the metadata      4
 *                          file kept for header and index,
 *                          1 to 65536
 * presume_posix_semantics  0/1 (or false/true): the metadata      1
 *                          file and the HDF5 file are on a
 *                          POSIX file system local to the
 *                          reader, the writer maintains the
 *                          metadata file itself
 * maintain_metadata_file   0/1: the writer writes the metadata    1
 *                          file
 * generate_updater_files   0/1: the writer writes one updater     0
 *                          file per tick (for NFS readers)
 * flush_raw_data           0/1: raw data is made durable before   0
 *                          each tick's metadata is published
 * md_file_path             directory of the metadata file         directory of
 *                          (at most VFDSWMR_MAX_PATH bytes)       the HDF5 file
 * md_file_name             file name of the metadata file         <HDF5 file
 *                          (no directory part)                    name>.md
 * updater_file_path        directory and base name of the         <metadata
 *                          updater files: <base>.<sequence>       file>.ud
 * log_file_path            log file, one per process; empty:      (none)
 *                          no log
 * pb_expansion_threshold   0 to 100: end a tick early when the    0 (off)
 *                          dirty snapshot grows past this
 *                          multiple of its configured size
 * open_timeout             reader: how long to wait for the       100 (10 s)
 *                          metadata file when it must exist,
 *                          tenths of a second, 0 to 36000
 * keep_metadata_file       writer: 0/1, leave the metadata file   0
 *                          in place at close (for inspection)
 * updater_keep_ticks       writer: an updater file is deleted     0 (= max_lag
 *                          this many ticks after the one it       + 1)
 *                          carries, 0 to 100000; 0 means
 *                          max_lag + 1
 * under                    the lower driver: NAME or              sec2
 *                          NAME(its own configuration string),
 *                          e.g. under=core or
 *                          under=my_driver(a=1\;b=2) -- any
 *                          driver HDF5 can load by name
 *
 * The writer records tick_len and max_lag in the metadata file and readers
 * adopt them: leave both out of a reader's configuration. A reader that
 * gives one of them explicitly with a value other than the writer's is
 * refused at open (the message names both values). The writer and its
 * readers must agree on the metadata file's location (md_file_path,
 * md_file_name).
 */
#ifndef VFDSWMR_H
#define VFDSWMR_H

#include <hdf5.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Names under which HDF5 finds the drivers (HDF5_DRIVER, H5Pset_driver_by_name). */
#define VFDSWMR_WRITER_NAME "vfd_swmr_writer"
#define VFDSWMR_READER_NAME "vfd_swmr_reader"

/*
 * Driver class values. They are not registered with The HDF Group; they lie
 * in the range HDF5 leaves to third-party drivers (H5_VFD_RESERVED..H5_VFD_MAX)
 * and applications look the drivers up by name, not by value.
 */
#define VFDSWMR_WRITER_VALUE ((H5FD_class_value_t)31001)
#define VFDSWMR_READER_VALUE ((H5FD_class_value_t)31002)

/* Longest value accepted for any path or file name key, in bytes (as in the RFC). */
#define VFDSWMR_MAX_PATH 1024

/* Defaults of the configuration keys (see the table above). */
#define VFDSWMR_DEFAULT_TICK_LEN 4
#define VFDSWMR_DEFAULT_MAX_LAG 7
#define VFDSWMR_DEFAULT_MD_PAGES_RESERVED 4
#define VFDSWMR_DEFAULT_UNDER "sec2"
#define VFDSWMR_DEFAULT_OPEN_TIMEOUT 100
/* Ranges of the integer keys. */
#define VFDSWMR_MAX_TICK_LEN 36000
#define VFDSWMR_MIN_MAX_LAG 3
#define VFDSWMR_MAX_MAX_LAG 100000
#define VFDSWMR_MAX_MD_PAGES_RESERVED 65536

/*
 * Select the writer (or reader) driver on a file access property list, with
 * a configuration string as above (NULL or "" for the defaults). The driver
 * plugin is found through HDF5_PLUGIN_PATH, then through the directory the
 * plugins were installed into. Returns a negative value on failure, with the
 * reason on the HDF5 error stack.
 */
herr_t vfdswmr_set_fapl_writer(hid_t fapl_id, const char *config);
herr_t vfdswmr_set_fapl_reader(hid_t fapl_id, const char *config);

/*
 * ------------------------------------------------------------------------
 * Controlling ticks and snapshots
 * ------------------------------------------------------------------------
 * Each function below reaches the vfd-swmr driver of an open file (the
 * outermost one in the driver stack) and fails, with a message on the HDF5
 * error stack, when the file was not opened through one.
 *
 * vfdswmr_end_tick        writer: flush the file (H5Fflush, so the state is
 *                         consistent) and publish it to readers now, without
 *                         waiting for the end of the tick (RFC 3.1.2).
 *                         Fails while end of tick is disabled.
 * vfdswmr_disable_end_of_tick / vfdswmr_enable_end_of_tick
 *                         writer: hold back publication (e.g. around a group
 *                         of changes that belong together) and allow it
 *                         again; enabling publishes at once if a tick ended
 *                         meanwhile (RFC 3.1.3). Disabling twice, or enabling
 *                         when not disabled, is an error.
 * vfdswmr_refresh         reader: adopt the newest published snapshot now.
 *                         H5Drefresh/H5Grefresh/H5Orefresh do this too.
 * vfdswmr_get_status      either: the snapshot in use (see below).
 */
herr_t vfdswmr_end_tick(hid_t file_id);
herr_t vfdswmr_disable_end_of_tick(hid_t file_id);
herr_t vfdswmr_enable_end_of_tick(hid_t file_id);
herr_t vfdswmr_refresh(hid_t file_id);

/* vfdswmr_status_t.writer_state: what a reader knows of the writer. */
#define VFDSWMR_WRITER_NONE 0    /* no metadata file: no writer since the reader opened the file */
#define VFDSWMR_WRITER_RUNNING 1 /* a live writer holds the metadata file */
#define VFDSWMR_WRITER_CLOSED 2  /* the writer closed the file cleanly: the HDF5 file is complete */
#define VFDSWMR_WRITER_DIED 3    /* the writer is gone without closing: the reader keeps serving its last
                                    snapshot, which stays valid; the next writer, or vfd_swmr_recover,
                                    turns the HDF5 file into that snapshot */
#define VFDSWMR_WRITER_FAILED 4  /* the writer runs but could not publish (e.g. disk full): the snapshot will
                                    not advance; the writer completes the HDF5 file at close */
#define VFDSWMR_WRITER_UNKNOWN 5 /* readers through updater files (NFS): running or died cannot be told */

typedef struct vfdswmr_status_t {
    int is_writer;            /* 1 for vfd_swmr_writer, 0 for vfd_swmr_reader */
    unsigned long long tick;  /* writer: last published tick; reader: tick of the adopted snapshot */
    unsigned long long session;       /* writer session id (0: no metadata file seen yet) */
    unsigned long long eoa;           /* end of allocated space in that snapshot */
    unsigned long long index_entries; /* entries in its index */
    unsigned long long pages_cached;  /* writer: page images held in memory */
    int writer_state;                 /* VFDSWMR_WRITER_* above (the writer itself: RUNNING or FAILED) */
    unsigned tick_len;                /* the writer's tick_len and max_lag (reader: as recorded in the */
    unsigned max_lag;                 /* metadata file; 0 before a writer was seen) */
} vfdswmr_status_t;
herr_t vfdswmr_get_status(hid_t file_id, vfdswmr_status_t *status);

/*
 * The ctl operations behind those functions, for H5FDctl() on the handle
 * H5Fget_vfd_handle() returns when its FAPL holds the property
 * VFDSWMR_HANDLE_PROPERTY (any value). Op codes lie in HDF5's range for
 * experimental use (512-1023). GET_STATUS takes a vfdswmr_status_t * as
 * its input and fills it.
 */
#define VFDSWMR_HANDLE_PROPERTY "vfdswmr_handle"
#define VFDSWMR_CTL_END_TICK 640
#define VFDSWMR_CTL_DISABLE_EOT 641
#define VFDSWMR_CTL_ENABLE_EOT 642
#define VFDSWMR_CTL_REFRESH 643
#define VFDSWMR_CTL_GET_STATUS 644

/* The version of this library, e.g. "0.1.0". */
const char *vfdswmr_version(void);

#ifdef __cplusplus
}
#endif

#endif /* VFDSWMR_H */
