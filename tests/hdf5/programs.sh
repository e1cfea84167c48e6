#!/bin/sh
# make check-hdf5: HDF5 1.14.5's single-process test programs (groups, links,
# datasets, object headers, ...) through vfd_swmr_writer, forked readers through
# vfd_swmr_reader, each compared with the same program on sec2 (tests/hdf5/README.md).
exec bash "$(dirname "$0")/run" programs
