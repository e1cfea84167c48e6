#!/bin/sh
# make check-hdf5: the modules of HDF5 1.14.5's testhdf5 through vfd_swmr_writer,
# each compared with the same module on sec2 (tests/hdf5/README.md).
exec bash "$(dirname "$0")/run" testhdf5
