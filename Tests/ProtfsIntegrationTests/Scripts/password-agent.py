#!/usr/bin/env python3
"""A systemd password agent that answers one question: it watches
/run/systemd/ask-password for an ask.* file whose Id= is argv[1], sends "+" and the first
line of the file argv[2] to the question's Socket= as one datagram (systemd's agent
protocol), prints the question's Message= and exits 0; exit 1 when none comes within
argv[3] seconds."""
import configparser
import glob
import socket
import sys
import time

wanted, passcode_file, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(passcode_file, "rb") as f:
    passcode = f.readline().rstrip(b"\n")
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    for path in glob.glob("/run/systemd/ask-password/ask.*"):
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
    time.sleep(0.05)
sys.exit(f"no question with Id={wanted} within {seconds} s")
