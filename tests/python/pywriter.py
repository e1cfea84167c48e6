"""pywriter: an h5py writer of a row file (tests/progs/rows.h) through vfd_swmr_writer,
driven line by line from stdin like tests/progs/rowwriter.c, with the same answers.

    pywriter.py FILE CONFIG

Creates FILE (vfdswmr.File, libver="latest") with dataset /rows (int64, chunks of
256 rows, unlimited, fill value 0) and group /groups, calls File.flush() and prints
"ready 0". Then, one answer line per command:

  append N    N more rows, then File.flush()               "flushed TOTAL"
  dappend N   N more rows, then Dataset.flush() only       "dflushed TOTAL"
              (publishes in SWMR-write mode: h5py's SWMR idiom)
  start_swmr  File.swmr_mode = True                        "swmr started"
  groups N    N more groups /groups/gK (attribute n = K), File.flush()
                                                           "flushed groups TOTAL"
  top N       N more top-level groups /tK (attribute n = K, dataset v = [K, K+1, K+2]),
              File.flush()                                 "flushed top TOTAL"
  tick        vfdswmr.end_tick                             "ticked"
  status      vfdswmr.status   "status state=S tick=T writer_tick=W lag=L writer=0|1"
  driver      "driver NAME h5py=NAME" (vfdswmr.driver, h5py's File.driver)
  close       File.close()                                 "closed"

End of input closes too. A failing command answers "failed: REASON" (traceback on
stderr); exit status 3 then, 1 when the file could not be created.
"""
import sys
import traceback

import numpy as np
import vfdswmr

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from swmrtest import row_value, serve  # noqa: E402


def main():
    path, config = sys.argv[1], sys.argv[2]
    try:
        f = vfdswmr.File(path, "w", config=config, libver="latest")
        rows = f.create_dataset("rows", shape=(0,), maxshape=(None,), chunks=(256,), dtype="<i8", fillvalue=0)
        groups = f.create_group("groups")
        f.flush()
    except Exception:
        traceback.print_exc()
        return 1
    count = {"groups": 0, "top": 0}
    print("ready 0", flush=True)

    def append(n):
        total = rows.shape[0]
        rows.resize((total + n,))
        rows[total:] = np.array([row_value(i) for i in range(total, total + n)], dtype="<i8")
        return total + n

    def handle(cmd):
        if cmd[0] == "append":
            total = append(int(cmd[1]))
            f.flush()
            return "flushed %d" % total
        if cmd[0] == "dappend":
            total = append(int(cmd[1]))
            rows.flush()
            return "dflushed %d" % total
        if cmd[0] == "start_swmr":
            f.swmr_mode = True
            return "swmr started"
        if cmd[0] == "groups":
            for _ in range(int(cmd[1])):
                k = count["groups"]
                groups.create_group("g%d" % k).attrs["n"] = np.int64(k)
                count["groups"] = k + 1
            f.flush()
            return "flushed groups %d" % count["groups"]
        if cmd[0] == "top":
            for _ in range(int(cmd[1])):
                k = count["top"]
                g = f.create_group("t%d" % k)
                g.attrs["n"] = np.int64(k)
                g.create_dataset("v", data=np.arange(k, k + 3, dtype="<i8"))
                count["top"] = k + 1
            f.flush()
            return "flushed top %d" % count["top"]
        if cmd[0] == "tick":
            vfdswmr.end_tick(f)
            return "ticked"
        return None

    return serve("pywriter", f, handle, "close")


if __name__ == "__main__":
    sys.exit(main())
