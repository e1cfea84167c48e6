#!/bin/sh
# make check-hdf5: HDF5 1.14.5's legacy SWMR test programs (test_swmr.sh,
# test_vds_swmr.sh, flushrefresh): the writer through vfd_swmr_writer, the reader processes
# through vfd_swmr_reader, compared with legacy SWMR on sec2 (tests/hdf5/README.md).
exec bash "$(dirname "$0")/run" swmr flushrefresh
