#!/usr/bin/env python3
"""A live HDF5 writer in h5py's SWMR idiom, through vfd_swmr_writer.

    python3 writer.py FILE [--steps N] [--rows N] [--interval SECONDS]

Appends N rows (sample i = i / 4) to dataset /samples at each step, publishing
them with Dataset.flush() in SWMR-write mode, exactly as a legacy SWMR h5py
writer does; every 5 steps it also creates a group /stepK (attribute "rows":
how many rows there were) and publishes it with File.flush() -- creating
objects while readers watch, which legacy SWMR cannot do. Run watch.py FILE
beside it (or h5watch FILE/samples with HDF5_DRIVER=vfd_swmr_reader).
"""
import argparse
import time

import numpy as np
import vfdswmr  # registers the drivers; needs libvfdswmr (eval "$(scripts/env)")

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("file")
p.add_argument("--steps", type=int, default=40)
p.add_argument("--rows", type=int, default=5)
p.add_argument("--interval", type=float, default=0.25, help="seconds between steps")
a = p.parse_args()

# The writer driver for this file only: other files this program opens stay plain.
with vfdswmr.File(a.file, "w", config="tick_len=2;max_lag=7", libver="latest") as f:
    d = f.create_dataset("samples", shape=(0,), maxshape=(None,), chunks=(1024,), dtype="f8")
    f.swmr_mode = True          # h5py's SWMR idiom: from now on Dataset.flush() publishes
    for step in range(1, a.steps + 1):
        n = d.shape[0]
        d.resize((n + a.rows,))
        d[n:] = np.arange(n, n + a.rows) / 4
        d.flush()               # published within a tick (0.2 s here)
        if step % 5 == 0:
            g = f.create_group("step%d" % step)
            g.attrs["rows"] = n + a.rows
            f.flush()           # new objects: a whole-file flush
        time.sleep(a.interval)
print("writer: %d rows, %d groups; %s is a plain HDF5 file now" % (a.steps * a.rows, a.steps // 5, a.file))
