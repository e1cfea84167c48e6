/*
 * vfdswmr.h - public interface of vfd-swmr, VFD SWMR for HDF5 >= 1.14 as
 * dynamically loaded virtual file drivers.
 *
 * Error contract (every function below, as HDF5's own API): a negative
 * herr_t on failure, with the reason on HDF5's error stack; nothing is
 * printed unless HDF5's automatic error printing is on (one exception: the
 * reader's refusal to write, below).
 *
 * Two drivers are provided as HDF5 plugins:
 *
 *   vfd_swmr_writer   the one process that writes the file (read-only opens
 *                     through it read through vfd_swmr_reader)
 *   vfd_swmr_reader   any number of processes that read it while it is
 *                     written; it refuses opens for writing or creation,
 *                     also on stderr (the one message the drivers print:
 *                     programs that copy files, nccopy or h5repack, hide
 *                     HDF5's error stack), and a program that reads a live
 *                     file and writes another runs with vfd_swmr_writer
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
 * durable                  0/1: make what is published survive    0
 *                          a machine crash (power loss, kernel
 *                          panic): fsync the HDF5 file before
 *                          each publish, fdatasync the metadata
 *                          and updater files and their
 *                          directories (README, "What a crash
 *                          costs"); needs a lower driver with a
 *                          file descriptor (sec2, log)
 * flush_raw_data           durable's former name, still accepted
 *                          (give one of the two)
 * publish                  writer: when a consistency point is    flush
 *                          published. flush: before the H5Fflush
 *                          (or, in SWMR-write mode, H5Dflush,
 *                          H5Oflush ...) that makes it returns,
 *                          so readers see it at their next
 *                          refresh and recovery restores it;
 *                          tick: only at the end of each tick
 *                          (readers see a flush within a tick; a
 *                          crash loses up to a tick of flushes).
 *                          The reader lag max_lag stays ticks
 *                          either way
 * md_file_path             directory of the metadata file         directory of
 *                          (at most VFDSWMR_MAX_PATH bytes)       the HDF5 file
 * md_file_name             file name of the metadata file         <HDF5 file
 *                          (no directory part)                    name>.md
 * updater_file_path        directory and base name of the         <metadata
 *                          updater files: <base>.<sequence>       file>.ud
 * log_file_path            log file, one per process; empty:      (none)
 *                          no log
 * pb_expansion_threshold   0 to 100: end a tick early, at a       0 (off)
 *                          flush, when the writer's page buffer
 *                          holds more than this many times the
 *                          page images it held when the tick
 *                          began (counted as at least 256 images,
 *                          1 MiB); also with tick_len=0
 * open_timeout             reader: how long to wait for the       100 (10 s)
 *                          metadata file when it must exist,
 *                          tenths of a second, 0 to 36000
 * keep_metadata_file       writer: 0/1, leave the metadata file   0
 *                          in place at close (for inspection;
 *                          removed all the same when publishing
 *                          had failed and the file got every page)
 * updater_keep_ticks       writer: an updater file is deleted     0 (= max_lag
 *                          this many ticks after the one it       + 1)
 *                          carries, 0 to 100000; 0 means
 *                          max_lag + 1
 * chunk_cache_size         writer, reader, vfd_chunk_cache: the   0 (off)
 *                          budget of the file's shared raw-data
 *                          chunk cache, bytes; K, M, G, T suffixes
 *                          (powers of 1024), e.g. 256M; up to 1T
 * chunk_cache_max_entry    largest chunk image cached, bytes      size / 4
 *                          (at most the size)
 * chunk_cache_dset_min     what each dataset keeps when others    min(10M,
 *                          need room (its minimum retention)      size / 16)
 * chunk_cache_tag          0/1: attribute raw reads to datasets   1
 *                          through HDF5's API context (only on
 *                          HDF5 versions checked: 1.14.5,
 *                          2.2.0);
 *                          otherwise through vfdswmr_cc_register
 * chunk_cache_readahead    0/1: when raw reads too small to be    1
 *                          cached miss at a steady stride (a
 *                          column of a chunk larger than HDF5's
 *                          own cache, a strided selection), load
 *                          a window ahead of them, growing from
 *                          64 KiB to chunk_cache_max_entry
 * versioned_max            writer: how much space HDF5 frees at   0
 *                          the end of the file, while a reader
 *                          may still read it, HDF5 may give to
 *                          new raw data at once when the writer
 *                          cannot keep a copy of the old bytes
 *                          for readers (updater files, 64 MiB
 *                          of copies in use, publish=tick),
 *                          bytes (K, M, G,
 *                          T as above, up to 1T). Raw data
 *                          written there is kept in the writer's
 *                          memory, as metadata is, until no
 *                          reader can read the old bytes (max_lag
 *                          ticks): up to three page images per
 *                          page of it -- and is not in the HDF5
 *                          file meanwhile, so programs that read
 *                          chunks from the file themselves
 *                          (PyTables' Blosc2 path, kerchunk) read
 *                          old bytes: only for programs that read
 *                          through HDF5. Otherwise (and beyond
 *                          it) such space is given to new data
 *                          once no reader can read it; meanwhile
 *                          new data goes above it, so a file can
 *                          close bigger than on sec2 by one such
 *                          free (docs/DESIGN.md, "Raw data space
 *                          and the end of allocation")
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

/* Longest value accepted for any path or file name key, in bytes. */
#define VFDSWMR_MAX_PATH 1024

