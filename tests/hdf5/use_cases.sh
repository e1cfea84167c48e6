#!/bin/sh
# make check-hdf5: HDF5 1.14.5's SWMR use-case programs (test_use_cases.sh:
# use_append_chunk, use_append_mchunks, use_disable_mdc_flushes) through the
# drivers, compared with legacy SWMR on sec2 (tests/hdf5/README.md).
exec bash "$(dirname "$0")/run" use_cases
