"""Serves a syslog socket: every datagram sent to SOCKET becomes a line of LOG.

Usage: syslog-listener.py SOCKET LOG (until killed). with-private-syslog.sh starts it.
"""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
server.bind(path)
os.chmod(path, 0o666)
with open(log, "ab", buffering=0) as out:
    while True:
        message = server.recv(65536)
        out.write(message.rstrip(b"\0\n") + b"\n")