/* Defaults of the configuration keys (see the table above). */
#define VFDSWMR_DEFAULT_TICK_LEN          4
#define VFDSWMR_DEFAULT_MAX_LAG           7
#define VFDSWMR_DEFAULT_MD_PAGES_RESERVED 4
#define VFDSWMR_DEFAULT_UNDER             "sec2"
#define VFDSWMR_DEFAULT_OPEN_TIMEOUT      100
#define VFDSWMR_DEFAULT_VERSIONED_MAX     0ULL /* raw data always in the HDF5 file */
/* Ranges of the integer keys. */
#define VFDSWMR_MAX_TICK_LEN          36000
#define VFDSWMR_MAX_CACHE_SIZE        ((unsigned long long)1 << 40) /* 1 TiB: byte-count keys */
#define VFDSWMR_MIN_MAX_LAG           3
#define VFDSWMR_MAX_MAX_LAG           100000
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
 *                         waiting for the end of the tick.
 *                         Fails while end of tick is disabled.
 * vfdswmr_disable_end_of_tick / vfdswmr_enable_end_of_tick
 *                         writer: hold back publication (e.g. around a group
 *                         of changes that belong together) and allow it
 *                         again; enabling publishes at once if a tick ended
 *                         meanwhile. Disabling twice, or enabling
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
#define VFDSWMR_WRITER_NONE    0 /* no metadata file: no writer since the reader opened the file */
#define VFDSWMR_WRITER_RUNNING 1 /* a live writer holds the metadata file */
#define VFDSWMR_WRITER_CLOSED  2 /* the writer closed the file cleanly: the HDF5 file is complete */
/* the writer is gone without closing: the reader keeps serving its last
 * snapshot, which stays valid; the next writer, or vfd_swmr_recover, turns
 * the HDF5 file into that snapshot */
#define VFDSWMR_WRITER_DIED 3
/* the writer runs but could not publish (e.g. disk full): the snapshot will
 * not advance; the writer completes the HDF5 file at close */
#define VFDSWMR_WRITER_FAILED  4
#define VFDSWMR_WRITER_UNKNOWN 5 /* readers through updater files (NFS): running or died cannot be told */

