#!/usr/bin/env python3
"""Watch a live HDF5 file through vfd_swmr_reader: print new rows of /samples and new
top-level groups as they appear, until the writer closes the file.

    python3 watch.py FILE [--poll SECONDS]

Waits for the file and for the writer's first flush if it starts first.
"""
import argparse
import time

import vfdswmr

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("file")
p.add_argument("--poll", type=float, default=0.1, help="seconds between refreshes")
a = p.parse_args()

while True:                     # the writer may not have created or flushed the file yet
    try:
        f = vfdswmr.File(a.file, "r")
        break
    except (FileNotFoundError, OSError) as e:
        if not isinstance(e, FileNotFoundError) and "no published snapshot yet" not in str(e):
            raise
        time.sleep(a.poll)

seen_rows, seen_groups, started = 0, set(), time.monotonic()
with f:
    while True:
        closed = vfdswmr.status(f).writer_state != "running"   # asked before the last refresh
        vfdswmr.refresh(f)      # newest snapshot, new top-level objects included
        for name in sorted(set(f) - seen_groups - {"samples"}, key=lambda s: (len(s), s)):
            print("group /%s rows=%d" % (name, f[name].attrs["rows"]))
            seen_groups.add(name)
        if "samples" in f:
            d = f["samples"]
            n = d.shape[0]
            if n > seen_rows:
                for i, v in enumerate(d[seen_rows:n], seen_rows):
                    print("row %d = %g" % (i, v))
                seen_rows = n
        if closed:
            break
        time.sleep(a.poll)
print("watch: the writer closed the file: %d rows, %d groups in %.1f s"
      % (seen_rows, len(seen_groups), time.monotonic() - started))
