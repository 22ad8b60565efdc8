#!/usr/bin/env python3
# Usage: direct-writes-beside-buffered-readers.py MOUNT [SECONDS]. One process writes
# generation after generation over a file with asynchronous O_DIRECT writes (Linux AIO,
# io_submit; every 8-byte word of generation g holds g) while buffered readers read random
# 16 KiB ranges: a read that starts after generation g's write completed must see no word
# older than g, and so must the writer's own buffered read of the whole file right after
# (the idea of a conformance suite's direct-I/O invalidation test). The kernel drops cached
# pages before an asynchronous direct write is sent but not after it completes, so a read
# racing the write can cache the old bytes. Prints the first stale read and exits 1.
import ctypes, mmap, multiprocessing, os, random, struct, sys, time

os.chdir(sys.argv[1])
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
SIZE, RANGE, READERS = 256 * 1024, 16 * 1024, 3

def words(generation, count):
    return struct.pack("<Q", generation) * (count // 8)

libc = ctypes.CDLL(None, use_errno=True)
SYS_IO_SETUP, SYS_IO_SUBMIT, SYS_IO_GETEVENTS, IOCB_CMD_PWRITE = 206, 209, 208, 1  # x86_64

class IOCB(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("key", ctypes.c_uint32), ("rw_flags", ctypes.c_int32),
                ("opcode", ctypes.c_uint16), ("reqprio", ctypes.c_int16), ("fildes", ctypes.c_uint32),
                ("buf", ctypes.c_uint64), ("nbytes", ctypes.c_uint64), ("offset", ctypes.c_int64),
                ("reserved2", ctypes.c_uint64), ("flags", ctypes.c_uint32), ("resfd", ctypes.c_uint32)]

class Event(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("obj", ctypes.c_uint64), ("res", ctypes.c_int64), ("res2", ctypes.c_int64)]

def syscall(number, *arguments):
    result = libc.syscall(ctypes.c_long(number), *arguments)
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result

def direct_write(context, fd, buffer, offset):
    """One asynchronous O_DIRECT write, submitted and waited for."""
    iocb = IOCB(opcode=IOCB_CMD_PWRITE, fildes=fd, buf=ctypes.addressof(buffer), nbytes=len(buffer), offset=offset)
    pointers = (ctypes.POINTER(IOCB) * 1)(ctypes.pointer(iocb))
    assert syscall(SYS_IO_SUBMIT, context, ctypes.c_long(1), pointers) == 1
    event = Event()
    assert syscall(SYS_IO_GETEVENTS, context, ctypes.c_long(1), ctypes.c_long(1), ctypes.byref(event), None) == 1
    assert event.res == len(buffer), "direct write: %d" % event.res

def writer(published, stop, failures):
    fd = os.open("f", os.O_RDWR | os.O_DIRECT)
    checker = os.open("f", os.O_RDONLY)
    context = ctypes.c_ulong(0)
    syscall(SYS_IO_SETUP, ctypes.c_long(8), ctypes.byref(context))
    memory = mmap.mmap(-1, SIZE)
    buffer = (ctypes.c_char * SIZE).from_buffer(memory)
    generation = 1
    while not stop.value:
        generation += 1
        memory.seek(0)
        memory.write(words(generation, SIZE))
        direct_write(context, fd, buffer, 0)
        published.value = generation
        oldest = min(struct.unpack("<%dQ" % (SIZE // 8), os.pread(checker, SIZE, 0)))
        if oldest < generation:
            with failures.get_lock():
                if failures.value == 0:
                    print("stale read by the writer: generation %d after %d was written" % (oldest, generation), flush=True)
                failures.value += 1
            stop.value = 1
    del buffer
    os.close(checker)
    os.close(fd)

def reader(seed, published, stop, failures):
    rng = random.Random(seed)
    fd = os.open("f", os.O_RDONLY)
    while not stop.value:
        offset = rng.randrange(0, SIZE - RANGE + 1, 4096)
        before = published.value
        data = os.pread(fd, RANGE, offset)
        oldest = min(struct.unpack("<%dQ" % (RANGE // 8), data))
        if oldest < before:
            with failures.get_lock():
                if failures.value == 0:
                    print("stale read at %d: generation %d after %d was written" % (offset, oldest, before), flush=True)
                failures.value += 1
            stop.value = 1
    os.close(fd)

with open("f", "wb") as f:
    f.write(words(1, SIZE))
published = multiprocessing.Value(ctypes.c_ulonglong, 1, lock=False)
stop = multiprocessing.Value(ctypes.c_int, 0, lock=False)
failures = multiprocessing.Value(ctypes.c_int, 0)
processes = [multiprocessing.Process(target=writer, args=(published, stop, failures))]
processes += [multiprocessing.Process(target=reader, args=(seed, published, stop, failures)) for seed in range(READERS)]
for process in processes:
    process.start()
deadline = time.monotonic() + seconds
while time.monotonic() < deadline and not stop.value:
    time.sleep(0.05)
stop.value = 1
for process in processes:
    process.join(30)
assert all(process.exitcode == 0 for process in processes), [process.exitcode for process in processes]
print("%d generations written, %d stale reads" % (published.value - 1, failures.value))
sys.exit(1 if failures.value else 0)