typedef struct vfdswmr_status_t {
    int is_writer;                    /* 1 for vfd_swmr_writer, 0 for vfd_swmr_reader */
    unsigned long long tick;          /* writer: last published tick; reader: tick of the adopted snapshot */
    unsigned long long session;       /* writer session id (0: no metadata file seen yet) */
    unsigned long long eoa;           /* end of allocated space in that snapshot */
    unsigned long long index_entries; /* entries in its index */
    unsigned long long pages_cached;  /* writer: page images held in memory */
    int writer_state;                 /* VFDSWMR_WRITER_* above (the writer itself: RUNNING or FAILED) */
    unsigned tick_len;                /* the writer's tick_len and max_lag (reader: as recorded in the */
    unsigned max_lag;                 /* metadata file; 0 before a writer was seen) */
    /* the newest tick the writer has published, read from the metadata file
     * when asked (writer: tick). A reader's lag in ticks is writer_tick - tick
     * while session is the writer's; 0: no writer seen */
    unsigned long long writer_tick;
} vfdswmr_status_t;
herr_t vfdswmr_get_status(hid_t file_id, vfdswmr_status_t *status);

/*
 * The ctl operations behind those functions, for H5FDctl() on the handle
 * H5Fget_vfd_handle() returns when its FAPL holds the property
 * VFDSWMR_HANDLE_PROPERTY (any value). When that property is an int, the
 * drivers set it to VFDSWMR_HANDLE_ACK: a file open through another driver
 * leaves it alone, and its handle is that driver's (for sec2 a pointer to
 * its descriptor), which must not be passed to H5FDctl. Op codes lie in
 * HDF5's range for experimental use (512-1023). GET_STATUS fills the
 * vfdswmr_status_t that *output points to (H5FDctl's output argument);
 * the older form, a vfdswmr_status_t * as the input, is still accepted.
 */
#define VFDSWMR_HANDLE_PROPERTY "vfdswmr_handle"
#define VFDSWMR_HANDLE_ACK      0x56534852 /* "VSHR" */
#define VFDSWMR_CTL_END_TICK    640
#define VFDSWMR_CTL_DISABLE_EOT 641
#define VFDSWMR_CTL_ENABLE_EOT  642
#define VFDSWMR_CTL_REFRESH     643
#define VFDSWMR_CTL_GET_STATUS  644

/*
 * The shared raw-data chunk cache (chunk_cache_* keys above): one cache per
 * open file, shared by all its datasets, inside vfd_swmr_writer,
 * vfd_swmr_reader and vfd_chunk_cache (a pass-through driver for files
 * without SWMR: HDF5_DRIVER=vfd_chunk_cache, its plugin directory on
 * HDF5_PLUGIN_PATH). It holds on-disk chunk images exactly as the file
 * holds them (write-through: every write through the driver updates or
 * drops what it overlaps), so a crash loses only memory. A reader that
 * adopts a new snapshot drops what the writer wrote since its previous one
 * (the writer's raw-data write log, "<metadata file>.raw"), or everything
 * when the log cannot tell. Datasets are told apart by
 * HDF5's API context (chunk_cache_tag) and by registration below; a dataset
 * is named by its object header address (what H5Oget_info3 + 
 * H5VLnative_token_to_addr give).
 */
#define VFDSWMR_CHUNK_CACHE_NAME  "vfd_chunk_cache"
#define VFDSWMR_CHUNK_CACHE_VALUE ((H5FD_class_value_t)31003)

typedef struct vfdswmr_chunk_cache_stats_t {
    unsigned long long lookups;       /* raw-data reads looked up (lookups = hits + misses) */
    unsigned long long hits;          /* ... served from the cache */
    unsigned long long misses;        /* ... read from the file */
    unsigned long long bytes_served;  /* bytes of hits */
    unsigned long long bytes_loaded;  /* bytes put into the cache */
    unsigned long long insertions;    /* chunk images put into the cache */
    unsigned long long evictions;     /* ... removed for room or by an evict call */
    unsigned long long invalidations; /* ... removed because the file changed under them */
    unsigned long long updates;       /* ... whose bytes a write replaced */
    unsigned long long entries;       /* now: images held */
    unsigned long long bytes;         /* now: bytes held */
} vfdswmr_chunk_cache_stats_t;

