#!/usr/bin/env python3
# System calls Python's os module does not offer as the hostile-request clients
# (HostileRequestTests) need them: fallocate with a mode, getxattr and listxattr into a buffer
# of a given size, and one getdents64 call.
import ctypes, struct

from call_checks import libc

def fallocate(fd, mode, offset, length):
    if libc.fallocate(fd, mode, ctypes.c_long(offset), ctypes.c_long(length)) != 0:
        raise OSError(ctypes.get_errno(), "fallocate")

def getxattr_sized(path, name, size):
    buffer = ctypes.create_string_buffer(max(size, 1))
    n = libc.getxattr(path.encode() if isinstance(path, str) else path, name, buffer if size else None, ctypes.c_size_t(size))
    if n < 0:
        raise OSError(ctypes.get_errno(), "getxattr")
    return n

def getdents(directory):
    # The names of one getdents64 call at the descriptor's offset.
    buffer = ctypes.create_string_buffer(65536)
    n = libc.syscall(217, directory, buffer, ctypes.c_size_t(65536))
    if n < 0:
        raise OSError(ctypes.get_errno(), "getdents64")
    names, at = [], 0
    while at < n:
        length = struct.unpack_from("<H", buffer.raw, at + 16)[0]
        names.append(buffer.raw[at + 19:at + length].split(b"\0")[0])
        at += length
    return names

def listxattr_sized(path, size):
    buffer = ctypes.create_string_buffer(max(size, 1))
    n = libc.listxattr(path.encode(), buffer if size else None, ctypes.c_size_t(size))
    if n < 0:
        raise OSError(ctypes.get_errno(), "listxattr")
    return n
