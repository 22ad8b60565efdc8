#!/usr/bin/env python3
# What the crash-safety clients (CrashSafetyTests) import: deterministic contents, the
# operation log, and reads chunk by chunk with O_DIRECT (one chunk per request: a torn chunk
# fails alone).
import errno, hashlib, mmap, os, struct

CHUNK = 4096
CLASS = "user.protfs.class"

def payload(seed, size):
    return hashlib.shake_128(struct.pack("<Q", seed)).digest(size)

def apply(data, op):
    """A write is ["write", offset, size, seed, bytes written]: the kernel splits a write
    at the end of a partial first page into several requests, so a crash between them
    leaves a short write, and the caller is told so."""
    if op[0] == "write":
        _, offset, size, seed, written = op
        grown = data.ljust(offset + written, b"\0")
        return grown[:offset] + payload(seed, size)[:written] + grown[offset + written:]
    return data[:op[1]].ljust(op[1], b"\0")

def chunks(path):
    """Each chunk of the file as bytes, or "EIO"; read one request per chunk."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    size = os.fstat(fd).st_size
    buffer = mmap.mmap(-1, CHUNK)
    found = []
    for offset in range(0, size, CHUNK):
        try:
            count = os.preadv(fd, [buffer], offset)
            found.append(bytes(buffer[:count]))
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            found.append("EIO")
    os.close(fd)
    return size, found
