"""A C writer (tests/progs/rowwriter) and an h5py reader (pyreader.py, vfdswmr.File) on one live
file through the drivers: every row and group checked, delays measured (rounds.py)."""
import swmrtest

swmrtest.need_h5py()
import rounds  # noqa: E402

rounds.run("c", "py", "c_to_h5py")
swmrtest.finish()
