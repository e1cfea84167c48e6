"""An h5py writer (pywriter.py, vfdswmr.File) and a C reader (tests/progs/rowreader) on one live
file through the drivers: every row and group checked, delays measured (rounds.py)."""
import swmrtest

swmrtest.need_h5py()
import rounds  # noqa: E402

rounds.run("py", "c", "h5py_to_c")
swmrtest.finish()