/* Set the budget (0: off, dropping everything), the largest image cached (0:
 * size / 4; never more than the size) and the per-dataset minimum retention (ULLONG_MAX: min(10 MiB,
 * size / 16)) of the file's cache, evicting what no longer fits. */
herr_t vfdswmr_chunk_cache_configure(hid_t file_id, unsigned long long size, unsigned long long max_entry,
                                     unsigned long long dset_min);
/* Statistics of a dataset (obj_id a dataset) or of the whole file. */
herr_t vfdswmr_chunk_cache_get_stats(hid_t obj_id, vfdswmr_chunk_cache_stats_t *stats);
/* Zero the counters of the file and of every dataset. */
herr_t vfdswmr_chunk_cache_reset_stats(hid_t file_id);
/* A dataset's minimum retention (ULLONG_MAX: the file's default) and
 * whether its chunks are cached at all (nocache also drops what is held). */
herr_t vfdswmr_chunk_cache_set_dataset(hid_t dset_id, unsigned long long min_bytes, int nocache);
/* Tell the cache where the dataset's chunks are (H5Dchunk_iter): reads are
 * attributed to it without the API context, and a read of part of a chunk
 * loads the whole chunk once. Call again after the dataset grew. */
herr_t vfdswmr_chunk_cache_register(hid_t dset_id);
/* Drop what the cache holds of a dataset (obj_id a dataset) or everything
 * (obj_id a file). */
herr_t vfdswmr_chunk_cache_evict(hid_t obj_id);
/* H5Dflush(dset_id) (HDF5's own chunk cache writes its dirty chunks through
 * the driver), then, when evict is set, drop what the cache holds of it. */
herr_t vfdswmr_chunk_cache_flush_dataset(hid_t dset_id, int evict);

/*
 * The ctl operations behind those functions (H5FDctl on the handle the
 * marker property gives, as above; every driver with the cache answers
 * them, also while the cache is off). `out` arguments: *output points to
 * the caller's structure, which the driver fills.
 *   CONFIGURE     in: const vfdswmr_chunk_cache_config_t *
 *   GET_STATS     in: const unsigned long long *dataset, NULL for the file;
 *                 out: vfdswmr_chunk_cache_stats_t
 *   RESET_STATS   -
 *   SET_DATASET   in: const vfdswmr_chunk_cache_dataset_t *
 *   EVICT         in: const unsigned long long *dataset, NULL for all
 *   REGISTER      in: const vfdswmr_chunk_cache_chunks_t * (replaces the
 *                 dataset's chunk map; n 0 forgets it)
 */
#define VFDSWMR_CTL_CC_CONFIGURE   660
#define VFDSWMR_CTL_CC_GET_STATS   661
#define VFDSWMR_CTL_CC_RESET_STATS 662
#define VFDSWMR_CTL_CC_SET_DATASET 663
#define VFDSWMR_CTL_CC_EVICT       664
#define VFDSWMR_CTL_CC_REGISTER    665

typedef struct vfdswmr_chunk_cache_config_t {
    unsigned long long size, max_entry, dset_min; /* as vfdswmr_chunk_cache_configure */
} vfdswmr_chunk_cache_config_t;
typedef struct vfdswmr_chunk_cache_dataset_t {
    unsigned long long dataset, min_bytes; /* as vfdswmr_chunk_cache_set_dataset */
    int nocache;
} vfdswmr_chunk_cache_dataset_t;
typedef struct vfdswmr_chunk_cache_chunks_t {
    unsigned long long dataset;
    size_t n;
    const unsigned long long *chunks; /* n pairs: address, size in the file */
} vfdswmr_chunk_cache_chunks_t;

/* The version of this library, e.g. "0.1.0". */
const char *vfdswmr_version(void);

#ifdef __cplusplus
}
#endif

#endif /* VFDSWMR_H */
