#!/usr/bin/env python3
"""A systemd password agent that answers one question: it watches
/run/systemd/ask-password with inotify (as real agents do, which is how protfs knows an
agent is there), creates the file argv[4] once it watches, waits for an ask.* file whose
Id= is argv[1], sends "+" and the first line of the file argv[2] to the question's Socket=
as one datagram (systemd's agent protocol), prints the question's Message= and exits 0;
exit 1 when none comes within argv[3] seconds."""
import configparser
import ctypes
import glob
import os
import select
import socket
import sys
import time

IN_CLOSE_WRITE, IN_MOVED_TO, IN_CLOEXEC = 0x8, 0x80, 0o2000000
QUESTIONS = "/run/systemd/ask-password"

wanted, passcode_file, seconds, watching = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
with open(passcode_file, "rb") as f:
    passcode = f.readline().rstrip(b"\n")
os.makedirs(QUESTIONS, exist_ok=True)
libc = ctypes.CDLL(None, use_errno=True)
inotify = libc.inotify_init1(IN_CLOEXEC)
if inotify < 0 or libc.inotify_add_watch(inotify, QUESTIONS.encode(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0:
    sys.exit(f"cannot watch {QUESTIONS}: {os.strerror(ctypes.get_errno())}")
open(watching, "w").close()
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    for path in glob.glob(QUESTIONS + "/ask.*"):
        question = configparser.ConfigParser(interpolation=None)
        try:
            question.read(path)
            ask = question["Ask"]
        except (configparser.Error, KeyError, OSError):
            continue  # being written, or gone
        if ask.get("Id") != wanted:
            continue
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as reply:
            reply.sendto(b"+" + passcode, ask["Socket"])
        print(ask.get("Message"))
        sys.exit(0)
    if select.select([inotify], [], [], 0.2)[0]:
        os.read(inotify, 4096)
sys.exit(f"no question with Id={wanted} within {seconds} s")
