# name_to_handle_at(2) is refused with EOPNOTSUPP: protfs has no file handles that outlive
# the kernel's memory of a node (they used to go stale, ESTALE, for files still there).
import ctypes, errno, os

libc = ctypes.CDLL(None, use_errno=True)

class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int), ("f_handle", ctypes.c_ubyte * 128)]

with open("handled", "w") as f:
    f.write("still here\n")
os.mkdir("handled-dir")
AT_FDCWD = -100
for name in (b"handled", b"handled-dir", b"."):
    handle = FileHandle(handle_bytes=128)
    mount_id = ctypes.c_int()
    result = libc.name_to_handle_at(AT_FDCWD, name, ctypes.byref(handle), ctypes.byref(mount_id), 0)
    error = ctypes.get_errno()
    assert result == -1 and error == errno.EOPNOTSUPP, \
        "name_to_handle_at(%s): %d, %s" % (name.decode(), result, errno.errorcode.get(error))
