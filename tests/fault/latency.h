/*
 * vfd_latency (tests/fault/latency.c): a test and benchmark driver plugin
 * that forwards to sec2 after sleeping a fixed time per read and per write
 * call, to stand for slow storage (a network file system, an object store)
 * underneath the other drivers:
 *
 *   HDF5_DRIVER=vfd_chunk_cache \
 *   HDF5_DRIVER_CONFIG='chunk_cache_size=64M;under=vfd_latency(read_latency_us=500)'
 *
 * Keys (key=value, ';' between pairs, blanks ignored, each at most once):
 *   read_latency_us   microseconds slept before every read call is passed
 *                     to sec2, 0 to 10000000 (10 s); default 0
 *   write_latency_us  the same for every write call; default 0
 * Anything else makes the open fail with "vfd_latency: bad configuration:
 * ..." on the HDF5 error stack, before any file is touched.
 *
 * It also counts the calls it passes on, which a benchmark reads with
 * H5FDctl on the handle H5Fget_vfd_handle gives for a FAPL holding
 * VFDSWMR_HANDLE_PROPERTY (include/vfdswmr.h), with
 * H5FD_CTL_ROUTE_TO_TERMINAL_VFD_FLAG so drivers stacked above it pass the
 * operation down:
 *
 *   vfd_latency_counts_t n;
 *   void *out = &n;
 *   H5FDctl(handle, VFD_LATENCY_CTL_GET_COUNTS,
 *           H5FD_CTL_ROUTE_TO_TERMINAL_VFD_FLAG | H5FD_CTL_FAIL_IF_UNKNOWN_FLAG, NULL, &out);
 */
#ifndef VFDSWMR_TESTS_FAULT_LATENCY_H
#define VFDSWMR_TESTS_FAULT_LATENCY_H

#define VFD_LATENCY_NAME   "vfd_latency"
#define VFD_LATENCY_VALUE  31098
#define VFD_LATENCY_MAX_US 10000000ULL

/* ctl ops (HDF5's range for experimental use, apart from include/vfdswmr.h's).
 * SET_LATENCY takes a const unsigned long long[2] as input: the new
 * read_latency_us and write_latency_us, in force from the next call (a
 * benchmark opens its files without delay and turns it on for the part it
 * times). */
#define VFD_LATENCY_CTL_GET_COUNTS  698
#define VFD_LATENCY_CTL_SET_LATENCY 699

typedef struct vfd_latency_counts_t {
    unsigned long long reads, read_bytes; /* every read call, whatever its memory type */
    unsigned long long raw_reads;         /* ... of them raw data (H5FD_MEM_DRAW) */
    unsigned long long raw_read_bytes;
    unsigned long long writes, write_bytes;
} vfd_latency_counts_t;

#endif
