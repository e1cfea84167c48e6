"""An h5py writer and an h5py reader on one live
file through the drivers: every row and group checked, delays measured (rounds.py)."""
import swmrtest

swmrtest.need_h5py()
import rounds  # noqa: E402

rounds.run("py", "py", "h5py_to_h5py")
swmrtest.finish()
